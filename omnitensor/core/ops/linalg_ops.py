"""Products: matmul (batched, broadcasting), dot, outer, tensordot, vecdot, einsum.

Everything reduces to one backend primitive, a batched ``matmul`` of equal batch shapes,
plus views; broadcasting and 1-D promotion are done here with differentiable view ops, so
the backward formulas below only handle the plain (..., M, K) @ (..., K, N) case.
"""
from __future__ import annotations

import string
from typing import Any, Sequence

from ...errors import ShapeError
from .. import dtypes as _dt
from ..autocast_state import autocast_operands, state as _autocast
from ..device import same_device
from ..graph import needs_grad, record
from ..layout_dispatch import dispatch as layout_dispatch, non_strided
from ..shape_util import broadcast_shapes, normalize_axis, prod
from ..tensor import Tensor, _make
from .elementwise import _backend_failure, _mixed_devices
from .storage_dtypes import via_compute


def _promote_pair(op: str, a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"{op}: expected Tensors, got {type(a).__name__} and "
                        f"{type(b).__name__}")
    if a._device is not b._device:
        _mixed_devices(op, a, b)
    d = _dt.promote_types(a._dtype, b._dtype)
    if d is _dt.bool_:
        raise _dt.DTypeError(f"{op}: not supported for bool tensors; cast to an integer or "
                             f"float dtype")
    return (a if a._dtype is d else a.to(d)), (b if b._dtype is d else b.to(d))


def _matmul_nd(a: Tensor, b: Tensor) -> Tensor:
    """(..., M, K) @ (..., K, N) with identical batch shapes."""
    be = a._device.backend
    d = a._dtype
    try:
        if d.compute is d:
            data = be.matmul(a._data, b._data)
        else:  # bfloat16: accumulate in float32, round once (torch)
            cd = d.compute.np
            data = be.astype(be.matmul(be.astype(a._data, cd), be.astype(b._data, cd)), d.np)
    except Exception as e:  # noqa: BLE001
        raise _backend_failure("matmul", a._device, e) from None
    out = _make(data, a._device, a._dtype)
    if needs_grad(a, b):
        record("MmBackward0" if a.ndim == 2 else "BmmBackward0", _matmul_backward, out,
               (a, b), (a, b))
    return out


def _matmul_backward(node: Any, g: Tensor) -> tuple:
    a, b = node.saved_tensors
    ga = g @ b.mT.conj() if node.needs_input_grad[0] else None
    gb = a.mT.conj() @ g if node.needs_input_grad[1] else None
    return ga, gb


def matmul(x1: Tensor, x2: Tensor, /) -> Tensor:
    """Matrix product with NumPy/torch rules: 1-D operands are promoted to matrices and
    the added axis removed; batch axes broadcast."""
    if _autocast.active:
        x1, x2 = autocast_operands("matmul", x1, x2)
    return _matmul(x1, x2)


