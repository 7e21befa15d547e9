"""``torch.masked`` normalizations and scans: softmax, log_softmax, softmin, normalize,
cumsum, cumprod, and the binary logaddexp (torch's signatures; see :mod:`._mask`).

Each keeps the input's shape: masked-out places hold what the plain op makes of the
identity fill (0 for softmax, -inf for log_softmax, the running value for the scans).
"""
# ruff: noqa: A002  (torch's parameter and function names: input, ord, sum)
from __future__ import annotations

from typing import Any

import omnitensor as _ot

from ._mask import canonical_dim, check_tensor, combine
from ._reductions import norm

__all__ = ["softmax", "log_softmax", "softmin", "normalize", "cumsum", "cumprod",
           "logaddexp"]


def _functional() -> Any:
    from .. import nn
    return nn.functional


def _along(name: str, fill_as: str, input: Any, dim: int, dtype: Any, mask: Any) -> Any:
    """nn.functional's ``name`` along ``dim`` with the masked-out elements filled as
    ``fill_as``'s identity (-inf for amax, +inf for amin), so they weigh 0."""
    check_tensor(name, "input", input)
    d = canonical_dim(name, dim, input.ndim)[0]
    x = combine(name, input, mask, fill_as=fill_as)
    return getattr(_functional(), name)(x, d, dtype=input.dtype if dtype is None else dtype)


def softmax(input: Any, dim: int, *, dtype: Any = None, mask: Any = None) -> Any:
    """Softmax along ``dim`` over the masked-in elements (masked-out ones count as -inf,
    so they get 0; a fully masked-out slice is NaN)."""
    return _along("softmax", "amax", input, dim, dtype, mask)


def log_softmax(input: Any, dim: int, *, dtype: Any = None, mask: Any = None) -> Any:
    """Log-softmax along ``dim`` over the masked-in elements (masked-out ones get -inf)."""
    return _along("log_softmax", "amax", input, dim, dtype, mask)


def softmin(input: Any, dim: int, *, dtype: Any = None, mask: Any = None) -> Any:
    """Softmin along ``dim`` over the masked-in elements (masked-out ones count as +inf,
    so they get 0)."""
    return _along("softmin", "amin", input, dim, dtype, mask)


def normalize(input: Any, ord: float, dim: int, *, eps: float = 1e-12, dtype: Any = None,
              mask: Any = None) -> Any:
    """``input`` divided by its masked ``ord``-norm along ``dim`` (at least ``eps``);
    masked-out places are 0."""
    check_tensor("normalize", "input", input)
    dtype = input.dtype if dtype is None else dtype
    x = combine("normalize", input, mask, fill_as="sum")
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    denom = _ot.maximum(nrm, _ot.full((), eps, dtype=nrm.dtype, device=nrm.device))
    return _ot.divide(x, denom)


def cumsum(input: Any, dim: int, *, dtype: Any = None, mask: Any = None) -> Any:
    """Cumulative sum along ``dim`` with masked-out elements counting as 0; in ``dtype``
    (default: the input's)."""
    check_tensor("cumsum", "input", input)
    dtype = input.dtype if dtype is None else dtype
    d = canonical_dim("cumsum", dim, input.ndim)[0]
    x = combine("cumsum", input, mask)
    return _ot.cumsum(x, d if x.ndim else 0, dtype=dtype).to(dtype=dtype)


def cumprod(input: Any, dim: int, *, dtype: Any = None, mask: Any = None) -> Any:
    """Cumulative product along ``dim`` with masked-out elements counting as 1; in
    ``dtype`` (default: the input's)."""
    check_tensor("cumprod", "input", input)
    dtype = input.dtype if dtype is None else dtype
    d = canonical_dim("cumprod", dim, input.ndim)[0]
    x = combine("cumprod", input, mask)
    return _ot.cumprod(x, d if x.ndim else 0, dtype=dtype).to(dtype=dtype)


def logaddexp(input: Any, other: Any, *, dtype: Any = None, input_mask: Any = None,
              other_mask: Any = None) -> Any:
    """``log(exp(input) + exp(other))`` with masked-out elements of each operand (by its
    own mask) counting as -inf; cast to ``dtype`` (default: ``input``'s)."""
    check_tensor("logaddexp", "input", input)
    check_tensor("logaddexp", "other", other)
    dtype = input.dtype if dtype is None else dtype
    a = combine("logaddexp", input, input_mask)
    b = combine("logaddexp", other, other_mask)
    return _ot.logaddexp(a, b).to(dtype=dtype)
