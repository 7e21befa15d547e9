"""ATen's private kernels, each written once over omnitensor's public differentiable ops, so
they run on every device and their gradients come from autograd.

Each takes its ATen schema's arguments (``aten::slice.Tensor(Tensor self, int dim=0,
SymInt? start=None, SymInt? end=None, SymInt step=1)``) and is registered under
``(name, overload)`` in :data:`KERNELS`; ``(name, "")`` is the packet's own call where the
overloads differ in their arguments (``_native_batch_norm_legit`` with and without stats).
Host reads are bookkeeping only (segment lengths).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

import omnitensor as _ot
from ..core.tensor import Tensor

__all__ = ["KERNELS", "TORCH_NAMES", "kernel"]

KERNELS: dict[tuple[str, str], Callable[..., Any]] = {}
#: the kernels torch also exposes at its top level (``torch._chunk_cat``): name -> aten name
TORCH_NAMES: dict[str, str] = {}


def kernel(name: str, *overloads: str, torch_names: Sequence[str] = ()
           ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as ``aten::name.<overload>`` for each overload (``default`` when none),
    and ``torch.<n>`` for each of ``torch_names`` as the operator's packet."""
    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        for ov in overloads or ("default",):
            KERNELS[(name, ov)] = fn
        TORCH_NAMES.update(dict.fromkeys(torch_names, name))
        return fn
    return deco


def _dim(dim: int, ndim: int, op: str) -> int:
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of "
                         f"[{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {dim})")
    return dim % max(ndim, 1)


# ---------------------------------------------------------------------------- views
@kernel("slice", "Tensor")
def slice_tensor(self: Tensor, dim: int = 0, start: int | None = None,
                 end: int | None = None, step: int = 1) -> Tensor:
    """``self[..., start:end:step, ...]`` along ``dim``: a view (Python's clamping of
    out-of-range bounds, as ATen's)."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = _dim(dim, self.ndim, "slice")
    return self[(slice(None),) * d + (slice(start, end, step),)]


@kernel("_chunk_cat", torch_names=("_chunk_cat",))
def chunk_cat(tensors: Sequence[Tensor], dim: int, num_chunks: int) -> Tensor:
    """Each tensor split into ``num_chunks`` chunks along ``dim`` (zero-padded to a multiple
    of it), chunk ``i`` of every tensor flattened and concatenated: shape
    ``sizes[:dim] + (num_chunks, sum of the chunks' numels)``."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("_chunk_cat expects a non-empty input tensor list")
    if num_chunks < 1:
        raise RuntimeError("_chunk_cat expects positive num_chunks")
    ndims = {t.ndim for t in tensors}
    if len(ndims) > 1:
        if dim < 0:
            raise RuntimeError("_chunk_cat expects non-negative dim when input tensors have "
                               "different ndims")
        if dim >= min(ndims):
            raise RuntimeError("_chunk_cat expects dim < ndim for all input tensors")
    d = _dim(dim, tensors[0].ndim, "_chunk_cat")
    lead = tuple(tensors[0].shape[:d])
    pieces = []
    for t in tensors:
        if t.numel() == 0:
            raise RuntimeError("_chunk_cat expects non-empty tensor")
        if tuple(t.shape[:d]) != lead:
            raise RuntimeError("_chunk_cat expects same sizes of 0,...,dim-1 dimensions for "
                               "all tensors")
        size = t.shape[d]
        pad = -(-size // num_chunks) * num_chunks - size
        if pad:
            zeros = _ot.zeros(lead + (pad,) + tuple(t.shape[d + 1:]), dtype=t.dtype,
                              device=t.device)
            t = _ot.cat([t, zeros], d)
        pieces.append(t.reshape(lead + (num_chunks, -1)))
    return _ot.cat(pieces, d + 1)


# ----------------------------------------------------------------- masked indexing
def _clamped(self: Tensor, indices: Sequence[Tensor | None]) -> tuple[Any, ...]:
    """``indices`` as an indexing key, each clamped into its dimension (the masked-off
    positions of an "unsafe" index may be out of range)."""
    key: list[Any] = []
    for i, idx in enumerate(indices):
        if idx is None:
            key.append(slice(None))
        else:
            n = self.shape[i]
            key.append(idx.clamp(-n, n - 1))
    return tuple(key)


@kernel("_unsafe_masked_index", torch_names=("_unsafe_masked_index",))
def unsafe_masked_index(self: Tensor, mask: Tensor, indices: Sequence[Tensor | None],
                        fill: Any) -> Tensor:
    """``self[indices]`` where ``mask`` holds, ``fill`` elsewhere."""
    if self.numel() == 0:
        shape = _ot.broadcast_shapes(*(i.shape for i in indices if i is not None))
        return _ot.full(tuple(shape) + tuple(self.shape[len(indices):]), fill,
                        dtype=self.dtype, device=self.device)
    return self[_clamped(self, indices)].masked_fill(mask.logical_not(), fill)


@kernel("_unsafe_masked_index_put_accumulate", torch_names=("_unsafe_masked_index_put_accumulate",))
def unsafe_masked_index_put_accumulate(self: Tensor, mask: Tensor,
                                       indices: Sequence[Tensor | None],
                                       values: Tensor) -> Tensor:
    """``self`` with ``values`` added at ``indices`` where ``mask`` holds (out of place)."""
    key = _clamped(self, indices)
    return self.index_put(key, values.masked_fill(mask.logical_not(), 0), accumulate=True)


# ------------------------------------------------------------------------- softmax
@kernel("_safe_softmax", torch_names=("_safe_softmax",))
def safe_softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """softmax, with 0 (not NaN) along a slice that is entirely ``-inf``."""
    masked = (self == -math.inf).all(dim, keepdim=True)
    # the masked slices are softmaxed as zeros, so no NaN reaches the gradient (torch's
    # backward is softmax's, of the output that is 0 there)
    out = _ot.softmax(self.masked_fill(masked, 0), dim, dtype=dtype)
    return out.masked_fill(masked, 0)


@kernel("_softmax_backward_data", torch_names=("_softmax_backward_data",))
def softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int,
                          input_dtype: Any) -> Tensor:
    """The gradient of softmax's input from its output: ``y * (g - sum(g * y, dim))``."""
    if grad_output.dtype != input_dtype:
        raise RuntimeError(f"expected scalar type {input_dtype} but found "
                           f"{grad_output.dtype}")
    return output * (grad_output - (grad_output * output).sum(dim, keepdim=True))


# ------------------------------------------------------------- dropout and pooling
@kernel("native_dropout_backward")
def native_dropout_backward(grad_output: Tensor, mask: Tensor, scale: float) -> Tensor:
    """``grad_output * mask * scale`` (in that order: torch's dtype promotion)."""
    return grad_output * mask * scale


@kernel("max_pool2d_with_indices_backward")
def max_pool2d_with_indices_backward(grad_output: Tensor, self: Tensor, kernel_size: Any,
                                     stride: Any, padding: Any, dilation: Any,
                                     ceil_mode: bool, indices: Tensor) -> Tensor:
    """The gradient of max_pool2d's input: each output's gradient added at the input
    position its index names (the window arguments are the indices' already)."""
    flat = _ot.zeros(tuple(self.shape[:-2]) + (self.shape[-2] * self.shape[-1],),
                     dtype=grad_output.dtype, device=grad_output.device)
    return flat.scatter_add(-1, indices.flatten(-2), grad_output.flatten(-2)).reshape(
        self.shape)


# ------------------------------------------------------------------ segment reduce
_IDENTITY = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "max": -math.inf, "min": math.inf}
_SCATTER = {"sum": "sum", "mean": "sum", "prod": "prod", "max": "amax", "min": "amin"}