def _matmul(x1: Tensor, x2: Tensor) -> Tensor:
    """:func:`matmul` past autocast (mm, bmm, mv and dot have their own entries in torch's
    autocast lists)."""
    if non_strided(x1, x2):  # a sparse operand (core/layout_dispatch.py)
        return layout_dispatch("matmul", x1, x2)
    a, b = _promote_pair("matmul", x1, x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError("matmul: both arguments need at least 1 dimension (use * for "
                         "scalars)")
    va, vb = a.ndim == 1, b.ndim == 1
    if va:
        a = a.reshape(1, a._data.shape[0])
    if vb:
        b = b.reshape(b._data.shape[0], 1)
    sa, sb = a._data.shape, b._data.shape  # plain tuples: this path runs per matmul
    if sa[-1] != sb[-2]:
        raise ShapeError(f"matmul: shapes {tuple(x1.shape)} and {tuple(x2.shape)} are not "
                         f"aligned: {sa[-1]} (dim -1 of the first) != {sb[-2]} "
                         f"(dim -2 of the second)")
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    if sa[:-2] != batch:
        a = a.broadcast_to(batch + sa[-2:])
    if sb[:-2] != batch:
        b = b.broadcast_to(batch + sb[-2:])
    out = _matmul_nd(a, b)
    if va and vb:
        return out.reshape(batch)
    if va:
        return out.reshape(batch + (out.shape[-1],))
    if vb:
        return out.reshape(batch + (out.shape[-2],))
    return out


def mm(a: Tensor, b: Tensor) -> Tensor:
    if a.ndim != 2 or b.ndim != 2:
        raise ShapeError(f"mm: expected 2-D tensors, got {a.ndim}-D and {b.ndim}-D")
    if _autocast.active:
        a, b = autocast_operands("mm", a, b)
    return _matmul(a, b)


def bmm(a: Tensor, b: Tensor) -> Tensor:
    if a.ndim != 3 or b.ndim != 3:
        raise ShapeError(f"bmm: expected 3-D tensors, got {a.ndim}-D and {b.ndim}-D")
    if a.shape[0] != b.shape[0]:
        raise ShapeError(f"bmm: batch sizes differ: {a.shape[0]} vs {b.shape[0]}")
    if _autocast.active:
        a, b = autocast_operands("bmm", a, b)
    return _matmul(a, b)


def mv(a: Tensor, v: Tensor) -> Tensor:
    if a.ndim != 2 or v.ndim != 1:
        raise ShapeError(f"mv: expected a matrix and a vector, got {a.ndim}-D and {v.ndim}-D")
    if _autocast.active:
        a, v = autocast_operands("mv", a, v)
    return _matmul(a, v)


def dot(a: Tensor, b: Tensor) -> Tensor:
    """Inner product of two 1-D tensors (torch)."""
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"dot: 1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape != b.shape:
        raise ShapeError(f"dot: inconsistent tensor size, {a.shape[0]} vs {b.shape[0]}")
    return _matmul(a, b)


def vdot(a: Tensor, b: Tensor) -> Tensor:
    return dot(a.conj(), b)


def inner(a: Tensor, b: Tensor) -> Tensor:
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return tensordot(a, b, axes=([-1], [-1]))


def outer(a: Tensor, b: Tensor) -> Tensor:
    """``a[:, None] * b[None, :]`` of two 1-D tensors."""
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"outer: expected 1-D tensors, got {a.ndim}-D and {b.ndim}-D")
    return a.reshape(-1, 1) * b.reshape(1, -1)


ger = outer


def vecdot(x1: Tensor, x2: Tensor, /, *, axis: int = -1, dim: int | None = None) -> Tensor:
    """Array API ``vecdot``: ``sum(conj(x1) * x2, axis)`` with broadcasting (``dim``:
    torch's name for ``axis``)."""
    if dim is not None:
        axis = dim
    if x1.ndim == 0 or x2.ndim == 0:
        raise ShapeError("vecdot: arguments need at least one dimension")
    shape = broadcast_shapes(x1.shape, x2.shape)
    a = normalize_axis(axis, len(shape))
    if x1.shape[axis] != x2.shape[axis]:
        raise ShapeError(f"vecdot: axis {axis} sizes differ: {x1.shape[axis]} vs "
                         f"{x2.shape[axis]}")
    prod = x1.conj() * x2
    return prod.sum(axis=a, dtype=prod.dtype)


