"""Building sparse tensors: ``sparse_coo_tensor``, ``sparse_csr_tensor``,
``sparse_csc_tensor``, ``sparse_compressed_tensor`` and ``spdiags``.

Components are validated on construction, always (torch checks only with
``check_invariants=True``; an out-of-range index there is memory corruption, here a clear
error): index dtypes and shapes, the number of stored values, indices within ``size``, and
for compressed tensors well-formed pointers. Each check reads a few numbers from the device.
"""
from __future__ import annotations

from typing import Any, Sequence

from ...errors import DeviceMismatchError, ShapeError, mismatch_message
from .. import dtypes as _dt
from ..graph import is_grad_enabled, no_grad_ctx
from ..ops.creation import resolve_device, tensor
from ..ops.join import cat
from ..ops.shape import _alias_view
from ..tensor import Tensor
from .coalesce import linear_index
from .convert import refuse_layout, to_compressed
from .tensor import (SparseCompressedTensor, SparseCooTensor, make_compressed, make_coo,
                     sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr)

__all__ = ["sparse_coo_tensor", "sparse_csr_tensor", "sparse_csc_tensor",
           "sparse_compressed_tensor", "sparse_bsr_tensor", "sparse_bsc_tensor", "spdiags"]


def _values(values: Any, dtype: Any, device: Any) -> Tensor:
    if not isinstance(values, Tensor):
        return tensor(values, dtype=dtype, device=device)
    if device is not None:
        values = values.to(resolve_device(device))
    return values if dtype is None else values.to(dtype)


def _index(x: Any, name: str, vals: Tensor) -> Tensor:
    """``x`` as an int64 tensor on the values' device (a list is created there; a tensor
    elsewhere is a device mismatch, unless ``device=`` moved both)."""
    if not isinstance(x, Tensor):
        x = tensor(x, dtype=_dt.int64, device=vals.device)
    if x.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer tensor, got {x.dtype.name}")
    if x._device is not vals._device:
        raise DeviceMismatchError(mismatch_message(name, x.device, vals.device))
    return x if x.dtype is _dt.int64 else x.to(_dt.int64)


def _own_values(vals: Tensor, requires_grad: bool) -> Tensor:
    """The values a new sparse tensor stores: an alias of the given ones (sharing memory,
    as torch), a fresh leaf with ``requires_grad``, differentiable otherwise."""
    if requires_grad:
        return vals.detach().requires_grad_()
    if vals.requires_grad and is_grad_enabled():
        return _alias_view(vals)
    return vals.detach()


def _check_size(size: Any, inferred: list[int], dense: tuple[int, ...]) -> tuple[int, ...]:
    if size is None:
        return tuple(inferred) + dense
    size = tuple(int(s) for s in size)
    sd = len(inferred)
    if len(size) != sd + len(dense) or tuple(size[sd:]) != dense:
        raise ShapeError(f"sparse_coo_tensor: size {size} does not fit {sd} sparse "
                         f"dimension(s) and values of dense shape {dense}")
    for d, (n, need) in enumerate(zip(size, inferred)):
        if need > n:
            raise IndexError(f"sparse_coo_tensor: size is inconsistent with indices: for "
                             f"dim {d}, size is {n} but found index {need - 1}")
    return size


def sparse_coo_tensor(indices: Any, values: Any, size: Sequence[int] | None = None, *,
                      dtype: Any = None, device: Any = None, pin_memory: bool = False,
                      requires_grad: bool = False, check_invariants: bool | None = None,
                      is_coalesced: bool | None = None) -> SparseCooTensor:
    """A COO tensor with values ``values`` (nnz, *dense) at ``indices`` (sparse_dim, nnz);
    duplicates sum. ``size`` defaults to the smallest that holds the indices."""
    vals = _values(values, dtype, device)
    idx = _index(indices, "indices", vals)
    if idx.ndim != 2:
        raise ShapeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    if vals.ndim == 0:
        raise ShapeError("values must be at least 1-D (nnz, *dense_shape)")
    if idx.shape[1] != vals.shape[0]:
        raise ShapeError(f"indices and values must have same nnz, but got nnz from indices: "
                         f"{idx.shape[1]}, nnz from values: {vals.shape[0]}")
    sd, nnz = idx.shape
    inferred = [0] * sd
    if nnz and sd:
        with no_grad_ctx():
            low = idx.amin(1).tolist()
            inferred = [int(v) + 1 for v in idx.amax(1).tolist()]
        for d, v in enumerate(low):
            if v < 0:
                raise IndexError(f"sparse_coo_tensor: found negative index {v} for dim {d}")
    shape = _check_size(size, inferred, tuple(vals.shape[1:]))
    coalesced = False
    if is_coalesced:
        with no_grad_ctx():
            lin = linear_index(idx, shape[:sd])
            if nnz > 1 and not bool((lin[1:] > lin[:-1]).all()):
                raise ValueError("sparse_coo_tensor: is_coalesced=True but the indices are "
                                 "not sorted and unique")
        coalesced = True
    return make_coo(idx, _own_values(vals, requires_grad), shape, coalesced or nnz <= 1)


