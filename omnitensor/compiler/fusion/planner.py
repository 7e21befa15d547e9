"""The fusion planner: a captured Graph -> groups of nodes that become one kernel each.

One pass over the nodes in order, greedily. An elementwise node (``table.supports``) joins
the open group that produced one of its operands when the shapes line up: same loop shape
for an elementwise group, the reduced size for a reduction's epilogue. A ``sum``/``max``/
``min`` over an elementwise group's value turns the group into a reduce kernel (the chain
becomes its prologue; prologue values used elsewhere are still stored, each element is
visited once). View nodes (``broadcast_to``, ``reshape`` of a contiguous layout,
``permute``) are folded into load strides, so a bias broadcast costs nothing.

A fused group runs at the position of its last member, so it must stop growing
(*sealed*) as soon as anything outside it reads one of its values, and whenever a write in
place could reorder with one of its reads: a non-fused in-place write seals every open
group; a fused one seals the other groups reading that buffer, and joins only if its own
group reads the buffer element for element. On a device whose matmul is omnitensor's
generated GEMM (``gemm=True``) a 2-D matmul opens a group too, and the elementwise ops on
its product become the GEMM's epilogue (:mod:`.gemm`); elsewhere matmul, indexing and
every other primitive stay library calls.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...kernels.fused_spec import KernelSpec, Load, Op, Reduce, Store, c_strides, is_contiguous
from . import gemm, table
from .table import is_value as _is_value

VIEW_OPS = frozenset(("broadcast_to", "reshape", "permute"))
#: primitives whose result may share memory with their first operand (ir.VIEW_OPS)
_ALIASING = frozenset(("reshape", "permute", "broadcast_to", "index", "flip", "diagonal",
                       "contiguous"))
REDUCE_OPS = frozenset(("sum", "max", "min"))


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


@dataclass
class Group:
    """Nodes becoming one kernel. ``local[vid] = (temp index, phase)``; ``args`` are the
    Value ids passed to the kernel (load bases, then in-place buffers)."""
    index: int
    space: tuple[int, ...]
    members: list[int] = field(default_factory=list)
    reduced: tuple[bool, ...] = ()
    rnumel: int = 0
    phase: str = "p"
    sealed: bool = False
    local: dict[int, tuple[int, str]] = field(default_factory=dict)
    loads: dict[tuple, int] = field(default_factory=dict)
    load_list: list[Load] = field(default_factory=list)
    load_roots: dict[int, set] = field(default_factory=dict)  # root -> {(phase, identity)}
    args: list[int] = field(default_factory=list)
    steps: list[Any] = field(default_factory=list)
    writes: list[tuple[int, int, int]] = field(default_factory=list)  # (temp, buf vid, out vid)
    values: dict[int, Any] = field(default_factory=dict)  # vid -> Value produced here
    written_roots: set = field(default_factory=set)
    n_compute: int = 0
    #: a GEMM group (its first step a spec.Matmul) and the roots of the product's operands
    gemm: bool = False
    operand_roots: frozenset = frozenset()

    @property
    def is_reduce(self) -> bool:
        return self.phase == "e"


@dataclass
class Planned:
    """A group ready to render: its spec, the Value ids of its arguments (loads then
    in-place buffers), its outputs as (Value, argument index or None for in-place
    (then the buffer's argument index)), and the member node indices."""
    spec: KernelSpec
    arg_vids: list[int]
    outputs: list[tuple[Any, int]]
    fresh: list[Any]
    members: list[int]
    escaping: frozenset = frozenset()


class Planner:
    def __init__(self, graph: Any, gemm: bool = False) -> None:
        self.graph = graph
        self.gemm = gemm
        self.nodes = list(graph.nodes)
        self.layout: dict[int, tuple[int, tuple[int, ...], tuple[int, ...]]] = {}
        self.root: dict[int, int] = {}
        self.owner: dict[int, Group] = {}  # vid (incl. views of locals) -> group
        self.groups: list[Group] = []
        self.node_group: dict[int, Group] = {}

    # ------------------------------------------------------------------ layouts
    def lay(self, v: Any) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
        got = self.layout.get(v.id)
        if got is None:
            got = (v.id, tuple(v.shape), c_strides(tuple(v.shape)))
        return got

    def fold_view(self, node: Any) -> None:
        out = node.outputs[0]
        x: Any = node.args[0] if node.args else None
        if not _is_value(x) or node.kwargs.get("copy") is True:
            return
        base, shape, st = self.lay(x)
        new_shape = tuple(out.shape)
        if node.op == "reshape":
            if not is_contiguous(shape, st):
                return
            self.layout[out.id] = (base, new_shape, c_strides(new_shape))
        elif node.op == "permute":
            axes = tuple(node.args[1])
            self.layout[out.id] = (base, new_shape, tuple(st[a] for a in axes))
        else:
            self.layout[out.id] = (base, new_shape, _bcast(shape, st, new_shape))
        self.root[out.id] = self.root.get(x.id, x.id)
        if x.id in self.owner:
            self.owner[out.id] = self.owner[x.id]

    # --------------------------------------------------------------- operands
    def resolve(self, g: Group, v: Any, phase: str) -> tuple | None:
        """The kernel reference of Value ``v`` read by group ``g`` in ``phase``, creating
        a load when it comes from outside; None when ``g`` cannot read it there."""
        base, shape, st = self.lay(v)
        if phase == "p":
            if shape != g.space:
                if g.gemm and len(shape) > len(g.space):  # (B, T, N) over the (M, N) product
                    folded = gemm.onto_product(shape, st, g.space)
                    if folded is None:
                        return None
                    st = folded
                elif len(shape) > len(g.space):
                    return None
                else:
                    st = _bcast(shape, st, g.space)
            ident = st == c_strides(g.space) and _numel(self._shape_of(base)) == _numel(g.space)
        else:
            if _numel(shape) != g.rnumel or not is_contiguous(shape, st):
                return None
            st, ident = (), True
        loc = g.local.get(base)
        if loc is not None:
            temp, ph = loc
            if ph != phase or not ident:
                return None
            return ("t", temp)
        if base in self.owner and self.owner[base] is g:
            return None  # a view of our own value we cannot index
        key = (base, st, phase)
        if key not in g.loads:
            if base not in g.args:
                g.args.append(base)
            g.loads[key] = len(g.load_list)
            g.load_list.append(Load(g.args.index(base), self._dtype_of(base), phase, st))
            g.load_roots.setdefault(self.root.get(base, base), set()).add((phase, ident))
        return ("l", g.loads[key])

    def _shape_of(self, vid: int) -> tuple[int, ...]:
        return self.shapes[vid]

    def _dtype_of(self, vid: int) -> str:
        return self.dtypes[vid]

    # ------------------------------------------------------------------- main
    def run(self) -> list[Planned]:
        self.shapes: dict[int, tuple[int, ...]] = {}
        self.dtypes: dict[int, str] = {}
        for inp in getattr(self.graph, "inputs", ()):
            v = inp.value
            self.shapes[v.id], self.dtypes[v.id] = tuple(v.shape), str(v.dtype)
        for i, node in enumerate(self.nodes):
            for v in _values_in(node):
                self.shapes.setdefault(v.id, tuple(v.shape))
                self.dtypes.setdefault(v.id, str(v.dtype))
            for v in node.outputs:
                self.shapes[v.id], self.dtypes[v.id] = tuple(v.shape), str(v.dtype)
            self.step(i, node)
        keep = [g for g in self.groups if g.n_compute >= 2]
        members = {i for g in keep for i in g.members}
        needed = self._needed(keep, members)
        self.members, self.needed = members, needed
        return [self.finish(g, needed) for g in keep]

    def _needed(self, keep: list[Group], members: set[int]) -> set[int]:
        """Value ids read after fusion: by the nodes left, as kernel arguments, or by the
        caller; a view node counts only when its own output is needed."""
        needed = {v.id for v in getattr(self.graph, "outputs", ())}
        for _buf, fin in getattr(self.graph, "state_writes", ()):
            needed.add(fin.id)
        for g in keep:
            needed.update(g.args)
        for j in range(len(self.nodes) - 1, -1, -1):
            node = self.nodes[j]
            if j in members:
                continue
            if node.op in VIEW_OPS and not node.kwargs.get("out") and \
                    not any(v.id in needed for v in node.outputs):
                continue
            needed.update(v.id for v in _values_in(node))
        return needed

    def seal_readers(self, node: Any, keep: Group | None) -> None:
        """Seal the groups whose values ``node`` reads from outside, and those that write
        in place a buffer it reads (through any view): moving that write later would
        change what it reads."""
        for v in _values_in(node):
            g = self.owner.get(v.id)
            if g is not None and g is not keep:
                g.sealed = True
            r = self.root.get(v.id, v.id)
            for g in self.groups:
                if g is not keep and r in g.written_roots:
                    g.sealed = True

    def step(self, i: int, node: Any) -> None:
        op = node.op
        if op in VIEW_OPS and not node.kwargs.get("out"):
            self.fold_view(node)
            return
        info = table.elementwise(node) if op not in REDUCE_OPS else None
        joined: Group | None = None
        if info is not None:
            joined = self.try_elementwise(i, node, info)
        elif op in REDUCE_OPS:
            joined = self.try_reduce(i, node)
        elif op == "matmul" and self.gemm:
            joined = gemm.open_group(self, i, node)
        self.seal_readers(node, joined)
        if op in _ALIASING and node.args and _is_value(node.args[0]):
            for v in node.outputs:  # a view (or the array itself): same memory
                self.root[v.id] = self.root.get(node.args[0].id, node.args[0].id)
        if joined is None:
            if node.inplace_of is not None or node.kwargs.get("out") is not None:
                for g in self.groups:
                    g.sealed = True
            for v in node.outputs:
                if node.inplace_of is not None:
                    self.root[v.id] = self.root.get(node.inplace_of.id, node.inplace_of.id)

    def _candidates(self, node: Any) -> list[Group]:
        seen: list[Group] = []
        for v in _values_in(node):
            g = self.owner.get(v.id)
            if g is not None and not g.sealed and g not in seen:
                seen.append(g)
        return sorted(seen, key=lambda g: -g.members[-1])

    def try_elementwise(self, i: int, node: Any, info: tuple) -> Group | None:
        opname, operands, in_dtype, buf = info
        out = node.outputs[0]
        shape = tuple(out.shape)
        same = gemm.merge_order(
            [g for g in self._candidates(node) if g.phase == "p" and g.space == shape])
        for h in same[1:]:
            self.merge(same[0], h)
        for g in self._candidates(node):
            if g.phase == "p" and (g.space == shape or gemm.folds_onto(g, shape, operands)):
                got = self.add_ew(g, i, node, opname, operands, in_dtype, buf, "p")
            elif g.phase == "e" and _numel(shape) == g.rnumel:
                got = self.add_ew(g, i, node, opname, operands, in_dtype, buf, "e")
            else:
                continue
            if got:
                return g
        g = Group(len(self.groups), shape)
        g.reduced = (False,) * len(shape)
        if self.add_ew(g, i, node, opname, operands, in_dtype, buf, "p"):
            self.groups.append(g)
            return g
        return None

    def merge(self, g: Group, h: Group) -> None:
        """Move open elementwise group ``h`` (same loop space) into ``g``: legal because
        nothing outside has read ``h`` yet (it would be sealed) and no write since its
        last member touched what it reads (that seals too)."""
        off = len(g.steps)
        lmap = {}
        for (base, st, phase), j in h.loads.items():
            if base not in g.args:
                g.args.append(base)
            key = (base, st, phase)
            if key not in g.loads:
                g.loads[key] = len(g.load_list)
                ld = h.load_list[j]
                g.load_list.append(Load(g.args.index(base), ld.dtype, ld.phase, ld.strides))
            lmap[j] = g.loads[key]
        for r, uses in h.load_roots.items():
            g.load_roots.setdefault(r, set()).update(uses)

        def ref(r: tuple) -> tuple:
            if r[0] == "t":
                return ("t", r[1] + off)
            if r[0] == "l":
                return ("l", lmap[r[1]])
            return r
        for st in h.steps:
            g.steps.append(Op(st.phase, st.op, tuple(ref(r) for r in st.operands), st.dtype,
                              st.in_dtype))
        for vid, (temp, phase) in h.local.items():
            g.local[vid] = (temp + off, phase)
            self.owner[vid] = g
        for vid, o in self.owner.items():
            if o is h:
                self.owner[vid] = g
        g.values.update(h.values)
        g.members = sorted(g.members + h.members)
        for i in h.members:
            self.node_group[i] = g
        g.n_compute += h.n_compute
        for temp, buf, out in h.writes:
            g.writes.append((temp + off, buf, out))
            if buf not in g.args:
                g.args.append(buf)
        g.written_roots |= h.written_roots
        self.groups.remove(h)

    def add_ew(self, g: Group, i: int, node: Any, opname: str, operands: list,
               in_dtype: str, buf: Any, phase: str) -> bool:
        saved = (dict(g.loads), list(g.load_list), list(g.args),
                 {k: set(s) for k, s in g.load_roots.items()})
        refs = []
        for x in operands:
            if _is_value(x):
                r = self.resolve(g, x, phase)
                if r is None:
                    g.loads, g.load_list, g.args, g.load_roots = saved
                    return False
                refs.append(r)
            else:
                refs.append(("c", x))
        target = None
        if buf is not None:
            target = buf.id
            if gemm.rewrites_own(self, g, buf, phase):
                target = None  # the bias add into the product: a new temporary for it
            elif buf.id in g.local:
                # a second write into a buffer this group already wrote (buf.mul_(m).add_(g)):
                # the kernel stores into the same argument again
                prior = [w for w in g.writes if w[2] == buf.id]
                if not prior or g.local[buf.id][1] != phase:
                    g.loads, g.load_list, g.args, g.load_roots = saved
                    return False
                else:
                    target = prior[0][1]
        if target is not None:
            assert buf is not None
            root = self.root.get(buf.id, buf.id)
            uses = g.load_roots.get(root, set())
            base, shape, st = self.lay(buf)
            if (uses - {(phase, True)}) or base != buf.id or not is_contiguous(shape, st):
                g.loads, g.load_list, g.args, g.load_roots = saved
                return False
            for other in self.groups:
                if other is not g and root in other.load_roots:
                    other.sealed = True
        out = node.outputs[0]
        temp = len(g.steps)
        g.steps.append(Op(phase, opname, tuple(refs), str(out.dtype), in_dtype))
        g.local[out.id] = (temp, phase)
        g.values[out.id] = out
        self.owner[out.id] = g
        g.members.append(i)
        g.n_compute += 1
        self.node_group[i] = g
        if buf is not None and target is None:  # that memory now holds this value
            gemm.rewritten(self, g, buf, out, temp, phase)
        if buf is not None and target is not None:
            if target not in g.args:
                g.args.append(target)
            g.writes.append((temp, target, out.id))
            g.written_roots.add(self.root.get(buf.id, buf.id))
            self.root[out.id] = self.root.get(buf.id, buf.id)
        return True

    def try_reduce(self, i: int, node: Any) -> Group | None:
        x: Any = node.args[0] if node.args else None
        if not _is_value(x) or str(x.dtype) not in table.FLOATS or node.kwargs or \
                getattr(node, "device", None) is not None:
            return None
        if _numel(tuple(x.shape)) == 0 or len(node.args) < 2:
            return None
        axes = tuple(node.args[1])
        out = node.outputs[0]
        g = self.owner.get(x.id)
        shape = tuple(x.shape)
        if g is None or g.sealed or g.phase != "p" or g.space != shape or g.gemm:
            g = Group(len(self.groups), shape)
            g.reduced = (False,) * len(shape)
            fresh = True
        else:
            fresh = False
        ref = self.resolve(g, x, "p")
        if ref is None:
            return None
        if fresh:
            self.groups.append(g)
        g.reduced = tuple(a in axes for a in range(len(shape)))
        g.rnumel = _numel(tuple(out.shape))
        g.phase = "e"
        temp = len(g.steps)
        g.steps.append(Reduce(node.op, ref, str(out.dtype)))
        g.local[out.id] = (temp, "e")
        g.values[out.id] = out
        self.owner[out.id] = g
        g.members.append(i)
        g.n_compute += 1
        self.node_group[i] = g
        return g

    # ------------------------------------------------------------------ finish
    def escaping(self) -> set[int]:
        """Value ids whose memory the caller sees after a replay: the graph's outputs and
        state writes, and every earlier Value of the same memory (written in place into,
        or viewed by, one of those). Their buffers are never reused between calls (a
        result returned by one call was overwritten by the next call's kernel)."""
        esc = getattr(self, "_escaping", None)
        if esc is not None:
            return esc
        esc = {v.id for v in getattr(self.graph, "outputs", ())}
        esc.update(fin.id for _b, fin in getattr(self.graph, "state_writes", ()))
        for node in reversed(self.nodes):
            if not any(o.id in esc for o in node.outputs):
                continue
            if node.inplace_of is not None:
                esc.add(node.inplace_of.id)
            if node.op in _ALIASING and node.args and _is_value(node.args[0]):
                esc.add(node.args[0].id)
        self._escaping = esc
        return esc

    def finish(self, g: Group, needed: set[int]) -> Planned:
        stores: list[Store] = []
        outputs: list[tuple[Any, int]] = []
        fresh: list[Any] = []
        nbuf = len(g.args)
        written = {out_vid: (temp, buf) for temp, buf, out_vid in g.writes}
        escaping = self.escaping()
        by_temp: dict[int, int] = {}  # values sharing a temporary (one memory) share an output
        esc: set[int] = set()
        for vid, (temp, phase) in g.local.items():
            val = g.values[vid]
            if vid in written:
                temp, buf = written[vid]
                arg = g.args.index(buf)
                stores.append(Store(("t", temp), arg, str(val.dtype), phase))
                outputs.append((val, arg))
            elif vid in needed:
                if temp in by_temp:
                    arg = by_temp[temp]
                else:
                    arg = by_temp[temp] = nbuf + len(fresh)
                    fresh.append(val)
                    stores.append(Store(("t", temp), arg, str(val.dtype), phase))
                outputs.append((val, arg))
                if vid in escaping:
                    esc.add(fresh[arg - nbuf].id)
        spec = KernelSpec(g.space, g.reduced, list(g.load_list), list(g.steps), stores,
                          nbuf + len(fresh))
        return Planned(spec, list(g.args), outputs, fresh, sorted(g.members), frozenset(esc))


def _bcast(shape: tuple[int, ...], st: tuple[int, ...], to: tuple[int, ...]
           ) -> tuple[int, ...]:
    lead = len(to) - len(shape)
    out = [0] * lead
    for d, (n, s) in enumerate(zip(shape, st)):
        out.append(0 if n == 1 and to[lead + d] != 1 else s)
    return tuple(out)


def _values_in(node: Any) -> list[Any]:
    out = []
    for a in list(node.args) + list(node.kwargs.values()):
        if _is_value(a):
            out.append(a)
        elif isinstance(a, (tuple, list)):
            out.extend(b for b in a if _is_value(b))
    return out


def plan(graph: Any, gemm: bool = False) -> tuple[list[Planned], set[int], set[int]]:
    """The fused groups of ``graph`` (nodes not in any group stay primitive calls), the
    indices of the nodes they replace, and the Value ids still read afterwards (a view
    node whose output is not among them is dead). ``gemm``: matmuls open groups whose
    elementwise consumers become their epilogue (the device's matmul is the generated
    GEMM)."""
    p = Planner(graph, gemm)
    groups = p.run()
    return groups, p.members, p.needed
