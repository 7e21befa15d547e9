"""Reductions over sparse tensors: ``sum`` (torch.sparse.sum) and ``softmax`` /
``log_softmax`` over the stored entries (torch.sparse.softmax: positions not stored count
as -inf, so they stay absent).

Composites of dense ops on the values, grouped by the coordinates that remain, so they are
differentiable in the values and run on every backend.
"""
from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from ..graph import no_grad_ctx
from ..layout_dispatch import register
from ..ops.creation import zeros
from ..ops.join import stack
from ..ops.softmax import log_softmax as _dense_log_softmax, softmax as _dense_softmax
from ..ops.sorting import argsort, unique
from ..ops.torch_extras import bincount
from ..shape_util import normalize_axes, normalize_axis
from ..tensor import Tensor
from .coalesce import coalesce, linear_index
from .convert import to_compressed, to_coo
from .tensor import SparseCompressedTensor, SparseTensor, make_coo

__all__ = ["sum_sparse", "softmax", "log_softmax"]


@register("sum")
def sum_sparse(x: SparseTensor, dim: Any = None, keepdim: bool = False,
               dtype: Any = None) -> Tensor:
    """Sum over ``dim`` (all when None: a 0-d dense tensor). Summing every sparse
    dimension gives a dense tensor; otherwise the result is sparse (coalesced), as torch."""
    vals = x._vals if dtype is None else x._vals.to(_dt.as_dtype(dtype))
    if dim is None:
        return vals.sum()
    dims = normalize_axes(dim, x.ndim)
    s = to_coo(x)
    sd = s.sparse_dim()
    sparse_red = [d for d in dims if d < sd]
    dense_red = tuple(d - sd + 1 for d in dims if d >= sd)
    if dense_red:
        vals = vals.sum(dim=dense_red, keepdim=keepdim)
    if len(sparse_red) == sd and not keepdim:
        return vals.sum(0)
    sizes = [1 if d in sparse_red else s.shape[d] for d in range(sd)]
    if not sparse_red:
        return make_coo(s._idx, vals, tuple(sizes) + tuple(vals.shape[1:]), s._coalesced)
    kept = [d for d in range(sd) if keepdim or d not in sparse_red]
    with no_grad_ctx():  # keepdim: a reduced dimension keeps size 1, index 0
        idx = stack([s._idx[d] * 0 if d in sparse_red else s._idx[d] for d in kept])
    shape = tuple(sizes[d] for d in kept) + tuple(vals.shape[1:])
    return coalesce(make_coo(idx, vals, shape))


def _group_max(peak: Tensor, group: Tensor, count: int) -> Tensor:
    """The largest of ``peak`` in each of ``count`` groups (every group non-empty): sort by
    value, then stably by group; the last of each group's run is its maximum."""
    order = argsort(peak, stable=True)
    order = order[argsort(group[order], stable=True)]
    ends = bincount(group, minlength=count).cumsum(0) - 1
    return peak[order][ends]


def _softmax(x: SparseTensor, dim: int, dtype: Any, log: bool) -> SparseTensor:
    if not isinstance(dim, int):
        raise TypeError(f"softmax: dim must be an int, got {type(dim).__name__}")
    s = coalesce(to_coo(x))
    vals = s._vals if dtype is None else s._vals.to(_dt.as_dtype(dtype))
    if vals.dtype.kind not in "fc":
        raise _dt.DTypeError(f"softmax: expected a floating sparse tensor, got "
                             f"{vals.dtype.name}")
    d = normalize_axis(dim, s.ndim)
    sd = s.sparse_dim()
    out: SparseTensor
    if d >= sd:  # a dense dimension: a softmax of each stored slice
        fn = _dense_log_softmax if log else _dense_softmax
        out = make_coo(s._idx, fn(vals, d - sd + 1), s.shape, True)
    elif vals.shape[0] == 0:
        out = s._with_values(vals)
    else:
        others = [i for i in range(sd) if i != d]
        with no_grad_ctx():
            key = linear_index(s._idx[others], [s.shape[i] for i in others])
            _, group = unique(key, return_inverse=True)
            count = int(group.max().item()) + 1
            peak = vals.reshape(vals.shape[0], -1).amax(1) if vals.ndim > 1 else vals
            shift = _group_max(peak, group, count)[group]
            shift = shift.reshape((-1,) + (1,) * (vals.ndim - 1))
        z = vals - shift  # softmax is shift-invariant: the shift carries no gradient
        e = z.exp()
        total = zeros((count,) + tuple(vals.shape[1:]), dtype=e.dtype, device=e.device)
        total = total.index_add(0, group, e).index_select(0, group)
        out = make_coo(s._idx, z - total.log() if log else e / total, s.shape, True)
    if isinstance(x, SparseCompressedTensor):
        return to_compressed(out, x.layout)
    return out


def softmax(input: Tensor, dim: int, dtype: Any = None) -> SparseTensor:  # noqa: A002
    """torch.sparse.softmax: softmax along ``dim`` over the stored entries only."""
    if not isinstance(input, SparseTensor):
        raise TypeError("torch.sparse.softmax expects a sparse tensor; use torch.softmax "
                         "for a dense one")
    return _softmax(input, dim, dtype, False)


def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> SparseTensor:  # noqa: A002
    """torch.sparse.log_softmax: log-softmax along ``dim`` over the stored entries only."""
    if not isinstance(input, SparseTensor):
        raise TypeError("torch.sparse.log_softmax expects a sparse tensor; use "
                         "torch.log_softmax for a dense one")
    return _softmax(input, dim, dtype, True)