def sparse_compressed_tensor(compressed_indices: Any, plain_indices: Any, values: Any,
                             size: Sequence[int] | None = None, *, dtype: Any = None,
                             layout: Any = None, device: Any = None, pin_memory: bool = False,
                             requires_grad: bool = False,
                             check_invariants: bool | None = None) -> SparseCompressedTensor:
    """A 2-D CSR (``layout=torch.sparse_csr``) or CSC tensor from pointers into the stored
    values (``(n + 1,)``, starting at 0, non-decreasing) and their plain indices."""
    if layout is not sparse_csr and layout is not sparse_csc:
        raise refuse_layout(layout)
    csr = layout is sparse_csr
    names = ("crow_indices", "col_indices") if csr else ("ccol_indices", "row_indices")
    vals = _values(values, dtype, device)
    ptr = _index(compressed_indices, names[0], vals)
    plain = _index(plain_indices, names[1], vals)
    if ptr.ndim != 1 or plain.ndim != 1 or vals.ndim != 1:
        raise ShapeError(f"{names[0]}, {names[1]} and values must be 1-D (batched and hybrid "
                         f"compressed tensors are not supported), got shapes "
                         f"{list(ptr.shape)}, {list(plain.shape)}, {list(vals.shape)}")
    nnz = vals.shape[0]
    if plain.shape[0] != nnz or ptr.shape[0] == 0:
        raise ShapeError(f"{names[1]} and values must have the same length, and {names[0]} "
                         f"at least one entry; got {plain.shape[0]}, {nnz}, {ptr.shape[0]}")
    with no_grad_ctx():
        steps = ptr[1:] - ptr[:-1]
        first, last = ptr[0].item(), ptr[-1].item()
        if first != 0 or last != nnz or (steps.shape[0] and steps.min().item() < 0):
            raise ValueError(f"{names[0]} must start at 0, end at nnz ({nnz}) and not "
                             f"decrease; got first {first}, last {last}")
        low, high = (plain.amin().item(), plain.amax().item() + 1) if nnz else (0, 0)
    if low < 0:
        raise IndexError(f"{names[1]}: found negative index {low}")
    n_major = ptr.shape[0] - 1
    shape: tuple[int, ...]
    if size is None:
        shape = (n_major, high) if csr else (high, n_major)
    else:
        shape = tuple(int(s) for s in size)
        major, minor = (0, 1) if csr else (1, 0)
        if len(shape) != 2 or shape[major] != n_major or high > shape[minor]:
            raise ShapeError(f"size {shape} does not fit {names[0]} of length "
                             f"{ptr.shape[0]} and {names[1]} up to {high - 1}")
    return make_compressed(layout, ptr, plain, _own_values(vals, requires_grad), shape)


def sparse_csr_tensor(crow_indices: Any, col_indices: Any, values: Any,
                      size: Sequence[int] | None = None, **kwargs: Any
                      ) -> SparseCompressedTensor:
    """A CSR tensor: row ``i``'s values are ``values[crow[i]:crow[i + 1]]`` at columns
    ``col_indices[crow[i]:crow[i + 1]]``."""
    return sparse_compressed_tensor(crow_indices, col_indices, values, size,
                                    layout=sparse_csr, **kwargs)


def sparse_csc_tensor(ccol_indices: Any, row_indices: Any, values: Any,
                      size: Sequence[int] | None = None, **kwargs: Any
                      ) -> SparseCompressedTensor:
    """A CSC tensor: column ``j``'s values are ``values[ccol[j]:ccol[j + 1]]`` at rows
    ``row_indices[ccol[j]:ccol[j + 1]]``."""
    return sparse_compressed_tensor(ccol_indices, row_indices, values, size,
                                    layout=sparse_csc, **kwargs)


def sparse_bsr_tensor(*args: Any, **kwargs: Any) -> Any:
    """Blocked CSR is not supported (a clear error naming the supported layouts)."""
    raise refuse_layout(sparse_bsr)


def sparse_bsc_tensor(*args: Any, **kwargs: Any) -> Any:
    """Blocked CSC is not supported (a clear error naming the supported layouts)."""
    raise refuse_layout(sparse_bsc)


def spdiags(diagonals: Tensor, offsets: Tensor, shape: Sequence[int],
            layout: Any = None) -> Tensor:
    """A 2-D sparse tensor with ``diagonals[k]`` on diagonal ``offsets[k]``: entry
    ``(c - offsets[k], c)`` is ``diagonals[k, c]`` (torch's/SciPy's column convention)."""
    if not isinstance(diagonals, Tensor) or not isinstance(offsets, Tensor):
        raise TypeError("spdiags: diagonals and offsets must be tensors")
    if diagonals.ndim != 2 or offsets.ndim != 1 or offsets.shape[0] != diagonals.shape[0]:
        raise ShapeError(f"spdiags: expected diagonals (k, n) and offsets (k,), got "
                         f"{list(diagonals.shape)} and {list(offsets.shape)}")
    m, n = (int(s) for s in shape)
    offs = [int(o) for o in offsets.tolist()]
    if len(set(offs)) != len(offs):
        raise ValueError("spdiags: offset tensor contains duplicate values")
    dev = diagonals.device
    rows, cols, vals = [], [], []
    for k, off in enumerate(offs):
        c = list(range(max(0, off), min(n, m + off, diagonals.shape[1])))
        col = tensor(c, dtype=_dt.int64, device=dev)
        rows.append(col - off)
        cols.append(col)
        vals.append(diagonals[k].index_select(0, col))
    if rows:
        idx = cat([cat(rows).unsqueeze(0), cat(cols).unsqueeze(0)])
        out = make_coo(idx, cat(vals), (m, n), False)
    else:
        out = make_coo(tensor([[], []], dtype=_dt.int64, device=dev),
                       diagonals.reshape(-1)[:0], (m, n), True)
    if layout is None or layout is sparse_coo:
        return out
    if layout is sparse_csr or layout is sparse_csc:
        return to_compressed(out, layout)
    raise refuse_layout(layout)
