"""Bessel functions of the first and second kind of orders 0 and 1 (J0, J1, Y0, Y1), the
Airy function Ai and the spherical Bessel function j0, as torch defines them (ATen's
Cephes-derived approximations, evaluated here with Tensor ops in the same order so that
float32 results round as torch's do):

* J and Y for ``x <= 5``: a rational function of ``x^2`` (J0, J1 times the factors of
  their first two zeros; Y adds ``(2/pi) log(x) J``); above 5 the Hankel asymptotic form
  ``sqrt(2/(pi x)) (P cos(x - phase) - (5/x) Q sin(x - phase))`` with P, Q rational in
  ``25/x^2``. (torch evaluates some denominators without Cephes' implicit leading 1;
  its results, reproduced here, differ from SciPy's by up to ~4e-7.)
* Ai: the Maclaurin series of its two components for ``|x| < 2.09``, rational
  asymptotic forms outside (exponentially decaying for x > 0, oscillating for x < 0).

torch computes none of these gradients; neither does omnitensor (results never require
grad).
"""
from __future__ import annotations

import math
from typing import Any

from ..core.ops import elementwise as _ew
from ..core.ops.ternary import where
from ..core.tensor import Tensor
from . import _coefficients as C
from ._common import floating, not_differentiable, pick, polevl

_SQRT_2_OVER_PI = 0.797884560802865355879892119868763737
_TWO_OVER_PI = 0.636619772367581343075535053490057448


def _hankel(x: Tensor, order: int) -> tuple[Tensor, Tensor, Tensor]:
    """(P, (5/x) Q, x - phase) of the asymptotic form for ``x > 5``."""
    if order == 0:
        z = 25.0 / (x * x)
        tables = (C.J0_P_NUM, C.J0_P_DEN, C.J0_Q_NUM, C.J0_Q_DEN)
        phase = x - 0.785398163397448309615660845819875721
    else:
        z = 5.0 / x * (5.0 / x)
        tables = (C.J1_P_NUM, C.J1_P_DEN, C.J1_Q_NUM, C.J1_Q_DEN)
        phase = x - 2.356194490192344928846982537459627163
    pp, pq, qp, qq = (polevl(z, t) for t in tables)
    return pp / pq, 5.0 / x * (qp / qq), phase


def _j_large(x: Tensor, order: int) -> Tensor:
    p, q, phase = _hankel(x, order)
    return (p * _ew.cos(phase) - q * _ew.sin(phase)) * _SQRT_2_OVER_PI / _ew.sqrt(x)


def _y_large(x: Tensor, order: int) -> Tensor:
    p, q, phase = _hankel(x, order)
    return (p * _ew.sin(phase) + q * _ew.cos(phase)) * _SQRT_2_OVER_PI / _ew.sqrt(x)


def _j0_pos(ax: Tensor) -> Tensor:
    """J0 of ``ax >= 0`` (or nan)."""
    small = ax <= 5.0
    xs = pick(small, ax, 1.0)
    x2 = xs * xs
    near = (x2 - 5.78318596294678452118e+00) * (x2 - 3.04712623436620863991e+01) * \
        polevl(x2, C.J0_R_NUM) / polevl(x2, C.J0_R_DEN)
    near = where(xs < 0.00001, 1.0 - xs * xs / 4.0, near)
    return where(small, near, _j_large(pick(small, 6.0, ax), 0))


def _j1_pos(ax: Tensor) -> Tensor:
    """J1 of ``ax >= 0`` (or nan)."""
    small = ax <= 5.0
    xs = pick(small, ax, 1.0)
    x2 = xs * xs
    near = polevl(x2, C.J1_R_NUM) / polevl(x2, C.J1_R_DEN) * xs * \
        (x2 - 1.46819706421238932572e+01) * (x2 - 4.92184563216946036703e+01)
    return where(small, near, _j_large(pick(small, 6.0, ax), 1))


