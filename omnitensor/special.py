"""``omnitensor.special``: torch.special's functions, written once from Tensor ops so they
run, and differentiate, on every device.

The gamma-family functions are series evaluations, not library calls: ``gammaln`` shifts its
argument to at least 8 with the recurrence and sums Stirling's series there (error below
1e-12), ``digamma`` does the same with the asymptotic series of psi, and both reflect
arguments below 1/2 (``Γ(x)Γ(1-x) = π / sin(πx)``). Their gradients come from autograd
through those formulas (``d gammaln = digamma`` to the same accuracy). ``i0`` sums its power
series for ``|x| <= 30`` and the asymptotic expansion above; ``erfinv`` refines a rational
first guess with Newton steps on ``erf``. Every branch is evaluated on a "safe" argument so
that a branch ``where`` does not select never produces inf/nan gradients.
"""
from __future__ import annotations

import math
from typing import Any

from .core.ops import elementwise as _ew
from .core.ops.composite import logit as _logit, sinc as _sinc, xlogy as _xlogy
from .core.ops.reduction import logsumexp as _logsumexp
from .core.ops.ternary import where as _where
from .core.ops.torch_extras import erfc as _erfc, log_softmax as _log_softmax, \
    softmax as _softmax
from .core.tensor import Tensor

__all__ = ["erf", "erfc", "erfinv", "expit", "logit", "xlogy", "xlog1py", "log_softmax",
           "softmax", "logsumexp", "sinc", "entr", "ndtr", "ndtri", "log_ndtr", "log1p",
           "expm1", "exp2", "gammaln", "digamma", "psi", "multigammaln", "i0", "i0e", "round"]

erf = _ew.erf
erfc = _erfc
expit = _ew.sigmoid
logit = _logit
xlogy = _xlogy
sinc = _sinc
log1p = _ew.log1p
expm1 = _ew.expm1
round = _ew.round  # noqa: A001 - torch.special.round
softmax = _softmax
log_softmax = _log_softmax

_SQRT2 = math.sqrt(2.0)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _t(x: Any) -> Tensor:
    if isinstance(x, Tensor):
        return x
    from .core.ops.creation import tensor
    return tensor(x)


def exp2(x: Tensor) -> Tensor:
    return _ew.pow(2.0, _t(x))


def logsumexp(x: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    return _logsumexp(x, dim, keepdim)


def xlog1py(x: Any, y: Any) -> Tensor:
    """``x * log1p(y)``, 0 where ``x == 0``."""
    x, y = _t(x), _t(y)
    return _where(x == 0, 0.0, x * _ew.log1p(y))


def entr(x: Tensor) -> Tensor:
    """``-x log x`` for ``x > 0``, 0 at 0, ``-inf`` below."""
    x = _t(x)
    safe = _where(x > 0, x, 1.0)
    out = _where(x > 0, -x * _ew.log(safe), 0.0 * x)
    return _where(x < 0, -math.inf, out)


def ndtr(x: Tensor) -> Tensor:
    """The standard normal CDF."""
    return 0.5 * _erfc(-_t(x) / _SQRT2)


def log_ndtr(x: Tensor) -> Tensor:
    """``log(ndtr(x))``, accurate far in the left tail (asymptotic series below -10)."""
    x = _t(x)
    tail = x < -10.0
    direct = _ew.log(ndtr(_where(tail, -10.0, x)))
    z = _where(tail, x, -10.0)
    z2 = z * z
    inv = 1.0 / z2
    series = 1.0 + inv * (-1.0 + inv * (3.0 + inv * (-15.0 + inv * (105.0 - inv * 945.0))))
    asym = -0.5 * z2 - _ew.log(-z) - _HALF_LOG_2PI + _ew.log(series)
    return _where(tail, asym, direct)


def erfinv(y: Tensor) -> Tensor:
    """The inverse of ``erf`` on (-1, 1); ±inf at ±1, nan outside."""
    y = _t(y)
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
    return _SQRT2 * erfinv(2.0 * _t(p) - 1.0)


def _shifted(x: Tensor, n: int = 8) -> tuple[Tensor, list[Tensor]]:
    return x + float(n), [x + float(k) for k in range(n)]


def _gammaln_pos(x: Tensor) -> Tensor:
    """``log Γ(x)`` for ``x >= 1/2``: recurrence up to ``x + 8``, then Stirling's series."""
    z, terms = _shifted(x)
    shift = _ew.log(terms[0])
    for t in terms[1:]:
        shift = shift + _ew.log(t)
    inv = 1.0 / z
    inv2 = inv * inv
    series = inv * (1.0 / 12 + inv2 * (-1.0 / 360 + inv2 * (1.0 / 1260 + inv2 * (
        -1.0 / 1680 + inv2 * (1.0 / 1188)))))
    return (z - 0.5) * _ew.log(z) - z + _HALF_LOG_2PI + series - shift


def gammaln(x: Tensor) -> Tensor:
    """``log |Γ(x)|`` (torch.special.gammaln / torch.lgamma); +inf at 0 and the negative
    integers."""
    x = _t(x)
    if x.dtype.kind not in "f":
        from .core.dtypes import get_default_dtype
        x = x.to(get_default_dtype())
    right = x >= 0.5
    pos = _gammaln_pos(_where(right, x, 1.0 - x))
    xs = _where(right, 0.25, x)  # the reflection's own argument, kept away from integers
    sin = _ew.abs(_ew.sin(math.pi * xs))
    reflected = math.log(math.pi) - _ew.log(sin) - pos
    pole = (~right) & (x == _ew.floor(x))
    return _where(pole, math.inf, _where(right, pos, reflected))


def _digamma_pos(x: Tensor) -> Tensor:
    z, terms = _shifted(x)
    shift = 1.0 / terms[0]
    for t in terms[1:]:
        shift = shift + 1.0 / t
    inv = 1.0 / z
    inv2 = inv * inv
    series = inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (
        1.0 / 240 - inv2 * (1.0 / 132)))))
    return _ew.log(z) - 0.5 * inv - series - shift


