"""Conversions between layouts: dense <-> COO <-> CSR/CSC, ``to_dense``, ``sparse_mask``.

Each is a composite of dense ops on the components, differentiable in the values (and in
the dense tensor a sparse one is taken from).
"""
from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from ..graph import no_grad_ctx
from ..layout_dispatch import non_strided
from ..ops.creation import arange, zeros
from ..ops.gather import nonzero_torch
from ..ops.join import cat, repeat_interleave, stack
from ..ops.torch_extras import bincount, index_put
from ..tensor import Tensor
from .coalesce import coalesce
from .tensor import (SparseCompressedTensor, SparseCooTensor, SparseTensor, make_compressed,
                     make_coo, sparse_coo, sparse_csc, sparse_csr)

__all__ = ["to_coo", "to_compressed", "to_dense", "dense_to_coo", "to_layout",
           "compressed_coordinates", "coordinates", "sparse_mask", "refuse_layout", "SUPPORTED"]

#: The sparse layouts omnitensor builds (others are refused with this list).
SUPPORTED = "torch.sparse_coo, torch.sparse_csr and torch.sparse_csc"


def refuse_layout(layout: Any) -> NotImplementedError:
    """The error for a layout omnitensor does not build (blocked BSR/BSC, unknown)."""
    return NotImplementedError(f"layout {layout!r} is not supported; omnitensor's sparse "
                               f"layouts are {SUPPORTED} (see docs/sparse.md)")


def compressed_coordinates(c: SparseCompressedTensor) -> tuple[Tensor, Tensor]:
    """(rows, cols) of each stored value of a CSR/CSC tensor, in storage order."""
    with no_grad_ctx():
        ptr = c._compressed
        counts = ptr[1:] - ptr[:-1]
        major = repeat_interleave(arange(counts.shape[0], device=ptr.device), counts)
    return (major, c._plain) if c._layout is sparse_csr else (c._plain, major)


def coordinates(s: SparseTensor) -> tuple[Tensor, ...]:
    """One index tensor per sparse dimension, for each stored value."""
    if isinstance(s, SparseCooTensor):
        return tuple(s._idx[d] for d in range(s._idx.shape[0]))
    assert isinstance(s, SparseCompressedTensor)
    return compressed_coordinates(s)


def to_coo(s: Tensor) -> SparseCooTensor:
    """``s`` as a COO tensor (itself when it is one; a dense tensor is converted)."""
    if isinstance(s, SparseCooTensor):
        return s
    if isinstance(s, SparseCompressedTensor):
        rows, cols = compressed_coordinates(s)
        # CSR storage is row-major, so sorted; CSC's is column-major; neither is checked
        # for duplicates, so neither is flagged coalesced
        return make_coo(stack([rows, cols]), s._vals, s._shape, False)
    return dense_to_coo(s)


def to_compressed(s: Tensor, layout: Any) -> SparseCompressedTensor:
    """``s`` (dense or sparse, 2-D) in CSR or CSC layout."""
    if isinstance(s, SparseCompressedTensor) and s._layout is layout:
        return s
    if s.ndim != 2:
        raise ValueError(f"to_sparse_{layout.name[7:]}: expected a 2-D tensor, got "
                         f"{s.ndim}-D (batched compressed tensors are not supported)")
    coo = coalesce(to_coo(s))
    if coo._vals.ndim != 1:
        raise NotImplementedError(f"{layout!r} with dense dimensions (a hybrid tensor) is "
                                  f"not supported; use torch.sparse_coo for hybrid tensors")
    rows, cols = coo._idx[0], coo._idx[1]
    vals = coo._vals
    major, minor, n = (rows, cols, s.shape[0]) if layout is sparse_csr else \
        (cols, rows, s.shape[1])
    with no_grad_ctx():
        if layout is sparse_csc:  # column-major order: sort by (column, row)
            order = (cols * s.shape[0] + rows).argsort(stable=True)
            major, minor = major[order], minor[order]
        counts = bincount(major, minlength=n)
        ptr = cat([zeros((1,), dtype=_dt.int64, device=vals.device), counts.cumsum(0)])
    if layout is sparse_csc:
        vals = vals.index_select(0, order)
    return make_compressed(layout, ptr, minor, vals, tuple(s.shape))


