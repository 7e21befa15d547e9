"""Out-of-place writes into a region of a tensor: torch's ``diagonal_scatter``,
``select_scatter``, ``slice_scatter``, ``as_strided_scatter`` (``src`` embedded where a
view would see it), ``masked_scatter`` and ``put``.

Each clones ``input`` and writes through the matching view (core's in-place machinery
records torch's CopySlices node) or index (``index_put``), so the result differentiates with
respect to both ``input`` and ``src``, on every backend.
"""
from __future__ import annotations

from typing import Any

from ...errors import ShapeError
from .. import dtypes as _dt
from ..shape_util import broadcast_shapes, normalize_axis
from ..tensor import Tensor
from . import shape as sh, storage
from .torch_extras import index_put

__all__ = ["diagonal_scatter", "select_scatter", "slice_scatter", "as_strided_scatter",
           "masked_scatter", "put"]


def _embed(op: str, input: Tensor, src: Tensor, view: Any) -> Tensor:  # noqa: A002
    """``input`` with ``view(copy of input)`` replaced by ``src`` (same shape)."""
    if not isinstance(src, Tensor):
        raise TypeError(f"{op}(): argument 'src' must be Tensor, not {type(src).__name__}")
    out = input.clone()
    region = view(out)
    if tuple(region.shape) != tuple(src.shape):
        raise ShapeError(f"{op}: expected src to have a size equal to the slice of self: "
                         f"src size {list(src.shape)}, slice size {list(region.shape)}")
    region.copy_(src)
    return out


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,  # noqa: A002
                     dim2: int = 1) -> Tensor:
    """``input`` with its diagonal (``offset``, ``dim1``, ``dim2``) replaced by ``src``."""
    return _embed("diagonal_scatter", input, src,
                  lambda t: sh.diagonal(t, offset, dim1, dim2))


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:  # noqa: A002
    """``input`` with ``input.select(dim, index)`` replaced by ``src``."""
    return _embed("select_scatter", input, src, lambda t: t.select(dim, index))


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,  # noqa: A002
                  end: int | None = None, step: int = 1) -> Tensor:
    """``input`` with ``input[..., start:end:step, ...]`` (along ``dim``) replaced by
    ``src``."""
    if step <= 0:
        raise ValueError(f"slice_scatter: slice step must be positive, got {step}")
    d = normalize_axis(dim, input.ndim)
    key = (slice(None),) * d + (slice(start, end, step),)
    return _embed("slice_scatter", input, src, lambda t: t[key])


def as_strided_scatter(input: Tensor, src: Tensor, size: Any, stride: Any,  # noqa: A002
                       storage_offset: int | None = None) -> Tensor:
    """``input`` (as a contiguous storage) with the elements ``as_strided(size, stride,
    storage_offset)`` would see replaced by ``src``."""
    if not isinstance(src, Tensor):
        raise TypeError(f"as_strided_scatter(): argument 'src' must be Tensor, not "
                        f"{type(src).__name__}")
    region = storage.as_strided(input.detach(), size, stride, storage_offset)  # checks
    if tuple(region.shape) != tuple(src.shape):
        raise ShapeError(f"as_strided_scatter: expected src to have a size equal to the "
                         f"slice of self: src size {list(src.shape)}, slice size "
                         f"{list(region.shape)}")
    off = storage.storage_offset(input) if storage_offset is None else int(storage_offset)
    lin = storage._linear_index(input, tuple(region.shape), tuple(int(s) for s in stride),
                                off)
    flat = index_put(input.reshape(-1), (lin.reshape(-1),), src.reshape(-1).to(input.dtype))
    return flat.reshape(input.shape)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:  # noqa: A002
    """``input`` with the positions where ``mask`` (broadcast) is True filled, in order,
    with the leading elements of ``source``."""
    if not isinstance(mask, Tensor) or mask.dtype is not _dt.bool_:
        raise _dt.DTypeError("masked_scatter: expected a bool mask tensor")
    if source.dtype is not input.dtype:
        raise _dt.DTypeError(f"masked_scatter: expected source of input's dtype "
                             f"{input.dtype.name}, got {source.dtype.name}")
    shape = broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    x = input.broadcast_to(shape) if tuple(input.shape) != shape else input
    m = mask.broadcast_to(shape)
    k = int(m.sum().item())
    if k > source.numel():
        raise ShapeError(f"masked_scatter: the mask selects {k} elements but source has "
                         f"only {source.numel()}")
    out = x.clone()
    out[m] = source.reshape(-1)[:k]
    return out


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False  # noqa: A002
        ) -> Tensor:
    """``input`` (as if flattened) with ``source``'s elements written (or, with
    ``accumulate``, added) at the flat positions ``index``."""
    if index.dtype is not _dt.int64:
        raise _dt.DTypeError(f"put(): Expected a long tensor for index, but got "
                             f"{index.dtype.name}")
    if source.dtype is not input.dtype:
        raise _dt.DTypeError(f"put(): self ({input.dtype.name}) and source "
                             f"({source.dtype.name}) must have the same scalar type")
    if index.numel() != source.numel():
        raise ShapeError(f"put(): expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, "
                         f"index.numel() = {index.numel()}")
    flat = input.reshape(-1)
    res = index_put(flat, (index.reshape(-1),), source.reshape(-1), accumulate)
    return res.reshape(input.shape)


def bind(T: Any) -> None:
    """Tensor methods (and in-place variants) of this module."""
    from .inplace import inplace_method
    for name in ("diagonal_scatter", "select_scatter", "slice_scatter",
                 "as_strided_scatter", "masked_scatter", "put"):
        setattr(T, name, globals()[name])
    T.masked_scatter_ = inplace_method(masked_scatter, "masked_scatter")
    T.put_ = inplace_method(put, "put")
