"""Coalescing COO indices: sort by row-major position, merge duplicates.

Everything here is a composite of dense index ops (sort, cumsum, masked select, index_add),
so it runs on every backend; the number of distinct positions is data-dependent, so
coalescing reads one count from the device.
"""
from __future__ import annotations

from typing import Sequence

from .. import dtypes as _dt
from ..graph import no_grad_ctx
from ..ops.creation import ones, zeros
from ..ops.join import cat, stack
from ..ops.sorting import argsort
from ..tensor import Tensor
from .tensor import SparseCooTensor, make_coo

__all__ = ["linear_index", "unravel", "coalesce", "first_occurrences", "groups"]


def linear_index(idx: Tensor, sizes: Sequence[int]) -> Tensor:
    """Row-major position of each column of ``idx`` (sparse_dim, nnz) in ``sizes``."""
    if idx.shape[0] == 0:
        return zeros((idx.shape[1],), dtype=_dt.int64, device=idx.device)
    lin = idx[0]
    for d in range(1, idx.shape[0]):
        lin = lin * int(sizes[d]) + idx[d]
    return lin


def unravel(lin: Tensor, sizes: Sequence[int]) -> Tensor:
    """The inverse of :func:`linear_index`: a (len(sizes), n) index tensor."""
    rows = []
    for s in reversed(sizes):
        rows.append(lin % int(s))
        lin = lin // int(s)
    if not rows:
        return zeros((0, lin.shape[0]), dtype=_dt.int64, device=lin.device)
    return stack(rows[::-1])


def groups(lin: Tensor) -> tuple[Tensor, Tensor, Tensor, int]:
    """Sort positions ``lin``: (order, first-of-run mask over the sorted order, run id of
    each sorted entry, number of runs)."""
    order = argsort(lin, stable=True)
    s = lin[order]
    n = s.shape[0]
    head = ones((1,), dtype=_dt.bool_, device=lin.device)
    start = cat([head, s[1:] != s[:-1]]) if n > 1 else head[:n]
    seg = start.to(_dt.int64).cumsum(0) - 1
    count = int(seg[-1].item()) + 1 if n else 0
    return order, start, seg, count


def coalesce(s: SparseCooTensor) -> SparseCooTensor:
    """``s`` with sorted, unique indices and duplicate values summed (differentiable in
    the values); ``s`` itself when already coalesced."""
    if s._coalesced:
        return s
    sd = s._idx.shape[0]
    sizes = s._shape[:sd]
    if s._vals.shape[0] == 0:
        return make_coo(s._idx, s._vals, s._shape, True)
    with no_grad_ctx():
        lin = linear_index(s._idx, sizes)
        order, start, seg, count = groups(lin)
        idx = unravel(lin[order][start], sizes)
    vals = s._vals
    out = zeros((count,) + tuple(vals.shape[1:]), dtype=vals.dtype, device=vals.device)
    out = out.index_add(0, seg, vals.index_select(0, order))
    return make_coo(idx, out, s._shape, True)


def first_occurrences(idx: Tensor, sizes: Sequence[int]) -> tuple[Tensor, Tensor]:
    """For each distinct position in ``idx``: where it first occurs (sorted by position),
    and the coalesced index tensor."""
    with no_grad_ctx():
        lin = linear_index(idx, sizes)
        order, start, _, _ = groups(lin)
        first = order[start]
        return first, unravel(lin[first], sizes)
