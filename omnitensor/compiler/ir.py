"""The capture IR: one graph of backend primitives shared by compile, fusion, jit and onnx.

A :class:`Graph` is what one call of a function ran on its device, recorded below autograd
(forward, backward and optimizer updates alike), as a list of :class:`Node` s in execution
order. Each node is one call of a backend primitive; its semantics are the docstring of
that primitive in ``omnitensor/backends/base.py`` (``"add"`` is ``Backend.add``,
``"hook:einsum"`` is the optional hook ``einsum``). Two ops are the capture's own:

* ``"check"``: ``args = (flag,)``, a 0-d bool Value that must be True; ``kwargs["what"]``
  names the validation (``cross_entropy``'s target range), ``kwargs["error"]`` (absent for
  ``RuntimeError``) the exception eager code raised, one of :data:`CHECK_ERRORS`. Replay
  reads the flag (one sync) and raises that exception when it is False (:func:`check_error`).
* ``"random_bits"`` nodes carry ``kwargs["generator"] = "default"`` (or ``"arg"`` for a
  user's :class:`~omnitensor.Generator`): replay draws a fresh ``(key, counter)`` from that
  generator, exactly as the eager call would have, instead of the recorded constants.

Values are SSA: a primitive writing into an existing buffer (``out=``, ``assign``,
``scatter_nd``, the ``index_put``/``index_add`` hooks) yields a fresh Value whose node names
the overwritten Value in ``inplace_of``. Views (:data:`VIEW_OPS`) share memory with their
input, so a write into a view also changes its base: a planner that reorders or fuses across
a write into a Value produced by a view op must treat the base as written too.

Everything in a graph is JSON-able (:meth:`Graph.to_json`) except the host arrays that
``from_numpy`` nodes and ``"const"`` inputs carry (``Graph.constants`` maps their Value ids to
NumPy copies).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..errors import IndexOutOfRangeError

__all__ = ["Value", "Node", "Region", "Input", "Graph", "DTypeName", "VIEW_OPS",
           "INPLACE_OPS", "IR_OPS", "CHECK_ERRORS", "check_error", "state_writes"]

#: Primitives whose result may be a view of their first operand.
VIEW_OPS = frozenset(("reshape", "permute", "broadcast_to", "index", "flip", "diagonal",
                      "contiguous"))
#: Primitives that write into their first operand (and return None).
INPLACE_OPS = frozenset(("assign", "assign_from_host", "scatter_nd",
                         "hook:index_put_advanced", "hook:index_add_advanced"))
#: Ops that are not backend primitives (the capture's own; see the module docstring).
IR_OPS = frozenset(("check",))
#: the exceptions a ``check`` node may raise, by the name its ``kwargs["error"]`` holds
CHECK_ERRORS: dict[str, type[Exception]] = {
    e.__name__: e for e in (RuntimeError, IndexError, IndexOutOfRangeError, ValueError)}


def check_error(kwargs: dict) -> type[Exception]:
    """The exception a failing ``check`` node with ``kwargs`` raises (eager's)."""
    return CHECK_ERRORS.get(kwargs.get("error", "RuntimeError"), RuntimeError)


class DTypeName(str):
    """A dtype argument of a primitive (``astype(x, dtype)``, ``full(..., dtype, index)``),
    stored as its NumPy name (JSON-able); replay turns it back into the ``numpy.dtype``."""

    __slots__ = ()


@dataclass(frozen=True)
class Value:
    """One SSA value: a backend array produced or read by the graph."""

    id: int
    shape: tuple[int, ...]
    dtype: str


@dataclass
class Node:
    """One primitive call. ``args``/``kwargs`` hold Values or constants (int, float, bool,
    None, str, slices, tuples/lists of them, :class:`DTypeName`); ``out=`` is recorded as
    ``kwargs["out"]`` = the buffer's Value."""

    op: str
    args: tuple
    kwargs: dict
    outputs: tuple[Value, ...]
    inplace_of: Value | None = None
    region: int | None = None
    #: the device the primitive ran on when it is not the graph's (a 0-d cpu operand)
    device: str | None = None


@dataclass
class Region:
    """A composite call (``capture_hooks.composite``) and the nodes it ran."""

    id: int
    name: str
    attrs: dict
    inputs: tuple[Value | None, ...]
    outputs: tuple[Value, ...]
    parent: int | None


@dataclass
class Input:
    """An array the graph reads but did not produce. ``kind``: ``"arg"`` (a call argument),
    ``"param"``, ``"buffer"``, ``"state"`` (optimizer state, gradients), ``"const"`` (a
    tensor no guard tracks: replay reads the array the capture saw)."""

    value: Value
    kind: str
    name: str


@dataclass
class Graph:
    device: str
    inputs: list[Input]
    nodes: list[Node]
    outputs: list[Value]
    state_writes: list[tuple[Value, Value]]
    regions: dict[int, Region]
    #: host (NumPy) arrays of ``"const"`` inputs and ``from_numpy`` arguments, by Value id
    constants: dict[int, Any] = field(default_factory=dict)
    #: why the call cannot be replayed from this graph alone (host reads, data-dependent
    #: shapes, each with the user's file:line); empty when the graph is the whole call
    breaks: list[str] = field(default_factory=list)
    #: the innermost region id of each break (None outside regions), parallel to ``breaks``
    break_regions: list[int | None] = field(default_factory=list)
    #: the backend array each input had during the capture, by Value id (weights for
    #: exporters; not serialized)
    input_arrays: dict[int, Any] = field(default_factory=dict, repr=False)

    def pretty(self) -> str:
        """A readable listing (one line per input, node and output)."""
        def show(a: Any) -> str:
            if isinstance(a, Value):
                return f"%{a.id}"
            if isinstance(a, tuple):
                return "(" + ", ".join(show(x) for x in a) + ("," if len(a) == 1 else "") + ")"
            if isinstance(a, list):
                return "[" + ", ".join(show(x) for x in a) + "]"
            return repr(a) if not isinstance(a, DTypeName) else str(a)

        lines = [f"graph on {self.device}: {len(self.inputs)} inputs, {len(self.nodes)} "
                 f"nodes"]
        for i in self.inputs:
            v = i.value
            lines.append(f"  %{v.id}: {v.dtype}{list(v.shape)} = input {i.kind} {i.name}")
        for n in self.nodes:
            outs = ", ".join(f"%{v.id}: {v.dtype}{list(v.shape)}" for v in n.outputs) or "_"
            args = ", ".join([show(a) for a in n.args] +
                             [f"{k}={show(v)}" for k, v in n.kwargs.items()])
            extra = f"  (writes %{n.inplace_of.id})" if n.inplace_of is not None else ""
            where = f" @{n.device}" if n.device else ""
            reg = f"  [{self.regions[n.region].name}]" if n.region is not None else ""
            lines.append(f"  {outs} = {n.op}{where}({args}){extra}{reg}")
        lines.append("  return " + ", ".join(f"%{v.id}" for v in self.outputs))
        for dst, src in self.state_writes:
            lines.append(f"  state %{dst.id} <- %{src.id}")
        return "\n".join(lines)

    # ------------------------------------------------------------------ serialization
    def to_json(self) -> str:
        """The graph as JSON (constants' host arrays as nested lists)."""
        return json.dumps(_encode(self))

    @staticmethod
    def from_json(text: str) -> "Graph":
        return _decode(json.loads(text))


def _enc(a: Any) -> Any:
    if isinstance(a, Value):
        return {"$v": [a.id, list(a.shape), a.dtype]}
    if isinstance(a, DTypeName):
        return {"$dtype": str(a)}
    if isinstance(a, tuple):
        return {"$t": [_enc(x) for x in a]}
    if isinstance(a, list):
        return [_enc(x) for x in a]
    if isinstance(a, slice):
        return {"$s": [a.start, a.stop, a.step]}
    if isinstance(a, complex):
        return {"$c": [a.real, a.imag]}
    if isinstance(a, dict):
        return {"$d": {k: _enc(v) for k, v in a.items()}}
    return a


def _dec(a: Any) -> Any:
    if isinstance(a, list):
        return [_dec(x) for x in a]
    if isinstance(a, dict):
        if "$v" in a:
            i, s, d = a["$v"]
            return Value(i, tuple(s), d)
        if "$dtype" in a:
            return DTypeName(a["$dtype"])
        if "$t" in a:
            return tuple(_dec(x) for x in a["$t"])
        if "$s" in a:
            return slice(*a["$s"])
        if "$c" in a:
            return complex(*a["$c"])
        if "$d" in a:
            return {k: _dec(v) for k, v in a["$d"].items()}
    return a


def _encode(g: Graph) -> dict:
    return {
        "device": g.device,
        "inputs": [[_enc(i.value), i.kind, i.name] for i in g.inputs],
        "nodes": [[n.op, _enc(n.args), _enc(n.kwargs), _enc(n.outputs),
                   _enc(n.inplace_of), n.region, n.device] for n in g.nodes],
        "outputs": [_enc(v) for v in g.outputs],
        "state_writes": [[_enc(a), _enc(b)] for a, b in g.state_writes],
        "regions": [[r.id, r.name, _enc(r.attrs), _enc(r.inputs), _enc(r.outputs), r.parent]
                    for r in g.regions.values()],
        "constants": {str(k): [v.tolist(), str(v.dtype), list(v.shape)]
                      for k, v in g.constants.items()},
        "breaks": list(g.breaks),
        "break_regions": list(g.break_regions),
    }


def _decode(d: dict) -> Graph:
    import numpy as np

    def constant(k: str, row: Any) -> tuple[int, Any]:
        v, dt, s = row
        return int(k), np.asarray(v, dtype=dt).reshape(s)
    regions = _rows(d, "regions", lambda r: Region(
        _exactly(r, 6)[0], r[1], _dec(r[2]), _dec(r[3]), _dec(r[4]), r[5]))
    return Graph(
        device=d["device"],
        inputs=_rows(d, "inputs", lambda r: Input(_dec(r[0]), *_exactly(r, 3)[1:])),
        nodes=_rows(d, "nodes", lambda r: Node(
            r[0], _dec(r[1]), _dec(r[2]), _dec(r[3]), _dec(r[4]), *_exactly(r, 7)[5:])),
        outputs=_rows(d, "outputs", _dec),
        state_writes=_rows(d, "state_writes", lambda r: tuple(map(_dec, _exactly(r, 2)))),
        regions={r.id: r for r in regions},
        constants=dict(_rows({"constants": list(d["constants"].items())}, "constants",
                             lambda kv: constant(*kv))),
        breaks=list(d.get("breaks", [])),
        break_regions=list(d.get("break_regions", [])),
    )


class GraphFormatError(ValueError):
    """A graph document (``Graph.from_json``) of the wrong form; the message names the
    part."""


def _exactly(row: Any, n: int) -> list:
    if not isinstance(row, list) or len(row) != n:
        raise ValueError(f"expected a list of {n} fields, got {str(row)[:60]}")
    return row


def _rows(d: dict, field: str, decode: Any) -> list:
    """``decode`` of each row of ``d[field]``; a row of the wrong form is a ValueError
    naming it (a graph read from a file is data: its faults are named, not raised from
    inside the decoder)."""
    rows = d[field]
    if not isinstance(rows, list):
        raise GraphFormatError(f"graph {field} is not a list")
    out = []
    for i, row in enumerate(rows):
        try:
            out.append(decode(row))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
            raise GraphFormatError(f"graph {field}[{i}] is malformed ({type(e).__name__}: "
                             f"{str(e)[:120]})") from None
    return out


def state_writes(inputs: list[Value], nodes: list[Node]) -> list[tuple[Value, Value]]:
    """(input Value, its final Value) for every input buffer ``nodes`` write into."""
    root: dict[int, Value] = {v.id: v for v in inputs}
    final: dict[int, Value] = {}
    for n in nodes:
        if n.inplace_of is not None and n.inplace_of.id in root:
            r = root[n.inplace_of.id]
            for o in n.outputs:
                root[o.id] = r
                final[r.id] = o
    return [(root[k], v) for k, v in final.items()]
