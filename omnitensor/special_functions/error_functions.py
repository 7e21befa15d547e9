"""The error-function family beyond ``erf``/``erfc`` (which are elementwise primitives):
``ndtr``, ``log_ndtr`` (an asymptotic series far in the left tail), ``erfinv`` and ``ndtri``
(a rational first guess refined by Newton steps on ``erf``, on ``erfc`` in the tails) and
``erfcx``.
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


def _inverse_erf(y: Tensor, t: Tensor) -> Tensor:
    """``x`` with ``erf(x) = y``, for ``y`` in (-1, 1) with ``t = 1 - |y|`` computed exactly
    by the caller. Giles' single-precision approximation is the first guess; Newton steps
    refine it on ``erf`` where ``|y| < 1/2``, and on ``erfc(|x|) = t`` in the tails: there
    ``erf(x) - y`` would be a difference of two numbers near 1, exact only to the rounding
    of 1 (float32: 8e-7 in x at y = 0.98), while ``erfc`` keeps ``t``'s relative
    precision."""
    w = -_ew.log(t * (2.0 - t))
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
    x = _where(small, p1, p2) * y
    tail = t <= 0.5
    ax = _where(w < 16.0, _ew.abs(x), _far_tail_guess(_where(w < 16.0, 1e-8, t)))
    for _ in range(3):  # Newton: quadratic convergence to full precision
        slope = _TWO_OVER_SQRT_PI * _ew.exp(-x * x)
        live = slope > 0  # far in float64's tail exp underflows: the guess stands
        x = x - _where(live, (_ew.erf(x) - y) / _where(live, slope, 1.0), 0.0)
        tslope = _TWO_OVER_SQRT_PI * _ew.exp(-ax * ax)
        tlive = tslope > 0
        ax = ax + _where(tlive, (_erfc(ax) - t) / _where(tlive, tslope, 1.0), 0.0)
    return _where(tail, _where(y < 0, -ax, ax), x)


def _far_tail_guess(t: Tensor) -> Tensor:
    """``x`` with ``erfc(x) = t`` past Giles' range (``t`` < 1e-7, float32's 1 - y can go
    no further but ndtri's tail probability can), to 1e-4 relative: the fixed point of
    Laplace's asymptotic ``erfc(x) ~ exp(-x^2) / (x sqrt(pi)) (1 - 1 / (2 x^2))``."""
    big = -_ew.log(t)
    x = _ew.sqrt(big)
    for _ in range(4):
        x = _ew.sqrt(big - _ew.log(_SQRT_PI * x) + _ew.log1p(-0.5 / (x * x)))
    return x


def _erfinv(y: Tensor) -> Tensor:
    inside = _ew.abs(y) < 1
    ys = _where(inside, y, 0.0)
    x = _inverse_erf(ys, 1.0 - _ew.abs(ys))  # exact where it matters, |y| >= 1/2
    edge = _where(y > 0, math.inf, -math.inf)
    return _where(inside, x, _where(_ew.abs(y) == 1, edge, math.nan))


def _ndtri(p: Tensor) -> Tensor:
    inside = (p > 0) & (p < 1)
    ps = _where(inside, p, 0.5)
    # the tail 1 - |2p - 1| is 2p below 1/2 and 2 (1 - p) above: both exact, where 2p - 1
    # alone would round p = 1e-6 to a 6% error in it (float32)
    t = _where(ps < 0.5, 2.0 * ps, 2.0 * (1.0 - ps))
    x = _SQRT2 * _inverse_erf(2.0 * ps - 1.0, t)
    edge = _where(p == 1, math.inf, _where(p == 0, -math.inf, math.nan))
    return _where(inside, x, edge)


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI = math.sqrt(math.pi)
_ERFINV = with_derivative(_erfinv, lambda y, out: (0.5 * math.sqrt(math.pi)) *
                          _ew.exp(erfinv(y) ** 2))
_NDTRI = with_derivative(_ndtri, lambda p, out: math.sqrt(2 * math.pi) *
                         _ew.exp(ndtri(p) ** 2 / 2))


def erfinv(y: Tensor) -> Tensor:
    """The inverse of ``erf`` on (-1, 1); ±inf at ±1, nan outside; gradient
    ``sqrt(pi) / 2 exp(erfinv(y)^2)`` (torch's)."""
    return _ERFINV(floating(y))


def ndtri(p: Tensor) -> Tensor:
    """The inverse of :func:`ndtr` (the standard normal quantile function), from the tail
    probability directly; gradient ``sqrt(2 pi) exp(ndtri(p)^2 / 2)`` (torch's)."""
    return _NDTRI(floating(p))


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