def _segment_ids(lengths: np.ndarray, n: int) -> np.ndarray:
    """(…, n): the segment each position along the axis falls in, per leading index."""
    ends = np.cumsum(lengths, axis=-1)
    pos = np.arange(n)
    flat = ends.reshape(-1, ends.shape[-1])
    ids = np.stack([np.searchsorted(row, pos, side="right") for row in flat])
    return ids.reshape(ends.shape[:-1] + (n,))


@kernel("segment_reduce", torch_names=("segment_reduce", "_segment_reduce"))
def segment_reduce(data: Tensor, reduce: str, *, lengths: Tensor | None = None,
                   indices: Tensor | None = None, offsets: Tensor | None = None,
                   axis: int = 0, unsafe: bool = False, initial: Any = None) -> Tensor:
    """``reduce`` (sum, mean, prod, max, min) of each segment of ``data`` along ``axis``,
    segments given by ``lengths`` or ``offsets`` (batched over the leading dimensions);
    ``initial`` starts every segment's reduction (an empty one is it, or the reduction's
    identity; NaN for mean)."""
    if reduce not in _IDENTITY:
        raise RuntimeError(f"segment_reduce(): reduction {reduce!r} is not supported")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined")
    if lengths is None:
        off = np.asarray(offsets.tolist(), np.int64)  # type: ignore[union-attr]
        lens = np.diff(off, axis=-1)
    else:
        lens = np.asarray(lengths.tolist(), np.int64)
    ax = _dim(axis, data.ndim, "segment_reduce")
    if lens.ndim - 1 != ax:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of "
                           f"lengths but got {ax}.")
    n = data.shape[ax]
    if not unsafe and (lens < 0).any():
        raise RuntimeError("segment_reduce(): lengths contains negative value!")
    if not unsafe and (lens.sum(-1) != n).any():
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to "
                           "sum to data.size(lengths.dim()-1) when !unsafe.")
    rest = tuple(data.shape[ax + 1:])
    ids = _ot.tensor(_segment_ids(lens, n), device=data.device)
    ids = ids.reshape(ids.shape + (1,) * len(rest)).expand(tuple(data.shape))
    start = _IDENTITY[reduce] if initial is None else initial
    # one extra segment takes the positions past the last (``unsafe`` lengths may sum to
    # less than the axis), and is dropped
    extra = lens.shape[:-1] + (lens.shape[-1] + 1,) + rest
    out = _ot.full(extra, start, dtype=data.dtype, device=data.device)
    out = out.scatter_reduce(ax, ids, data, _SCATTER[reduce], include_self=True)
    out = out.narrow(ax, 0, lens.shape[-1])
    if reduce == "mean":
        count = lens if initial is None else np.maximum(lens, 1)
        denom = _ot.tensor(count.reshape(count.shape + (1,) * len(rest)), dtype=data.dtype,
                           device=data.device)
        out = out / denom
    return out
