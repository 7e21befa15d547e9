"""The ONNX-level record one export pass produces from one captured graph.

A :class:`Builder` collects ONNX nodes, initializers and *int vectors* (shape targets, slice
bounds, pads, ...) under names given in emission order, so two captures of the same model at
different sizes give two builders that line up entry by entry. :mod:`._dynamic` compares them
to turn the int entries that change with a dynamic axis into ``Shape``-arithmetic; this
module knows nothing of that: it only records.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Builder", "OnnxNode", "IntVec", "INT64_MAX", "INT64_MIN"]

INT64_MAX = 2 ** 63 - 1
INT64_MIN = -(2 ** 63)


@dataclass(frozen=True)
class OnnxNode:
    op_type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: tuple[tuple[str, Any], ...]   # sorted (name, value): comparable across builders


@dataclass
class IntVec:
    """A 1-D int64 vector input of a node (a shape, slice bounds, pads, a count).
    ``role`` says how a failed fit may still be written: ``"reshape"`` allows one -1."""

    values: tuple[int, ...]
    role: str = ""
    scalar: bool = False          # consumed as a 0-d tensor (Range bounds, TopK k is 1-D)


@dataclass
class Builder:
    """One export pass's ONNX nodes, initializers, int vectors, inputs and outputs."""

    nodes: list[OnnxNode] = field(default_factory=list)
    consts: dict[str, np.ndarray] = field(default_factory=dict)   # small constants, weights
    params: dict[str, np.ndarray] = field(default_factory=dict)   # named initializers
    ints: dict[str, IntVec] = field(default_factory=dict)
    inputs: list[tuple[str, str, tuple[int, ...]]] = field(default_factory=list)
    outputs: list[tuple[str, str, tuple[int, ...]]] = field(default_factory=list)
    #: node index -> where it came from ("linear in layer 'fc1' (Linear)"): error messages
    origin: dict[int, str] = field(default_factory=dict)
    _n: int = 0

    def fresh(self, prefix: str = "t") -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    def op(self, op_type: str, inputs: list[str] | tuple[str, ...], n_out: int = 1,
           **attrs: Any) -> Any:
        """Append a node; returns its output name (a tuple of names when ``n_out > 1``)."""
        outs = tuple(self.fresh() for _ in range(n_out))
        self.nodes.append(OnnxNode(op_type, tuple(inputs), outs,
                                   tuple(sorted((k, v) for k, v in attrs.items()
                                                if v is not None))))
        return outs[0] if n_out == 1 else outs

    def const(self, value: Any, dtype: Any = None) -> str:
        """A constant initializer. Not deduplicated by value: a constant that changes with a
        dynamic size (a mean's count) must keep its own name in every capture."""
        arr = np.asarray(value, dtype=dtype)
        name = self.fresh("c")
        self.consts[name] = arr
        return name

    def param(self, name: str, arr: np.ndarray) -> str:
        self.params[name] = arr
        return name

    def intvec(self, values: Any, role: str = "", scalar: bool = False) -> str:
        """A 1-D int64 input (0-d when ``scalar``) whose entries may depend on the size of
        a dynamic axis; :mod:`._dynamic` decides."""
        name = self.fresh("s")
        self.ints[name] = IntVec(tuple(int(v) for v in values), role, scalar)
        return name

    def signature(self) -> tuple:
        """Everything that must be equal between the captures of one model."""
        return (tuple(self.nodes), tuple(sorted(self.params)), tuple(sorted(self.consts)),
                tuple((k, len(v.values), v.role, v.scalar) for k, v in self.ints.items()),
                tuple(i[:2] for i in self.inputs), tuple(o[:2] for o in self.outputs))
