"""Walk one captured :class:`~omnitensor.compiler.ir.Graph` into a :class:`._builder.Builder`.

A region with an ONNX mapping (``_regions.REGIONS``) becomes its ONNX node(s) when it is
self-contained: it reads only its own inputs (and constants), writes nothing outside itself
and nothing it computed escapes but its outputs. Every other node maps primitive by
primitive (``_prims.PRIMS``). A primitive with no mapping raises :class:`Unmappable` naming
the op, the composite it ran in and the user's layer.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ._builder import Builder
from ._prims import ALIASES, PRIMS
from ._regions import REGIONS, bind

__all__ = ["Emitter", "Unmappable"]

_VIEW_OPS = frozenset(("reshape", "permute", "broadcast_to", "index", "flip", "diagonal",
                       "contiguous"))

_HINTS = {
    "random_bits": "random numbers cannot be exported (dropout in training mode, "
                   "rand/randn in forward): call model.eval() or pass training=EVAL",
    "nonzero": "its output size depends on the data",
}


class Unmappable(NotImplementedError):
    """An op of the captured graph that has no ONNX mapping."""


def _values_in(a: Any, out: list) -> list:
    if hasattr(a, "id") and hasattr(a, "shape") and hasattr(a, "dtype"):
        out.append(a)
    elif isinstance(a, (tuple, list)):
        for x in a:
            _values_in(x, out)
    elif isinstance(a, dict):
        for x in a.values():
            _values_in(x, out)
    return out


class Emitter:
    """Emit ``graph`` into ``builder``. ``input_name(inp)`` gives the ONNX input name of an
    ``"arg"`` Input (None: not a user input), ``array_of(inp)`` the host array of a
    parameter, buffer or constant input, ``where(node_index)`` the user's layer."""

    def __init__(self, graph: Any, builder: Builder, opset: int,
                 input_name: Callable[[Any], str | None],
                 array_of: Callable[[Any], np.ndarray],
                 where: Callable[[int], str] = lambda i: "") -> None:
        self.g, self.b, self.opset = graph, builder, opset
        self.input_name, self.array_of, self.where = input_name, array_of, where
        self.env: dict[int, str] = {}
        self.done: set[int] = set()     # regions exported as their ONNX op(s)

    # ------------------------------------------------------------------ helpers
    def name(self, v: Any) -> str:
        if v.id not in self.env:
            raise Unmappable(f"omnitensor.onnx.export: internal: value %{v.id} is read "
                             f"before it is defined")
        return self.env[v.id]

    def np_dtype(self, name: str) -> np.dtype:
        if name == "bfloat16":
            import ml_dtypes
            return np.dtype(ml_dtypes.bfloat16)
        return np.dtype(name)

    def operand(self, a: Any, like: Any) -> str:
        """A Value's name, or a Python scalar as a 0-d constant of ``like``'s dtype."""
        if hasattr(a, "id"):
            return self.name(a)
        return self.b.const(np.asarray(a, dtype=self.np_dtype(like.dtype)))

    # ------------------------------------------------------------------ structure
    def _analyse(self) -> None:
        g = self.g
        self.chain: list[list[int]] = []     # per node: enclosing regions, outermost first
        parents = {rid: r.parent for rid, r in g.regions.items()}
        for n in g.nodes:
            c, r = [], n.region
            while r is not None:
                c.append(r)
                r = parents.get(r)
            self.chain.append(c[::-1])
        self.producer: dict[int, int] = {}
        self.reads: dict[int, list[int]] = {}
        for i, n in enumerate(g.nodes):
            for v in _values_in((n.args, n.kwargs), []):
                self.reads.setdefault(v.id, []).append(i)
            for v in n.outputs:
                self.producer[v.id] = i
        self.const_ids = {i.value.id for i in g.inputs if i.kind == "const"}
        self.out_ids = {v.id for v in g.outputs}

    def _self_contained(self, rid: int) -> bool:
        g = self.g
        region = g.regions[rid]
        members = [i for i, c in enumerate(self.chain) if rid in c]
        inside = set(members)
        produced = {v.id for i in members for v in g.nodes[i].outputs}
        ins = {v.id for v in region.inputs if v is not None}
        outs = {v.id for v in region.outputs}
        for i in members:
            n = g.nodes[i]
            if n.op == "random_bits":
                return False
            if n.inplace_of is not None and n.inplace_of.id not in produced:
                return False           # writes state outside itself (running statistics)
            for v in _values_in((n.args, n.kwargs), []):
                if v.id not in produced and v.id not in ins and v.id not in self.const_ids:
                    return False       # reads a tensor the binding does not know
        for vid in produced - outs:
            if vid in self.out_ids or any(j not in inside for j in self.reads.get(vid, ())):
                return False
        return True

    # ------------------------------------------------------------------ walk
    def run(self, output_names: list[str]) -> None:
        g, b = self.g, self.b
        self._analyse()
        for inp in g.inputs:
            v = inp.value
            if inp.kind == "arg":
                nm = self.input_name(inp)
                if nm is None:
                    raise Unmappable(f"omnitensor.onnx.export: input {inp.name} is not one "
                                     f"of the exported arguments")
                self.env[v.id] = nm
            elif inp.kind in ("param", "buffer"):
                self.env[v.id] = b.param(inp.name, self.array_of(inp))
            else:
                self.env[v.id] = b.const(self.array_of(inp))
        done = self.done
        declined: set[int] = set()
        roots: dict[int, int] = {}
        for i, n in enumerate(g.nodes):
            skip = False
            for rid in self.chain[i]:
                if rid in done:
                    skip = True
                    break
                if rid in declined:
                    continue
                if self._emit_region(rid, i):
                    done.add(rid)
                    skip = True
                    break
                declined.add(rid)
            if not skip:
                self._emit_node(i, n, roots)
        for k, v in enumerate(g.outputs):
            from ._builder import OnnxNode
            b.nodes.append(OnnxNode("Identity", (self.name(v),), (output_names[k],), ()))

    def _emit_region(self, rid: int, i: int) -> bool:
        region = self.g.regions[rid]
        fn = REGIONS.get(region.name)
        if fn is None or not self._self_contained(rid):
            return False
        bound = bind(region)
        if bound is None:
            return False
        start = len(self.b.nodes)
        outs = fn(self, region, bound)
        if outs is None:
            assert len(self.b.nodes) == start, f"region {region.name} declined after emitting"
            return False
        if len(outs) != len(region.outputs):
            return False
        for v, nm in zip(region.outputs, outs):
            self.env[v.id] = nm
        for k in range(start, len(self.b.nodes)):
            self.b.origin[k] = f"{region.name}{self.where(i)}"
        return True

    def _where_node(self, i: int, n: Any) -> str:
        regions = [self.g.regions[r].name for r in self.chain[i]]
        inside = f" inside {' > '.join(regions)}" if regions else ""
        return f"{inside}{self.where(i)}"

    def _emit_node(self, i: int, n: Any, roots: dict[int, int]) -> None:
        op = n.op
        if op == "check":
            return
        if n.inplace_of is not None:
            self._check_view_write(i, n, roots)
        if op in ALIASES:
            src = n.args[0]
            for v in n.outputs:
                self.env[v.id] = self.name(src)
                # a copy's values are its source's, its memory is its own
                roots[v.id] = v.id if op == "copy" else roots.get(src.id, src.id)
            return
        fn = PRIMS.get(op)
        if fn is None or len(n.outputs) > 1:
            hint = _HINTS.get(op, "no ONNX mapping")
            raise Unmappable(f"omnitensor.onnx.export: the op '{op}'{self._where_node(i, n)} "
                             f"cannot be exported to ONNX ({hint})")
        start = len(self.b.nodes)
        nm = fn(self, n)
        for k in range(start, len(self.b.nodes)):
            self.b.origin[k] = f"{op}{self._where_node(i, n)}"
        if not n.outputs:
            return
        out = n.outputs[0]
        if nm is None:
            nm = self.name(n.args[0])
        self.env[out.id] = nm
        if n.inplace_of is not None:
            roots[out.id] = roots.get(n.inplace_of.id, n.inplace_of.id)
            # later reads of the written memory by the Values it had before (the buffer, the
            # bases it is all of: index_put's clone) read the new values
            for vid in self._whole_views_of(n.inplace_of):
                self.env[vid] = nm
        elif op in _VIEW_OPS and n.args and hasattr(n.args[0], "id"):
            roots[out.id] = roots.get(n.args[0].id, n.args[0].id)

    def _check_view_write(self, i: int, n: Any, roots: dict[int, int]) -> None:
        """ONNX values are immutable: a write into memory another live value shares (a
        view and its base) cannot be expressed; refuse it rather than export stale data."""
        buf = n.inplace_of
        root = roots.get(buf.id, buf.id)
        whole = self._whole_views_of(buf)
        for vid, r in roots.items():
            if r == root and vid not in whole and self._read_after(vid, i):
                raise Unmappable(f"omnitensor.onnx.export: '{n.op}'{self._where_node(i, n)} "
                                 f"writes in place into memory shared with another tensor (a "
                                 f"view and its base); ONNX cannot express it. Use an "
                                 f"out-of-place op (x = x + y, torch.cat) there")
        if root not in whole and self._read_after(root, i):
            raise Unmappable(f"omnitensor.onnx.export: '{n.op}'{self._where_node(i, n)} "
                             f"writes in place into a view whose base is read later; ONNX "
                             f"cannot express it. Use an out-of-place op there")

    def _read_after(self, vid: int, i: int) -> bool:
        """Whether Value ``vid`` is read after node ``i`` (a graph result is read last)."""
        return vid in self.out_ids or any(j > i for j in self.reads.get(vid, ()))

    def _whole_views_of(self, v: Any) -> list[int]:
        """``v`` and each base it is a view of all of, in the same layout (a full-slice
        index, an identity permute, a same-shape reshape): a write into ``v`` writes them
        as a whole."""
        out = [v.id]
        while v.id in self.producer:
            n = self.g.nodes[self.producer[v.id]]
            src: Any = n.args[0] if n.args else None
            if not hasattr(src, "id") or tuple(src.shape) != tuple(v.shape) or not (
                    n.op == "reshape" or
                    (n.op == "permute" and tuple(n.args[1]) == tuple(range(len(v.shape)))) or
                    (n.op == "index" and isinstance(n.args[1], tuple) and
                     all(isinstance(k, slice) and k.step in (None, 1) for k in n.args[1]))):
                break
            v = src
            out.append(v.id)
        return out

