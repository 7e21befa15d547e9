"""The error-function family beyond ``erf``/``erfc`` (which are elementwise primitives):
``ndtr``, ``log_ndtr`` (an asymptotic series far in the left tail), ``erfinv`` (a rational
first guess refined by Newton steps on ``erf``), ``ndtri`` and ``erfcx``.
"""
from __future__ import annotations

import math
from typing import Any

from ..core.ops import elementwise as _ew
from ..core.ops.ternary import where as _where
from ..core.ops.torch_extras import erfc as _erfc
from ..core.tensor import Tensor
from ._common import floating, pick, with_derivative

_SQRT2 = math.sqrt(2.0)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def ndtr(x: Tensor) -> Tensor:
    """The standard normal CDF."""
    return 0.5 * _erfc(-floating(x) / _SQRT2)


#: the asymptotic series of Mills' ratio, sum_k (-1)^k (2k-1)!! / x^(2k): 20 terms (at
#: x = -10 the 20th is 3e-17 of the first; the series' smallest term comes near k = 50)
_MILLS = [(-1.0) ** k * math.prod(range(1, 2 * k, 2)) for k in range(20)]


def log_ndtr(x: Tensor) -> Tensor:
    """``log(ndtr(x))``, accurate far in the left tail (asymptotic series below -10)."""
    x = floating(x)
    tail = x < -10.0
    direct = _ew.log(ndtr(_where(tail, -10.0, x)))
    z = _where(tail, x, -10.0)
    z2 = z * z
    inv = 1.0 / z2
    series: Any = _MILLS[-1]
    for c in reversed(_MILLS[:-1]):
        series = c + inv * series
    asym = -0.5 * z2 - _ew.log(-z) - _HALF_LOG_2PI + _ew.log(series)
    return _where(tail, asym, direct)


def erfinv(y: Tensor) -> Tensor:
    """The inverse of ``erf`` on (-1, 1); ±inf at ±1, nan outside."""
    y = floating(y)
    inside = _ew.abs(y) < 1
    ys = _where(inside, y, 0.0)
    # Giles' single-precision approximation as the first guess
    w = -_ew.log((1.0 - ys) * (1.0 + ys))
    small = w < 5.0
    ws = _where(small, w, 5.0) - 2.5
    p1: Any = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
              -0.00417768164, 0.246640727, 1.50140941):
        p1 = c + p1 * ws
    wl = _ew.sqrt(_where(small, 5.0, w)) - 3.0
    p2: Any = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        p2 = c + p2 * wl
    x = _where(small, p1, p2) * ys
    two_over_sqrt_pi = 2.0 / math.sqrt(math.pi)
    for _ in range(3):  # Newton on erf(x) = y: quadratic convergence to full precision
        x = x - (_ew.erf(x) - ys) / (two_over_sqrt_pi * _ew.exp(-x * x))
    edge = _where(y > 0, math.inf, -math.inf)
    out = _where(inside, x, _where(_ew.abs(y) == 1, edge, math.nan))
    return out


def ndtri(p: Tensor) -> Tensor:
    """The inverse of :func:`ndtr` (the standard normal quantile function)."""
    return _SQRT2 * erfinv(2.0 * floating(p) - 1.0)




_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)
#: below it ``exp(x^2) erfc(x)`` (relative error ~x^2 ulp); above, the continued fraction
_ERFCX_SPLIT = 4.0
_ERFCX_TERMS = 60


def _erfcx(x: Tensor) -> Tensor:
    """``exp(x^2) erfc(x)``: directly up to 4 (it overflows to +inf below -26.6, as the
    value does), then Laplace's continued fraction ``1 / (sqrt(pi) (x + (1/2) / (x + 1 /
    (x + (3/2) / ...))))`` evaluated backwards over 60 terms (converged to rounding
    there); ``1 / (sqrt(pi) x)`` above 1e8, where the fraction's first term is exact."""
    low = x < _ERFCX_SPLIT
    xl = pick(low, x, 0.0)
    direct = _ew.exp(xl * xl) * _erfc(xl)
    xh = pick(low, 2.0 * _ERFCX_SPLIT, _ew.minimum(x, x * 0.0 + 1e8))
    t = xh
    for k in range(_ERFCX_TERMS, 0, -1):
        t = xh + (k / 2.0) / t
    far = _INV_SQRT_PI / pick(x > 1e8, x, t)
    out = _where(low, direct, far)
    return _where(x == math.inf, 0.0, out)


_ERFCX = with_derivative(_erfcx, lambda x, out: 2.0 * x * out - 2.0 * _INV_SQRT_PI)


def erfcx(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """The scaled complementary error function ``exp(x^2) erfc(x)``
    (torch.special.erfcx): finite where ``erfc`` underflows; gradient
    ``2 x erfcx(x) - 2 / sqrt(pi)``."""
    return _ERFCX(floating(input))
