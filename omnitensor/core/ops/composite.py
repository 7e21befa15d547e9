"""Small ops written once from other ops (so differentiable and portable for free):
torch's ``div(rounding_mode=...)``, ``fmod``, ``frac``, ``lerp``, ``isclose``, ``trace``,
``diff``..."""
from __future__ import annotations

import math
from typing import Any

from .. import dtypes as _dt
from ..graph import no_grad_ctx
from ..tensor import Tensor
from .dtype_rules import floating
from .elementwise import BINARY_OPS, UNARY_OPS, _binary, _unary, floor_divide, remainder
from .ternary import where
from .join import cat, stack
from .storage_dtypes import via_compute


def divide(x1: Any, x2: Any, /, *, rounding_mode: str | None = None) -> Tensor:
    """True division; torch's ``rounding_mode='trunc'`` / ``'floor'`` too."""
    if rounding_mode is None:
        return _binary(BINARY_OPS["divide"], x1, x2)
    if rounding_mode == "floor":
        return floor_divide(x1, x2)
    if rounding_mode == "trunc":
        dtype = _dt.result_type(x1, x2)
        if dtype.kind in "iu":
            return _integer_trunc_divide(x1, x2)
        q = _binary(BINARY_OPS["divide"], x1, x2)
        q = q.trunc()
        return q if dtype.kind in "fc" else q.to(dtype)
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                     f"found {rounding_mode!r}")


def _integer_trunc_divide(x1: Any, x2: Any) -> Tensor:
    """Integer division rounded toward zero, exact (a float quotient loses int64's low bits):
    the floor quotient (which refuses a zero divisor, as torch), one up where the division
    is inexact and the quotient negative."""
    q = floor_divide(x1, x2)
    r = x1 - q * x2  # the floor remainder: 0 or of the divisor's sign
    sign_a = x1 if isinstance(x1, Tensor) else q * 0 + x1
    return where((r != 0) & ((r < 0) != (sign_a < 0)), q + 1, q)


@via_compute  # bfloat16: the whole formula in float32, rounded once
def fmod(x1: Any, x2: Any) -> Tensor:
    """C-style remainder: the sign of the dividend (torch.fmod)."""
    r = remainder(x1, x2)
    sign_a = x1 if isinstance(x1, Tensor) else r * 0 + x1
    fix = (r != 0) & ((r < 0) != (sign_a < 0))
    return where(fix, r - x2, r)


@via_compute
def frac(x: Tensor) -> Tensor:
    return x - x.trunc()


@via_compute
def lerp(start: Tensor, end: Any, weight: Any) -> Tensor:
    """``start + weight * (end - start)``."""
    return start + weight * (end - start)


def isclose(a: Tensor, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """``|a - b| <= atol + rtol * |b|`` elementwise (or equal; NaNs equal with
    ``equal_nan``); bool tensors compare for equality (torch)."""
    if rtol < 0:
        raise ValueError(f"isclose: rtol must be greater than or equal to zero, but got "
                         f"{rtol}")
    if atol < 0:
        raise ValueError(f"isclose: atol must be greater than or equal to zero, but got "
                         f"{atol}")
    if a.dtype is _dt.bool_ and (not isinstance(b, Tensor) or b.dtype is _dt.bool_):
        return a == b
    with no_grad_ctx():
        close = (a - b).abs() <= atol + rtol * (b.abs() if isinstance(b, Tensor) else abs(b))
        close = close | (a == b)
        if equal_nan:
            bn = b.isnan() if isinstance(b, Tensor) else math.isnan(b)
            close = close | (a.isnan() & bn)
    return close


def allclose(a: Tensor, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    return bool(isclose(a, b, rtol, atol, equal_nan).all().item())


def equal(a: Tensor, b: Tensor) -> bool:
    """True when both have the same shape and elements (torch.equal)."""
    if a.shape != b.shape:
        return False
    with no_grad_ctx():
        return bool((a == b).all().item())


def trace(x: Tensor) -> Tensor:
    if x.ndim != 2:
        raise ValueError(f"trace: expected a matrix, got {x.ndim}-D")
    return x.diagonal().sum()


def diff(x: Tensor, /, *, axis: int = -1, n: int = 1, prepend: Any = None,
         append: Any = None) -> Tensor:
    """n-th forward difference along ``axis`` (Array API / NumPy)."""
    if n < 0:
        raise ValueError(f"diff: order must be non-negative but got {n}")
    if prepend is not None or append is not None:
        parts = [p for p in (prepend, x, append) if p is not None]
        x = cat([p if isinstance(p, Tensor) else x.new_full((1,) * x.ndim, p)
                 .broadcast_to(tuple(1 if i == (axis % x.ndim) else s
                                     for i, s in enumerate(x.shape)))
                 for p in parts], axis)
    for _ in range(n):
        m = x.shape[axis]
        x = x.narrow(axis, 1, m - 1) - x.narrow(axis, 0, m - 1) if x.dtype is not _dt.bool_ \
            else x.narrow(axis, 1, m - 1) != x.narrow(axis, 0, m - 1)
    return x


@via_compute
def cross(a: Tensor, b: Tensor, dim: int = -1) -> Tensor:
    """Cross product of 3-vectors along ``dim``."""
    a0, a1, a2 = a.unbind(dim)
    b0, b1, b2 = b.unbind(dim)
    return stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim)


def heaviside(x: Tensor, values: Any) -> Tensor:
    return where(x == 0, values, (x > 0).to(x.dtype))


@via_compute
def logit(x: Tensor, eps: float | None = None) -> Tensor:
    """``log(x / (1 - x))``, ``x`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given; bool
    and integer inputs compute in the default float dtype (torch)."""
    x = floating(x)
    if eps is not None:
        x = x.clamp(eps, 1 - eps)
    return (x / (1 - x)).log()


@via_compute
def xlogy(x: Any, y: Any) -> Tensor:
    """``x * log(y)``, 0 where x == 0 unless y is NaN (torch). Its x-gradient is log(y)
    also at x == 0 (torch's), so the masked lanes (x == 0 with y <= 0 or inf, where the
    product would be NaN) take y = 1 instead of a ``where`` over the product."""
    if isinstance(y, Tensor):
        safe = where((x == 0) & ((y <= 0) | (y == math.inf)), 1, y)
        return x * safe.log()
    log_y = math.log(y) if 0 < y < math.inf else (-math.inf if y == 0 else
                                                   math.inf if y == math.inf else math.nan)
    prod = x * log_y
    return where(x == 0, 0, prod) if isinstance(x, Tensor) and not 0 < y < math.inf \
        else prod


@via_compute
def sinc(x: Tensor) -> Tensor:
    px = x * math.pi
    return where(x == 0, 1, px.sin() / where(x == 0, 1, px))


@via_compute
def deg2rad(x: Tensor) -> Tensor:
    return x * (math.pi / 180)


@via_compute
def rad2deg(x: Tensor) -> Tensor:
    return x * (180 / math.pi)


@via_compute
def round_decimals(x: Tensor, decimals: int = 0) -> Tensor:
    """torch's ``round(x, decimals=n)`` (half to even)."""
    if decimals == 0:
        return _round0(x)
    s = 10.0 ** decimals
    return _round0(x * s) / s


def _round0(x: Tensor) -> Tensor:
    return _unary(UNARY_OPS["round"], x)