def tensordot(a: Tensor, b: Tensor, /, *, axes: Any = 2, dims: Any = None) -> Tensor:
    """Contract ``axes`` (an int: the last n of a with the first n of b, or two
    sequences) by one matmul."""
    if dims is not None:
        axes = dims
    a, b = _promote_pair("tensordot", a, b)
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError("tensordot: axes must be non-negative")
        ax_a = list(range(a.ndim - axes, a.ndim))
        ax_b = list(range(axes))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, int) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, int) else list(ax_b)
    ax_a = [normalize_axis(i, a.ndim) for i in ax_a]
    ax_b = [normalize_axis(i, b.ndim) for i in ax_b]
    if len(ax_a) != len(ax_b):
        raise ShapeError("tensordot: both operands need the same number of contracted axes")
    for i, j in zip(ax_a, ax_b):
        if a.shape[i] != b.shape[j]:
            if 1 not in (a.shape[i], b.shape[j]):
                raise ShapeError(f"tensordot: contracted sizes differ: {a.shape[i]} (axis "
                                 f"{i}) vs {b.shape[j]} (axis {j})")
            # a size-1 contracted axis broadcasts against the other's (torch)
            if a.shape[i] == 1:
                a = a.expand(*(b.shape[j] if k == i else n for k, n in enumerate(a.shape)))
            else:
                b = b.expand(*(a.shape[i] if k == j else n for k, n in enumerate(b.shape)))
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [j for j in range(b.ndim) if j not in ax_b]
    k = prod(a.shape[i] for i in ax_a)
    am = a.permute(*(free_a + ax_a)).reshape(prod(a.shape[i] for i in free_a), k)
    bm = b.permute(*(ax_b + free_b)).reshape(k, prod(b.shape[j] for j in free_b))
    out = _matmul(am, bm)
    return out.reshape(tuple(a.shape[i] for i in free_a) + tuple(b.shape[j] for j in free_b))


# --------------------------------------------------------------------------- einsum
def _parse_einsum(subscripts: str, operands: Sequence[Tensor]) -> tuple[list[str], str]:
    spec = subscripts.replace(" ", "")
    if "->" in spec:
        ins, out = spec.split("->")
        explicit = True
    else:
        ins, out, explicit = spec, "", False
    terms = ins.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum: {len(terms)} subscripts for {len(operands)} operands")
    used = set(c for c in spec if c.isalpha())
    free = [c for c in string.ascii_letters if c not in used]
    ell_n = 0
    for t, op in zip(terms, operands):
        if "..." in t:
            ell_n = max(ell_n, op.ndim - (len(t) - 3))
    ell = "".join(free[:ell_n])
    fixed = []
    for t, op in zip(terms, operands):
        if "..." in t:
            n = op.ndim - (len(t) - 3)
            t = t.replace("...", ell[ell_n - n:])
        if len(t) != op.ndim:
            raise ValueError(f"einsum: subscript {t!r} has {len(t)} letters for a "
                             f"{op.ndim}-d operand")
        fixed.append(t)
    if explicit:
        out = out.replace("...", ell)
        letters = "".join(fixed)
        for c in out:  # checked here, so every backend's einsum gets only valid specs
            if c not in letters:
                raise ValueError(f"einsum(): output subscript '{c}' does not appear in the "
                                 f"equation for any input operand")
            if out.count(c) > 1:
                raise ValueError(f"einsum(): output subscript '{c}' appears more than once "
                                 f"in the output")
    else:
        counts: dict[str, int] = {}
        for t in fixed:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return fixed, out


def _take_diagonals(t: Tensor, term: str) -> tuple[Tensor, str]:
    while len(set(term)) != len(term):
        for i, c in enumerate(term):
            j = term.find(c, i + 1)
            if j >= 0:
                t = t.diagonal(0, i, j)
                term = term[:i] + term[i + 1:j] + term[j + 1:] + c
                break
    return t, term