def digamma(x: Tensor) -> Tensor:
    """ψ(x) = d/dx log Γ(x); nan at 0 and the negative integers (torch gives -inf at 0)."""
    x = _t(x)
    if x.dtype.kind not in "f":
        from .core.dtypes import get_default_dtype
        x = x.to(get_default_dtype())
    right = x >= 0.5
    pos = _digamma_pos(_where(right, x, 1.0 - x))
    xs = _where(right, 0.25, x)
    reflected = pos - math.pi / _ew.tan(math.pi * xs)
    out = _where(right, pos, reflected)
    out = _where((~right) & (x == _ew.floor(x)), math.nan, out)
    return _where(x == 0, -math.inf, out)


psi = digamma


def multigammaln(x: Tensor, p: int) -> Tensor:
    """The log multivariate gamma function of dimension ``p``."""
    x = _t(x)
    out = (p * (p - 1) / 4.0) * math.log(math.pi)
    if p < 1:
        raise ValueError(f"multigammaln: p must be at least 1, got {p}")
    total = gammaln(x)
    for j in range(1, p):
        total = total + gammaln(x - j / 2.0)
    return total + out


def _i0_parts(x: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(|x|, mask of |x| <= 30, the power series there, exp(-|x|)·I0 by the asymptotic
    expansion elsewhere), each branch on a safe argument."""
    ax = _ew.abs(x)
    small = ax <= 30.0
    xs = _where(small, ax, 0.0)
    q = xs * xs / 4.0
    term = q * 0.0 + 1.0
    total = term
    for k in range(1, 90):  # the terms peak near k = x/2 and are below 1e-17 of it by 90
        term = term * q / float(k * k)
        total = total + term
    xl = _where(small, 31.0, ax)
    inv = 1.0 / (8.0 * xl)
    series = 1.0 + inv * (1.0 + inv * (9.0 / 2 + inv * (225.0 / 6 + inv * (11025.0 / 24 + inv * (
        893025.0 / 120 + inv * (108056025.0 / 720 + inv * (18261468225.0 / 5040)))))))
    return ax, small, total, series / _ew.sqrt(2.0 * math.pi * xl)


def i0(x: Tensor) -> Tensor:
    """The modified Bessel function of the first kind, order 0."""
    ax, small, total, scaled = _i0_parts(_t(x))
    return _where(small, total, scaled * _ew.exp(_where(small, 0.0, ax)))


def i0e(x: Tensor) -> Tensor:
    """``exp(-|x|) i0(x)`` (finite where ``i0`` overflows)."""
    ax, small, total, scaled = _i0_parts(_t(x))
    return _where(small, total * _ew.exp(-_where(small, ax, 0.0)), scaled)
