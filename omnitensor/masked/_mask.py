"""The rules every ``torch.masked`` op shares: dims, the canonical mask, identity fills.

torch's semantics (``torch/masked/_ops.py``): a mask broadcasts to the input's shape (it may
not have more dims), is read as bool, and masked-out elements are replaced by the
operation's identity value (0 for sums, 1 for products, -inf / the integer minimum for
maxima, +inf / the maximum for minima, NaN for the median) before the plain op runs, so the
plain op's autograd applies and a fully masked-out slice gives the identity (or NaN where
the op has none: mean, var, std, median).
"""
# ruff: noqa: A002  (torch's parameter and function names: input, ord, sum)
from __future__ import annotations

import math
from typing import Any

import omnitensor as _ot

from ..errors import IndexOutOfRangeError, OmnitensorError


class MaskedArgumentError(OmnitensorError, ValueError):
    """A masked op's argument cannot be used: a dtype it has no rule for, an integer
    median over a fully masked-out slice, both ``unbiased`` and ``correction`` given."""


class MaskedTypeError(OmnitensorError, TypeError):
    """A masked op got something that is not a tensor where a tensor is needed."""


class RepeatedDimError(OmnitensorError, RuntimeError):
    """A dim appears twice in a masked reduction's ``dim`` (torch's RuntimeError)."""


DimOrDims = Any  # None, an int, or a sequence of ints

#: integer dtypes whose sum / prod is int64 when no dtype is given (torch's rule)
_PROMOTED_TO_INT64 = ("bool", "uint8", "int8", "int16", "int32")


def check_tensor(op: str, name: str, value: Any) -> Any:
    """``value`` if it is a Tensor, else a clear error naming the op and the argument."""
    if not isinstance(value, _ot.Tensor):
        raise MaskedTypeError(f"masked.{op}: {name} must be a Tensor, got "
                              f"{type(value).__name__}")
    return value


def canonical_dim(op: str, dim: DimOrDims, ndim: int) -> tuple[int, ...]:
    """``dim`` as a sorted tuple of non-negative dims; ``None`` and ``()`` mean every dim.
    A 0-d input accepts dim 0 and -1 (as torch's reductions do)."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    bound = max(ndim, 1)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    seen: list[int] = []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int):
            raise MaskedTypeError(f"masked.{op}: dim must be an int or a sequence of ints, "
                                  f"got {type(d).__name__}")
        if d in seen:
            raise RepeatedDimError(f"masked.{op}: dim={d} appears multiple times in the "
                                   f"list of dims")
        if d >= bound or d < -bound:
            raise IndexOutOfRangeError(
                f"masked.{op}: Dimension out of range (expected to be in range of "
                f"[{-bound}, {bound - 1}], but got {d})")
        seen.append(d)
    return tuple(sorted(d % bound for d in seen))


def reduce_dims(x: Any, dims: tuple[int, ...]) -> Any:
    """The ``dim`` argument for a plain reduction of ``x`` over ``dims`` (None for a 0-d
    ``x``, whose only dim 0 / -1 means the whole scalar)."""
    return None if x.ndim == 0 else dims


def input_mask(op: str, input: Any, mask: Any) -> Any:
    """The canonical mask: ``mask`` broadcast to ``input``'s shape, as bool."""
    check_tensor(op, "mask", mask)
    if tuple(mask.shape) != tuple(input.shape):
        if mask.ndim > input.ndim:
            raise IndexOutOfRangeError(
                f"masked.{op}: expected a mask broadcastable to the input's shape "
                f"{tuple(input.shape)}, got mask dimensionality {mask.ndim} higher than "
                f"the input's {input.ndim}")
        mask = _ot.broadcast_to(mask, tuple(input.shape))
    return mask if mask.dtype == _ot.bool else mask.to(dtype=_ot.bool)


def identity(op: str, input: Any, ord: Any = 2.0) -> Any:
    """The identity value of reduction ``op`` for ``input``'s dtype (a Python number), or
    None when it has none (mean, var, std; maxima of bool)."""
    dt = input.dtype
    if op in ("sum", "cumsum"):
        return 0
    if op in ("prod", "cumprod"):
        return 1
    if op in ("amax", "argmax", "logaddexp", "logsumexp", "amin", "argmin"):
        high = op in ("amin", "argmin")
        if dt.is_floating_point or dt.is_complex:
            return math.inf if high else -math.inf
        if dt.is_signed or dt == _ot.uint8:
            info = _ot.iinfo(dt)
            return info.max if high else info.min
        return None
    if op == "norm":
        if ord == -math.inf:
            if not dt.is_floating_point:
                raise MaskedArgumentError(f"masked.norm: ord=-inf needs a floating point "
                                          f"input, got {dt}")
            return math.inf
        return 0
    if op == "median":
        return math.nan
    return None


def combine(op: str, input: Any, mask: Any, *, fill_as: str | None = None,
            ord: Any = 2.0) -> Any:
    """``input`` with its masked-out elements replaced by the identity of ``fill_as``
    (default ``op``); ``input`` itself when ``mask`` is None."""
    if mask is None:
        return input
    canonical = input_mask(op, input, mask)
    value = identity(fill_as or op, input, ord)
    if value is None:
        raise MaskedArgumentError(f"masked.{op}: no identity value for {input.dtype} input, "
                                  f"so a mask cannot be applied")
    fill = _ot.full((), value, dtype=input.dtype, device=input.device)
    return _ot.where(canonical, input, fill)


def promoted_sum_dtype(input: Any, dtype: Any) -> Any:
    """The result dtype of a masked sum / prod: ``dtype``, else the input's, with bool and
    integers narrower than int64 widened to int64."""
    if dtype is not None:
        return dtype
    return _ot.int64 if input.dtype.name in _PROMOTED_TO_INT64 else input.dtype



_REDUCTIONS = frozenset({"sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "median",
                         "norm", "var", "std", "logsumexp"})
_NORMALIZATIONS = frozenset({"softmax", "log_softmax", "softmin", "normalize", "cumsum",
                             "cumprod"})


def canonical_input_mask(input: Any, *args: Any, **kwargs: Any) -> Any:
    """torch's ``torch.masked._input_mask``: ``kwargs['mask']`` broadcast to ``input``'s
    shape, as bool (torch's test wrappers call it)."""
    check_tensor("_input_mask", "input", input)
    mask = kwargs.get("mask")
    if mask is None:
        raise MaskedArgumentError("masked._input_mask: requires an explicit mask")
    return input_mask("_input_mask", input, mask)


def output_mask(op: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
    """torch's ``torch.masked._output_mask``: which elements of ``op(input, *args,
    **kwargs)`` see at least one masked-in element (a reduction's slices with any; a
    normalization's own input mask)."""
    name = getattr(op, "__name__", None)
    if not callable(op) or name not in _REDUCTIONS | _NORMALIZATIONS:
        raise MaskedArgumentError(f"masked._output_mask: expected a masked operation, got "
                                  f"{name or type(op).__name__}")
    if name in _NORMALIZATIONS:
        return canonical_input_mask(input, *args, **kwargs)
    if name == "norm" and args:
        args = args[1:]  # the ord argument
    dim = args[0] if args else kwargs.get("dim")
    mask = canonical_input_mask(input, *args, **kwargs)
    dims = canonical_dim(name, dim, input.ndim)
    return _ot.any(mask, reduce_dims(mask, dims), bool(kwargs.get("keepdim", False)))