def dense_to_coo(x: Tensor, sparse_dim: int | None = None) -> SparseCooTensor:
    """A coalesced COO tensor of the nonzero entries of dense ``x`` (its first
    ``sparse_dim`` dimensions sparse; for fewer, a slice is kept when any of it is nonzero).
    Differentiable in ``x``."""
    sd = x.ndim if sparse_dim is None else int(sparse_dim)
    if not 0 <= sd <= x.ndim:
        raise ValueError(f"to_sparse: sparse_dim {sparse_dim} is out of range for a "
                         f"{x.ndim}-D tensor")
    with no_grad_ctx():
        mask = x != 0
        if sd < x.ndim:
            mask = mask.reshape(tuple(x.shape[:sd]) + (-1,)).any(-1)
        idx = nonzero_torch(mask.reshape(1) if sd == 0 else mask).t()
        if sd == 0:
            idx = idx[:0]
    vals = x.reshape((1,) + tuple(x.shape)) if sd == 0 else x[tuple(idx[d] for d in range(sd))]
    return make_coo(idx, vals, tuple(x.shape), True)


def to_dense(s: Tensor, dtype: Any = None) -> Tensor:
    """The dense tensor (duplicates summed); differentiable in the values."""
    if not non_strided(s):
        return s if dtype is None else s.to(dtype)
    assert isinstance(s, SparseTensor)
    vals = s._vals if dtype is None else s._vals.to(dtype)
    coords = coordinates(s)
    if not coords:  # no sparse dimension: every value sits at the one position
        return vals.sum(0)
    base = zeros(s._shape, dtype=vals.dtype, device=vals.device)
    if vals.shape[0] == 0:
        return base + vals.sum() if vals.requires_grad else base
    return index_put(base, coords, vals, accumulate=True)


def to_layout(x: Tensor, layout: Any = None, sparse_dim: int | None = None) -> Tensor:
    """``Tensor.to_sparse(sparse_dim)`` / ``to_sparse(layout=...)``: ``x`` in ``layout``
    (COO when None)."""
    if layout is None or layout is sparse_coo:
        if isinstance(x, SparseCooTensor):
            return x
        if non_strided(x):
            return to_coo(x)
        return dense_to_coo(x, sparse_dim)
    if sparse_dim is not None:
        raise ValueError("to_sparse: sparse_dim is only for layout=torch.sparse_coo")
    if layout is sparse_csr or layout is sparse_csc:
        return to_compressed(x, layout)
    raise refuse_layout(layout)


def sparse_mask(x: Tensor, mask: Tensor) -> Tensor:
    """``x.sparse_mask(mask)``: dense ``x``'s values at the stored positions of sparse
    ``mask`` (coalesced first), in ``mask``'s layout."""
    if not non_strided(mask):
        raise TypeError("sparse_mask: the mask must be a sparse tensor")
    if non_strided(x):
        x = to_dense(x)
    if tuple(x.shape) != tuple(mask.shape):
        raise ValueError(f"sparse_mask: shapes differ: {tuple(x.shape)} and "
                         f"{tuple(mask.shape)}")
    if isinstance(mask, SparseCooTensor):
        m = coalesce(mask)
        sd = m._idx.shape[0]
        vals = x[tuple(m._idx[d] for d in range(sd))] if sd else x.unsqueeze(0)
        return make_coo(m._idx, vals, m._shape, True)
    assert isinstance(mask, SparseCompressedTensor)
    rows, cols = compressed_coordinates(mask)
    return make_compressed(mask._layout, mask._compressed, mask._plain, x[rows, cols],
                           mask._shape)