def einsum(subscripts: str, *operands: Any) -> Tensor:
    """Einstein summation, e.g. ``einsum('bij,bjk->bik', a, b)``; differentiable and
    computed with matmul on every backend (a native einsum is used when no gradient is
    needed)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if _autocast.active:  # before _einsum's dtype handling (via_compute)
        operands = autocast_operands("einsum", *operands)
    return _einsum(subscripts, *operands)


@via_compute
def _einsum(subscripts: str, *operands: Any) -> Tensor:
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: the first argument must be the subscripts string (e.g. "
                        f"'ij,jk->ik'), got {type(subscripts).__name__}")
    for o in operands:
        if not isinstance(o, Tensor):
            raise TypeError(f"einsum: operands must be Tensors, got {type(o).__name__}")
    terms, out = _parse_einsum(subscripts, operands)
    if operands:
        same_device("einsum", *operands)
        _einsum_sizes(terms, operands)
    fast = operands[0]._device.backend.hook("einsum") if operands else None
    if fast is not None and not needs_grad(*operands):
        d = operands[0]._dtype
        for o in operands[1:]:
            d = _dt.promote_types(d, o._dtype)
        spec = ",".join(terms) + "->" + out
        datas = [o._data if o._dtype is d else o._device.backend.astype(o._data, d.np)
                 for o in operands]
        return _make(fast(spec, *datas), operands[0]._device, d)
    ts = []
    for t, term in zip(operands, terms):
        t, term = _take_diagonals(t, term)
        ts.append((t, term))
    # sum out letters that appear in one operand only and not in the output
    for i, (t, term) in enumerate(ts):
        others = "".join(tt for j, (_, tt) in enumerate(ts) if j != i) + out
        lone = [k for k, c in enumerate(term) if c not in others]
        if lone:
            t = t.sum(dim=tuple(lone))
            term = "".join(c for k, c in enumerate(term) if k not in lone)
        ts[i] = (t, term)
    t, term = ts[0]
    for j in range(1, len(ts)):
        u, uterm = ts[j]
        later = "".join(tt for _, tt in ts[j + 1:]) + out
        t, term = _contract(t, term, u, uterm, later)
    # letters left that are not in the output get summed; then order as the output
    extra = [k for k, c in enumerate(term) if c not in out]
    if extra:
        t = t.sum(dim=tuple(extra))
        term = "".join(c for k, c in enumerate(term) if k not in extra)
    if term != out:
        t = t.permute(*[term.index(c) for c in out])
    return t


def _einsum_sizes(terms: Sequence[str], operands: Sequence[Tensor]) -> None:
    """Each letter has one size across the operands (1 broadcasts), checked before any
    backend sees the operands (their own errors would name NumPy's or dpnp's internals)."""
    size: dict[str, int] = {}
    for term, t in zip(terms, operands):
        for c, n in zip(term, t.shape):
            m = size.get(c, 1)
            if m != n and 1 not in (m, n):
                raise ShapeError(f"einsum: size of '{c}' differs: {m} vs {n}")
            size[c] = max(m, n)


def _contract(a: Tensor, at: str, b: Tensor, bt: str, later: str) -> tuple[Tensor, str]:
    batch = [c for c in at if c in bt and c in later]
    contract = [c for c in at if c in bt and c not in later]
    left = [c for c in at if c not in bt]
    right = [c for c in bt if c not in at]
    size = {c: a.shape[i] for i, c in enumerate(at)}
    for i, c in enumerate(bt):
        if c in size and size[c] != b.shape[i] and 1 not in (size[c], b.shape[i]):
            raise ShapeError(f"einsum: size of '{c}' differs: {size[c]} vs {b.shape[i]}")
        size[c] = max(size.get(c, 1), b.shape[i])
    ap = a.permute(*[at.index(c) for c in batch + left + contract])
    bp = b.permute(*[bt.index(c) for c in batch + contract + right])
    bsh = tuple(size[c] for c in batch)
    ap = ap.broadcast_to(bsh + ap.shape[len(batch):]).reshape(
        bsh + (prod(size[c] for c in left), prod(size[c] for c in contract)))
    bp = bp.broadcast_to(bsh + bp.shape[len(batch):]).reshape(
        bsh + (prod(size[c] for c in contract), prod(size[c] for c in right)))
    r = matmul(ap, bp).reshape(bsh + tuple(size[c] for c in left + right))
    return r, "".join(batch + left + right)
