"""Dynamic axes from concrete captures.

A captured graph has concrete shapes. To export an axis as dynamic, the model is captured
several times: once at the example sizes, once per dynamic axis with only that axis resized,
and once more with every dynamic axis resized again (validation). The exports must then agree
in everything but their int vectors (shape targets, slice bounds, counts). Each int entry that
changes is fitted as ``c + sum(a_s * size_s)`` from the one-axis captures, and the fit must
predict the validation capture exactly; it is then written as ``Shape``/``Gather``/``Mul``/
``Add`` of the graph inputs. A reshape target with one entry that fits no such formula (a
product of two dynamic sizes) is written as -1. Anything else that changes with a dynamic size
(a constant tensor, a float scale such as a mean over the dynamic axis, an attribute, the
graph's structure) is refused with an error naming it: the graph would be wrong at other
sizes.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ._builder import Builder, OnnxNode

__all__ = ["DynamicError", "fit", "materialize"]


class DynamicError(ValueError):
    """The model's graph depends on a dynamic axis in a way ONNX shapes cannot express."""


Expr = tuple[int, dict[str, int]]   # c, {symbol: a}


def _describe_diff(builders: list[Builder]) -> str:
    a, b = builders[0], builders[1]
    for k, (x, y) in enumerate(zip(a.nodes, b.nodes)):
        if x != y:
            where = a.origin.get(k, "")
            return (f"ONNX node {k} ({x.op_type}{', from ' + where if where else ''}) differs "
                    f"({x.op_type}{list(x.attrs)} vs {y.op_type}{list(y.attrs)})")
    if len(a.nodes) != len(b.nodes):
        return f"the graphs have {len(a.nodes)} and {len(b.nodes)} ONNX nodes"
    return "their constants or inputs differ"


def _fit_ints(vals: list[int], sizes: list[dict[str, int]], syms: list[str]) -> Expr | None:
    """``c + sum(a_s * size_s)`` through the one-axis captures, checked on the rest."""
    v0 = vals[0]
    coef: dict[str, int] = {}
    for k, s in enumerate(syms, 1):
        dv, ds = vals[k] - v0, sizes[k][s] - sizes[0][s]
        if dv % ds:
            return None
        if dv:
            coef[s] = dv // ds
    c = v0 - sum(a * sizes[0][s] for s, a in coef.items())
    for j in range(len(syms) + 1, len(vals)):
        if c + sum(a * sizes[j][s] for s, a in coef.items()) != vals[j]:
            return None
    return c, coef


def _scalar_fit(arrs: list[np.ndarray], sizes: list[dict[str, int]],
                syms: list[str]) -> tuple | None:
    """``("scalar", expr, reciprocal, dtype, shape)`` when every capture's one-element
    constant is an integer count (or one over it) that fits the sizes."""
    vals = [float(a.reshape(-1)[0]) for a in arrs]
    for recip in (False, True):
        ks = [(1.0 / v if recip and v else v) for v in vals]
        if all(np.isfinite(k) and abs(k - round(k)) <= 1e-4 * max(1.0, abs(k)) for k in ks):
            e = _fit_ints([int(round(k)) for k in ks], sizes, syms)
            if e is not None and e[1]:
                return ("scalar", e, recip, arrs[0].dtype, arrs[0].shape)
    return None


def fit(builders: list[Builder], sizes: list[dict[str, int]]) -> dict[str, Any]:
    """Fit every int vector of ``builders[0]``. ``sizes[j]`` are the dynamic sizes of
    capture j: j = 0 the base, 1..k one symbol each changed, k+1 all changed (validation).
    Returns ``{int name: np.ndarray (static) | list[Expr | None] (None: -1)}``."""
    base = builders[0]
    syms = list(sizes[0])
    varying: set[str] = set()
    for j, bj in enumerate(builders[1:], 1):
        if bj.signature() != base.signature():
            raise DynamicError(
                "omnitensor.onnx.export: the model's graph changes with the size of a dynamic "
                f"axis (captured at sizes {sizes[0]} and {sizes[j]}: "
                f"{_describe_diff([base, bj])}). Shape-dependent Python control flow cannot "
                f"be exported with dynamic_axes; export at a fixed size instead")
        for name, arr in base.consts.items():
            other = bj.consts[name]
            if arr.shape != other.shape or not np.array_equal(arr, other, equal_nan=True):
                varying.add(name)
    result: dict[str, Any] = {}
    for name in sorted(varying):
        # a one-element constant that is a count (or its reciprocal): a mean over a
        # dynamic axis divides by its size; written as Cast(size arithmetic)
        arrs = [b.consts[name] for b in builders]
        entry = _scalar_fit(arrs, sizes, syms) if base.consts[name].size == 1 else None
        if entry is None:
            users = [base.origin.get(k, n.op_type) for k, n in enumerate(base.nodes)
                     if name in n.inputs]
            raise DynamicError(
                f"omnitensor.onnx.export: a constant used by {users[0] if users else '?'} "
                f"changes with the size of a dynamic axis (e.g. a mask built for one length, "
                f"or a scale that is not a count); this model cannot be exported with these "
                f"dynamic_axes")
        result[name] = entry
    for name, vec in base.ints.items():
        vals = [b.ints[name].values for b in builders]
        if all(v == vals[0] for v in vals):
            result[name] = np.asarray(vals[0], dtype=np.int64)
            continue
        entries: list[Expr | None] = []
        bad = []
        for p in range(len(vec.values)):
            e = _fit_ints([v[p] for v in vals], sizes, syms)
            entries.append(e)
            if e is None:
                bad.append(p)
        if bad and not (vec.role == "reshape" and len(bad) == 1):
            users = [base.origin.get(k, n.op_type) for k, n in enumerate(base.nodes)
                     if name in n.inputs]
            raise DynamicError(
                f"omnitensor.onnx.export: a size used by {users[0] if users else '?'} depends "
                f"on the dynamic axes in a way that is not linear in them "
                f"({[v[bad[0]] for v in vals]} at sizes {sizes}); export at a fixed size")
        result[name] = entries
    return result


