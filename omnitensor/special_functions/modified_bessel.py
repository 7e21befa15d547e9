"""Modified Bessel functions of orders 0 and 1: I0, I1, K0, K1 and their exponentially
scaled forms, as torch defines them (ATen's Cephes Chebyshev expansions, evaluated with
Tensor ops in the same order):

* I: ``exp(-|x|) I(|x|)`` is a Chebyshev series in ``|x|/2 - 2`` on [0, 8] and
  ``exp(-|x|) sqrt(|x|) I(|x|)`` one in ``32/|x| - 2`` above (I1 odd). torch's ``i1`` and
  ``i1e`` drop the series' smallest terms in float32 (``modified_bessel_i1`` keeps them):
  so does this module.
* K (``x > 0``; inf at 0, nan below): ``K + log(x/2) I`` is a series in ``x^2 - 2`` on
  (0, 2], ``exp(x) sqrt(x) K`` one in ``8/x - 2`` above.

``i0``, ``i0e``, ``i1``, ``i1e`` differentiate by torch's formulas (``i0' = i1``...);
``modified_bessel_*`` and the K functions have no gradient in torch, nor here.
"""
from __future__ import annotations

import math
from typing import Any

from ..core import dtypes as _dt
from ..core.ops import elementwise as _ew
from ..core.ops.ternary import where
from ..core.tensor import Tensor
from . import _coefficients as C
from ._common import chbevl, floating, not_differentiable, pick, with_derivative

#: torch's float32 tables for i1/i1e: the series' last 17 and 7 coefficients
_I1_SMALL_F32 = C.I1_SMALL[-17:]
_I1_LARGE_F32 = C.I1_LARGE[-7:]


def _i1_tables(x: Tensor, full: bool) -> tuple[tuple[float, ...], tuple[float, ...]]:
    if full or x.dtype.itemsize >= 8:
        return C.I1_SMALL, C.I1_LARGE
    return _I1_SMALL_F32, _I1_LARGE_F32


def _series(ax: Tensor, small_table: Any, large_table: Any) -> tuple[Tensor, Tensor, Tensor,
                                                                    Tensor]:
    """(mask |x| <= 8, the [0, 8] series, the series above, |x| of the large branch)."""
    small = ax <= 8.0
    a = chbevl(pick(small, ax, 0.0) / 2.0 - 2.0, small_table)
    xl = pick(small, 9.0, ax)
    b = chbevl(32.0 / xl - 2.0, large_table)
    return small, a, b, xl


def _i0(x: Tensor) -> Tensor:
    ax = _ew.abs(x)
    small, a, b, xl = _series(ax, C.I0_SMALL, C.I0_LARGE)
    return where(small, _ew.exp(ax) * a, _ew.exp(ax) * b / _ew.sqrt(xl))


def _i0e(x: Tensor) -> Tensor:
    ax = _ew.abs(x)
    small, a, b, xl = _series(ax, C.I0_SMALL, C.I0_LARGE)
    return where(small, a, b / _ew.sqrt(xl))


def _odd(x: Tensor, out: Tensor) -> Tensor:
    return where(x < 0.0, -out, out)


def _i1(x: Tensor) -> Tensor:
    ax = _ew.abs(x)
    small, a, b, xl = _series(ax, *_i1_tables(x, full=False))
    return _odd(x, where(small, _ew.exp(ax) * ax * a, _ew.exp(ax) * b / _ew.sqrt(xl)))


def _i1e(x: Tensor) -> Tensor:
    ax = _ew.abs(x)
    small, a, b, xl = _series(ax, *_i1_tables(x, full=False))
    return _odd(x, where(small, a * ax, b / _ew.sqrt(xl)))


def _safe_nonzero(x: Tensor) -> tuple[Tensor, Tensor]:
    """(|x| > eps, x with the tiny lanes at eps): torch's guard for the ``1/x`` terms of
    the I1 derivatives, whose limit at 0 is 1/2."""
    eps = _dt.finfo(x.dtype).eps
    big = _ew.abs(x) > eps
    return big, pick(big, x, eps)