@not_differentiable
def bessel_j0(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """The Bessel function of the first kind of order 0 (torch.special.bessel_j0)."""
    x = floating(input)
    return _j0_pos(_ew.abs(x))


@not_differentiable
def bessel_j1(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """The Bessel function of the first kind of order 1 (torch.special.bessel_j1); odd."""
    x = floating(input)
    out = _j1_pos(_ew.abs(x))
    return where(x < 0, -out, out)


def _y_small_arg(x: Tensor, small: Tensor) -> Tensor:
    """The argument of the ``x <= 5`` branch: x itself on (0, 5], 1 elsewhere."""
    return pick(small & (x > 0), x, 1.0)


@not_differentiable
def bessel_y0(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """The Bessel function of the second kind of order 0 (torch.special.bessel_y0):
    -inf at 0, nan below."""
    x = floating(input)
    small = x <= 5.0
    xs = _y_small_arg(x, small)
    x2 = xs * xs
    near = polevl(x2, C.Y0_NUM) / polevl(x2, C.Y0_DEN) + \
        _TWO_OVER_PI * _ew.log(xs) * _j0_pos(xs)
    near = where(x == 0, -math.inf, where(x < 0, math.nan, near))
    return where(small, near, _y_large(pick(small, 6.0, x), 0))


@not_differentiable
def bessel_y1(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """The Bessel function of the second kind of order 1 (torch.special.bessel_y1):
    -inf at 0, nan below."""
    x = floating(input)
    small = x <= 5.0
    xs = _y_small_arg(x, small)
    x2 = xs * xs
    near = xs * (polevl(x2, C.Y1_NUM) / polevl(x2, C.Y1_DEN)) + \
        _TWO_OVER_PI * (_j1_pos(xs) * _ew.log(xs) - 1.0 / xs)
    near = where(x == 0, -math.inf, where(x < 0, math.nan, near))
    return where(small, near, _y_large(pick(small, 6.0, x), 1))


_AIRY_EDGE = 2.09
_AIRY_C1 = 0.355028053887817239260     # Ai(0)
_AIRY_C2 = 0.258819403792806798405     # -Ai'(0)
_INV_SQRT_PI = 5.64189583547756286948e-01


def _airy_series(x: Tensor, terms: int) -> Tensor:
    """Ai(x) = c1 f(x) - c2 g(x) by the Maclaurin series of f and g (|x| < 2.09: the
    terms fall below float64 rounding of the sum within ``terms`` steps)."""
    z = x * x * x
    f: Any = 1.0
    g: Any = x
    m: Any = 1.0
    n: Any = x
    k = 1.0
    for _ in range(terms):
        m = m * z / (k + 1.0)
        n = n * z / (k + 2.0)
        m = m / (k + 2.0)
        f = f + m
        n = n / (k + 3.0)
        g = g + n
        k += 3.0
    return _AIRY_C1 * f - _AIRY_C2 * g


def _airy_negative(x: Tensor) -> Tensor:
    """Ai(x) for x < -2.09: amplitude and phase corrections rational in ``1/zeta^2``."""
    zeta = -2.0 * x * _ew.sqrt(-x) / 3.0
    z = 1.0 / zeta
    z2 = z * z
    fn, fd = polevl(z2, C.AIRY_NEG_F_NUM), polevl(z2, C.AIRY_NEG_F_DEN)
    gn, gd = polevl(z2, C.AIRY_NEG_G_NUM), polevl(z2, C.AIRY_NEG_G_DEN)
    t = zeta + 0.25 * math.pi
    return _INV_SQRT_PI / _ew.sqrt(_ew.sqrt(-x)) * \
        (_ew.sin(t) * (1.0 + z2 * fn / fd) - _ew.cos(t) * (z * gn / gd))


def _airy_positive(x: Tensor) -> Tensor:
    """Ai(x) for x >= 2.09: ``exp(-zeta) / (2 sqrt(pi) x^(1/4))`` times a rational
    correction in ``1/zeta``."""
    zeta = 2.0 * x * _ew.sqrt(x) / 3.0
    inv = 1.0 / zeta
    ratio = polevl(inv, C.AIRY_POS_NUM) / polevl(inv, C.AIRY_POS_DEN)
    return _INV_SQRT_PI * ratio / (2.0 * _ew.sqrt(_ew.sqrt(x)) * _ew.exp(zeta))


@not_differentiable
def airy_ai(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """The Airy function Ai (torch.special.airy_ai): nan at ±inf, 0 above 103.892."""
    x = floating(input)
    neg = x < -_AIRY_EDGE
    pos = x >= _AIRY_EDGE
    mid = ~(neg | pos)
    terms = 16 if x.dtype.itemsize >= 8 else 11
    out = where(mid, _airy_series(pick(mid, x, 0.0), terms),
                where(neg, _airy_negative(pick(neg, x, -3.0)),
                      _airy_positive(pick(pos, x, 3.0))))
    out = where(x > 103.892, 0.0, out)
    return where(_ew.isinf(x), math.nan, out)


_J0_SERIES = tuple((-1.0) ** k / math.factorial(2 * k + 1) for k in range(7))


@not_differentiable
def spherical_bessel_j0(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """The spherical Bessel function of the first kind of order 0, ``sin(x)/x``
    (torch.special.spherical_bessel_j0): its Taylor polynomial for ``|x| < 1/2``, 0 at
    ±inf."""
    x = floating(input)
    near = _ew.abs(x) < 0.5
    xs = pick(near, x, 0.0)
    x2 = xs * xs
    poly: Any = _J0_SERIES[-1]
    for c in reversed(_J0_SERIES[:-1]):
        poly = c + x2 * poly
    far = pick(near, 1.0, x)
    out = where(near, poly, _ew.sin(far) / far)
    return where(_ew.isinf(x), 0.0, out)