def materialize(base: Builder, fitted: dict[str, Any],
                sources: dict[str, tuple[str, int]]) -> tuple[list[OnnxNode], dict]:
    """ONNX nodes computing every dynamic int vector from the inputs' shapes (to run
    first), and the static ones as initializers. ``sources[symbol] = (input, axis)``."""
    g = _ShapeGraph(sources)
    for name, f in fitted.items():
        if isinstance(f, tuple) and f[0] == "scalar":
            g.scalar(name, f)
            continue
        vec = base.ints[name]
        if isinstance(f, np.ndarray):
            g.consts[name] = f.reshape(()) if vec.scalar else f
        else:
            g.vector(name, f, vec.scalar)
    return g.nodes, g.consts


class _ShapeGraph:
    """ONNX nodes computing integers affine in the inputs' dynamic dimensions."""

    def __init__(self, sources: dict[str, tuple[str, int]]) -> None:
        self.sources = sources
        self.nodes: list[OnnxNode] = []
        self.consts: dict[str, np.ndarray] = {}
        self.count = 0
        self.dims: dict[str, str] = {}    # symbol -> the value holding its size
        self.shapes: dict[str, str] = {}  # input -> the value holding its Shape

    def tmp(self) -> str:
        self.count += 1
        return f"dyn{self.count}"

    def const(self, arr: Any) -> str:
        nm = self.tmp()
        self.consts[nm] = np.asarray(arr, dtype=np.int64)
        return nm

    def node(self, op: str, ins: tuple, out: str, attrs: tuple = ()) -> str:
        self.nodes.append(OnnxNode(op, ins, (out,), attrs))
        return out

    def dim(self, sym: str) -> str:
        if sym not in self.dims:
            inp, axis = self.sources[sym]
            if inp not in self.shapes:
                self.shapes[inp] = self.node("Shape", (inp,), self.tmp())
            self.dims[sym] = self.node("Gather", (self.shapes[inp], self.const([axis])),
                                       self.tmp(), (("axis", 0),))
        return self.dims[sym]

    def expr(self, c: int, coef: dict[str, int]) -> str:
        """``c + sum(a * dim(s))``, a one-element int64 vector."""
        acc = None
        for s, a in sorted(coef.items()):
            t = self.dim(s)
            if a != 1:
                t = self.node("Mul", (t, self.const([a])), self.tmp())
            acc = t if acc is None else self.node("Add", (acc, t), self.tmp())
        if acc is None:
            return self.const([c])
        if c:
            acc = self.node("Add", (acc, self.const([c])), self.tmp())
        return acc

    def scalar(self, name: str, f: tuple) -> None:
        """A scalar constant of the graph (possibly a reciprocal) that varies with sizes."""
        from onnx import helper
        _, (c, coef), recip, dtype, shape = f
        to = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        cast = self.node("Cast", (self.expr(c, coef),), self.tmp(), (("to", to),))
        shaped = self.node("Reshape", (cast, self.const(list(shape))),
                           self.tmp() if recip else name)
        if recip:
            self.node("Reciprocal", (shaped,), name)

    def vector(self, name: str, f: Any, scalar: bool) -> None:
        """An int vector (a shape, say) whose entries are static, -1 or affine in sizes."""
        pieces, static = [], []
        for e in f:
            if e is not None and not e[1]:
                static.append(e[0])
                continue
            if static:
                pieces.append(self.const(static))
                static = []
            pieces.append(self.const([-1]) if e is None else self.expr(*e))
        if static:
            pieces.append(self.const(static))
        out = name if not scalar else self.tmp()
        if len(pieces) == 1:
            self.node("Identity", (pieces[0],), out)
        else:
            self.node("Concat", tuple(pieces), out, (("axis", 0),))
        if scalar:
            self.node("Squeeze", (out,), name)


def dim_label(values: list[int], sizes: list[dict[str, int]]) -> Any:
    """An output dimension: its size when every capture agrees, else a ``dim_param`` name
    (the symbol when it equals one, else a formula)."""
    if all(v == values[0] for v in values):
        return int(values[0])
    for s in sizes[0]:
        if all(v == sz[s] for v, sz in zip(values, sizes)):
            return s
    return "?"