def _d_i1(x: Tensor, out: Tensor) -> Tensor:
    big, xs = _safe_nonzero(x)
    return where(big, i0(xs) - out * (1.0 / xs), 0.5)


def _d_i1e(x: Tensor, out: Tensor) -> Tensor:
    big, xs = _safe_nonzero(x)
    return where(big, i0e(xs) - out * (_ew.sign(xs) + 1.0 / xs), 0.5)


_I0 = with_derivative(_i0, lambda x, out: i1(x))
_I0E = with_derivative(_i0e, lambda x, out: i1e(x) - _ew.sign(x) * out)
_I1 = with_derivative(_i1, _d_i1)
_I1E = with_derivative(_i1e, _d_i1e)


def i0(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """The modified Bessel function of the first kind of order 0 (torch.i0,
    torch.special.i0)."""
    return _I0(floating(input))


def i0e(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """``exp(-|x|) i0(x)``, finite where ``i0`` overflows (torch.special.i0e)."""
    return _I0E(floating(input))


def i1(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """The modified Bessel function of the first kind of order 1 (torch.special.i1)."""
    return _I1(floating(input))


def i1e(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """``exp(-|x|) i1(x)`` (torch.special.i1e)."""
    return _I1E(floating(input))


@not_differentiable
def modified_bessel_i0(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """I0 (torch.special.modified_bessel_i0: the values of ``i0``, without a gradient)."""
    return _i0(floating(input))


def _modified_i1(x: Tensor) -> Tensor:
    ax = _ew.abs(x)
    small, a, b, xl = _series(ax, *_i1_tables(x, full=True))
    return _odd(x, where(small, a * ax * _ew.exp(ax), _ew.exp(ax) * b / _ew.sqrt(xl)))


@not_differentiable
def modified_bessel_i1(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """I1 (torch.special.modified_bessel_i1: the full series in every dtype, no
    gradient)."""
    return _modified_i1(floating(input))


def _k(x: Tensor, order: int, scaled: bool) -> Tensor:
    """K0/K1 (``exp(x)`` times them when ``scaled``) of a floating tensor."""
    small = x <= 2.0
    xs = pick(small & (x > 0.0), x, 1.0)
    xl = pick(small, 3.0, x)
    if order == 0:
        near = chbevl(xs * xs - 2.0, C.K0_SMALL) - _ew.log(0.5 * xs) * _i0(xs)
        far = chbevl(8.0 / xl - 2.0, C.K0_LARGE)
    else:
        near = _ew.log(0.5 * xs) * _modified_i1(xs) + chbevl(xs * xs - 2.0, C.K1_SMALL) / xs
        far = chbevl(8.0 / xl - 2.0, C.K1_LARGE)
    if scaled:
        near, far = near * _ew.exp(xs), far / _ew.sqrt(xl)
    else:
        far = _ew.exp(-xl) * far / _ew.sqrt(xl)
    out = where(small, near, far)
    return where(x == 0.0, math.inf, where(x < 0.0, math.nan, out))


@not_differentiable
def modified_bessel_k0(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """The modified Bessel function of the second kind of order 0
    (torch.special.modified_bessel_k0): inf at 0, nan below."""
    return _k(floating(input), 0, scaled=False)


@not_differentiable
def modified_bessel_k1(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """The modified Bessel function of the second kind of order 1
    (torch.special.modified_bessel_k1): inf at 0, nan below."""
    return _k(floating(input), 1, scaled=False)


@not_differentiable
def scaled_modified_bessel_k0(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """``exp(x) K0(x)`` (torch.special.scaled_modified_bessel_k0)."""
    return _k(floating(input), 0, scaled=True)


@not_differentiable
def scaled_modified_bessel_k1(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """``exp(x) K1(x)`` (torch.special.scaled_modified_bessel_k1)."""
    return _k(floating(input), 1, scaled=True)
