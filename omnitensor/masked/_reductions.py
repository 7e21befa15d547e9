"""``torch.masked`` reductions: sum, prod, amax, amin, argmax, argmin, mean, median,
logsumexp, norm, var, std (torch's signatures and dtype rules; see :mod:`._mask`)."""
# ruff: noqa: A001, A002  (torch's parameter and function names: input, ord, sum)
from __future__ import annotations

from typing import Any

import omnitensor as _ot

from ._mask import (DimOrDims, MaskedArgumentError, canonical_dim, check_tensor, combine,
                    input_mask, promoted_sum_dtype, reduce_dims)

__all__ = ["sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "median",
           "logsumexp", "norm", "var", "std"]


def sum(input: Any, dim: DimOrDims = None, *, keepdim: bool | None = False,
        dtype: Any = None, mask: Any = None) -> Any:
    """Sum of ``input`` over ``dim`` (default: all dims) counting only the elements where
    ``mask`` (broadcast to ``input``) is True; a fully masked-out slice gives 0. Without
    ``dtype``, bool and integers narrower than int64 sum in int64."""
    check_tensor("sum", "input", input)
    dtype = promoted_sum_dtype(input, dtype)
    dims = canonical_dim("sum", dim, input.ndim)
    x = combine("sum", input, mask)
    return _ot.sum(x, reduce_dims(x, dims), bool(keepdim), dtype=dtype)


def prod(input: Any, dim: DimOrDims = None, *, keepdim: bool | None = False,
         dtype: Any = None, mask: Any = None) -> Any:
    """Product of the masked-in elements of ``input`` over ``dim``; a fully masked-out
    slice gives 1. Dtype rule as :func:`sum`."""
    check_tensor("prod", "input", input)
    dtype = promoted_sum_dtype(input, dtype)
    dims = canonical_dim("prod", dim, input.ndim)
    result = combine("prod", input, mask).to(dtype=dtype)
    if result.ndim == 0:
        return result.prod() if not keepdim else result
    for d in reversed(dims):  # one dim at a time, as torch does
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def _extreme(op: str, input: Any, dim: DimOrDims, keepdim: Any, dtype: Any,
             mask: Any) -> Any:
    check_tensor(op, "input", input)
    dtype = input.dtype if dtype is None else dtype
    x = combine(op, input, mask)
    dims = canonical_dim(op, dim, x.ndim)
    fn = _ot.amax if op == "amax" else _ot.amin
    return fn(x, reduce_dims(x, dims), bool(keepdim)).to(dtype=dtype)


def amax(input: Any, dim: DimOrDims = None, *, keepdim: bool | None = False,
         dtype: Any = None, mask: Any = None) -> Any:
    """Maximum of the masked-in elements over ``dim``; a fully masked-out slice gives -inf
    (the dtype's minimum for integers). The result is cast to ``dtype``."""
    return _extreme("amax", input, dim, keepdim, dtype, mask)


def amin(input: Any, dim: DimOrDims = None, *, keepdim: bool | None = False,
         dtype: Any = None, mask: Any = None) -> Any:
    """Minimum of the masked-in elements over ``dim``; a fully masked-out slice gives +inf
    (the dtype's maximum for integers). The result is cast to ``dtype``."""
    return _extreme("amin", input, dim, keepdim, dtype, mask)


def _arg_extreme(op: str, input: Any, dim: Any, keepdim: Any, dtype: Any,
                 mask: Any) -> Any:
    check_tensor(op, "input", input)
    dtype = input.dtype if dtype is None else dtype
    x = combine(op, input, mask)
    if dim is not None:
        canonical_dim(op, dim, x.ndim)
    fn = _ot.argmax if op == "argmax" else _ot.argmin
    return fn(x, dim, bool(keepdim)).to(dtype=dtype)


def argmax(input: Any, dim: int | None = None, *, keepdim: bool | None = False,
           dtype: Any = None, mask: Any = None) -> Any:
    """Index of the maximum among the masked-in elements along ``dim`` (flattened when
    None). As torch, the indices are cast to ``dtype`` (default: the input's dtype)."""
    return _arg_extreme("argmax", input, dim, keepdim, dtype, mask)


def argmin(input: Any, dim: int | None = None, *, keepdim: bool | None = False,
           dtype: Any = None, mask: Any = None) -> Any:
    """Index of the minimum among the masked-in elements along ``dim``; indices cast to
    ``dtype`` (default: the input's dtype), as torch does."""
    return _arg_extreme("argmin", input, dim, keepdim, dtype, mask)


def _count(input: Any, dims: tuple[int, ...], keepdim: bool, inmask: Any) -> Any:
    """The number of masked-in elements of each slice (int64)."""
    if inmask is None:
        inmask = _ot.ones(tuple(input.shape), dtype=_ot.bool, device=input.device)
    return _ot.sum(inmask, reduce_dims(inmask, dims), keepdim, dtype=_ot.int64)


