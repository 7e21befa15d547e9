"""GEMM groups of the fusion planner: a matmul and the elementwise epilogue on its product.

On a device whose ``matmul`` primitive is omnitensor's generated GEMM
(``Backend.generated_gemm``: ``opencl``), a 2-D float32/float64 matmul opens a group whose
first step is a :class:`~.spec.Matmul`. The planner's elementwise rules then grow it as they
grow any group over the product's (M, N) space (or a (..., N) reshape of it: a linear
layer on 3-D inputs): the bias add (written in place into the product, ``add(y, b,
out=y)``), activations, casts, scaling, a gradient's chain, even an optimizer's update of
the weight gradient. One kernel computes the product and runs that
chain on each element before the store (``kernels.gemm``'s epilogue hook); values the
plan still reads elsewhere (the product itself, a saved activation) are stored too, so a
product used twice stays correct. Library matmuls (BLAS, oneMKL, cuBLAS) never open one.

What keeps reordering safe: the group reads the operands when it runs (at its last
member), so their roots count as read by it (a write into them seals it, and it never
writes them itself); it never absorbs a reduction or another GEMM group.
"""
from __future__ import annotations

from typing import Any

from ...kernels.fused_spec import Matmul, is_contiguous
from . import table
from .table import is_value as _is_value


def open_group(p: Any, i: int, node: Any) -> Any:
    """A new GEMM group of planner ``p`` for matmul node ``i``, or None when the product
    is not one the generated GEMM computes with an epilogue (then it stays a call)."""
    from .planner import Group
    if len(node.args) != 2 or node.kwargs or len(node.outputs) != 1 or \
            getattr(node, "device", None) is not None:
        return None
    a, b = node.args
    out = node.outputs[0]
    if not (_is_value(a) and _is_value(b)) or len(a.shape) != 2 or len(b.shape) != 2:
        return None
    dt = str(out.dtype)
    if dt not in table.FLOATS or str(a.dtype) != dt or str(b.dtype) != dt:
        return None
    (m, k), n = tuple(a.shape), b.shape[1]
    if m * n * k == 0:
        return None
    base_a, _sh, st_a = p.lay(a)
    base_b, _sh, st_b = p.lay(b)
    g = Group(len(p.groups), (m, n))
    g.reduced = (False, False)
    g.gemm = True
    g.args = [base_a] if base_a == base_b else [base_a, base_b]
    roots = {p.root.get(base_a, base_a), p.root.get(base_b, base_b)}
    for r in roots:  # read when the group runs: never written by it, writes seal it
        g.load_roots.setdefault(r, set()).add(("gemm", False))
    g.operand_roots = frozenset(roots)
    g.steps.append(Matmul(g.args.index(base_a), (st_a[0], st_a[1]), g.args.index(base_b),
                          (st_b[0], st_b[1]), k, dt))
    g.local[out.id] = (0, "p")
    g.values[out.id] = out
    p.owner[out.id] = g
    g.members.append(i)
    g.n_compute = 1
    p.node_group[i] = g
    p.groups.append(g)
    return g


def folds_onto(g: Any, shape: tuple, operands: list) -> bool:
    """Whether an elementwise op over ``shape`` can run in GEMM group ``g``'s (M, N) space:
    ``shape`` is (..., N) with M elements in front (a linear layer on (B, T, K) inputs
    multiplies (B*T, K) and reshapes the product back), its operands all of that shape."""
    if not g.gemm or len(shape) <= 2 or shape[-1] != g.space[1]:
        return False
    m = 1
    for n in shape[:-1]:
        m *= n
    return m == g.space[0] and all(tuple(a.shape) == shape for a in operands if _is_value(a))


def onto_product(shape: tuple, strides: tuple, space: tuple) -> tuple[int, int] | None:
    """The (row, column) strides over the product's (M, N) ``space`` of an operand laid
    out with ``strides`` over ``shape`` = (..., N), when its leading axes walk as one (a
    contiguous or broadcast batch), else None."""
    if shape[-1] != space[1]:
        return None
    for d in range(len(shape) - 2):
        if shape[d] != 1 and strides[d] != strides[d + 1] * shape[d + 1]:
            return None
    return strides[-2], strides[-1]


def merge_order(same: list) -> list:
    """The open groups a node's operands come from that may merge (the first absorbs the
    rest): a GEMM group first; never two GEMM groups, nor a group writing into the GEMM's
    operands."""
    gemms = [g for g in same if g.gemm]
    if not gemms:
        return same
    head = gemms[0]
    return [head] + [h for h in same if not h.gemm and not (h.written_roots & head.operand_roots)]


def rewrites_own(p: Any, g: Any, buf: Any, phase: str) -> bool:
    """Whether an in-place write into ``buf`` (the bias add into the product, an in-place
    activation after it) may become a new temporary of GEMM group ``g`` standing for that
    memory: ``buf`` is, or views in order, a whole value ``g`` computed into memory of its
    own (not an external buffer it writes), and nothing outside has read it yet (``g``
    would be sealed)."""
    if not g.gemm or g.sealed:
        return False
    base, shape, st = p.lay(buf)
    loc = g.local.get(base)
    if loc is None or loc[1] != phase or base in {w[2] for w in g.writes}:
        return False
    n = 1
    for d in shape:
        n *= d
    m = 1
    for d in p.shapes[base]:
        m *= d
    return n == m and is_contiguous(shape, st)


def rewritten(p: Any, g: Any, buf: Any, out: Any, temp: int, phase: str) -> None:
    """After such a write (its result ``out``, temporary ``temp``): every value of ``g``
    in that memory (the product, earlier in-place results) now reads ``temp``."""
    mem = p.root.get(buf.id, buf.id)
    p.root[out.id] = mem
    for vid in list(g.local):
        if p.root.get(vid, vid) == mem:
            g.local[vid] = (temp, phase)