def mean(input: Any, dim: DimOrDims = None, *, keepdim: bool | None = False,
         dtype: Any = None, mask: Any = None) -> Any:
    """Mean of the masked-in elements over ``dim``; NaN for a fully masked-out slice.
    The result dtype (``dtype``, else the input's) must be floating point or complex."""
    check_tensor("mean", "input", input)
    source = "Input" if dtype is None else "Optional"
    dtype = input.dtype if dtype is None else dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise MaskedArgumentError(
            f"masked.mean: Could not infer output dtype. {source} dtype must be either a "
            f"floating point or complex dtype. Got: {dtype}")
    dims = canonical_dim("mean", dim, input.ndim)
    inmask = None if mask is None else input_mask("mean", input, mask)
    count = _count(input, dims, bool(keepdim), inmask)
    total = sum(input, dims, keepdim=keepdim, dtype=dtype, mask=inmask)
    return total / count


def median(input: Any, dim: int = -1, *, keepdim: bool = False, dtype: Any = None,
           mask: Any = None) -> Any:
    """Median of the masked-in elements along one ``dim`` (torch.nanmedian with NaN at
    masked-out places): NaN for a fully masked-out slice of a floating input; an integer
    input computes in float32 and may not have one."""
    check_tensor("median", "input", input)
    dtype = input.dtype if dtype is None else dtype
    d = canonical_dim("median", dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(dtype=_ot.float32)
    x = combine("median", input, mask)
    out = _ot.nanmedian(x, d if x.ndim else None, keepdim)
    out = out.values if x.ndim else out
    if is_float:
        return out
    if bool(_ot.isnan(out).any()):
        raise MaskedArgumentError("masked.median: expects no fully masked out rows if dtype "
                                  "is not floating point")
    return out.to(dtype=dtype)


def logsumexp(input: Any, dim: DimOrDims = None, *, keepdim: bool = False,
              dtype: Any = None, mask: Any = None) -> Any:
    """log(sum(exp)) of the masked-in elements over ``dim``; -inf for a fully masked-out
    slice. The result is cast to ``dtype`` (default: the input's)."""
    check_tensor("logsumexp", "input", input)
    dtype = input.dtype if dtype is None else dtype
    dims = canonical_dim("logsumexp", dim, input.ndim)
    x = combine("logsumexp", input, mask)
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = x.to(dtype=_ot.float32)
    return _ot.logsumexp(x, reduce_dims(x, dims) or (), bool(keepdim)).to(dtype=dtype)


def norm(input: Any, ord: float | None = 2.0, dim: DimOrDims = None, *,
         keepdim: bool | None = False, dtype: Any = None, mask: Any = None) -> Any:
    """Vector ``ord``-norm of the masked-in elements over ``dim``; masked-out elements
    count as 0 (as +inf for ``ord=-inf``)."""
    check_tensor("norm", "input", input)
    dtype = input.dtype if dtype is None else dtype
    x = combine("norm", input, mask, ord=ord)
    dims = canonical_dim("norm", dim, input.ndim)
    return _ot.linalg.vector_norm(x, ord, reduce_dims(x, dims), bool(keepdim), dtype=dtype)


def _std_var(op: str, input: Any, dim: DimOrDims, unbiased: bool | None,
             correction: Any, keepdim: Any, dtype: Any, mask: Any) -> Any:
    check_tensor(op, "input", input)
    if unbiased is not None and correction is not None:
        raise MaskedArgumentError(f"masked.{op}: only one of unbiased and correction may "
                                  f"be given")
    corr = 1.0 if unbiased is None else (1.0 if unbiased else 0.0)
    corr = float(correction) if correction is not None else corr
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = _ot.float32
    compute = dtype if (dtype.is_floating_point or dtype.is_complex) else _ot.float32
    dims = canonical_dim(op, dim, input.ndim)
    inmask = None if mask is None else input_mask(op, input, mask)
    count = _count(input, dims, True, inmask)
    mean_ = sum(input, dims, keepdim=True, dtype=dtype, mask=inmask) / count
    x = input - mean_
    total = sum(x * x.conj() if x.dtype.is_complex else x * x, dims, keepdim=keepdim,
                dtype=compute, mask=inmask)
    if not keepdim:
        count = count.reshape(tuple(total.shape))
    if corr != 0:
        count = count.to(dtype=compute.to_real() if compute.is_complex else compute)
        count = _ot.maximum(count - corr, _ot.zeros((), dtype=count.dtype,
                                                    device=count.device))
    out = (total / count).to(dtype=dtype)
    return _ot.sqrt(out) if op == "std" else out


def var(input: Any, dim: DimOrDims = None, unbiased: bool | None = None, *,
        correction: int | float | None = None, keepdim: bool | None = False,
        dtype: Any = None, mask: Any = None) -> Any:
    """Variance of the masked-in elements over ``dim`` with ``correction`` (default 1;
    ``unbiased=False`` means 0); NaN where no element is masked in."""
    return _std_var("var", input, dim, unbiased, correction, keepdim, dtype, mask)


def std(input: Any, dim: DimOrDims = None, unbiased: bool | None = None, *,
        correction: int | None = None, keepdim: bool | None = False,
        dtype: Any = None, mask: Any = None) -> Any:
    """Standard deviation of the masked-in elements (the square root of :func:`var`)."""
    return _std_var("std", input, dim, unbiased, correction, keepdim, dtype, mask)

