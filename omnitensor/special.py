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
           "expm1", "exp2", "gammaln", "digamma", "psi", "multigammaln", "i0", "i0e", "i1", "i1e",
           "modified_bessel_i0", "modified_bessel_i1", "gammainc", "gammaincc", "round"]

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
    # as xlogy: the masked lanes (x == 0, y <= -1 or inf) take y = 0, keeping the
    # x-gradient log1p(y) elsewhere at x == 0 (torch's)
    return x * _ew.log1p(_where((x == 0) & ((y <= -1) | (y == math.inf)), 0.0, y))


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


def _zeta_minus_one(k: int) -> float:
    """``zeta(k) - 1`` for k >= 2 by Euler-Maclaurin summation (exact to double
    precision)."""
    n = 30
    head = sum(m ** -float(k) for m in range(2, n))
    tail = n ** (1.0 - k) / (k - 1) + 0.5 * n ** -float(k)
    rising = float(k)
    for j, b2j in enumerate((1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30), start=1):
        tail += b2j / math.factorial(2 * j) * rising * n ** (-k - 2.0 * j + 1)
        rising *= (k + 2 * j - 1) * (k + 2 * j)
    return head + tail


# log Γ(2 + b) = (1 - γ) b + sum_{k>=2} (-1)^k (zeta(k) - 1) b^k / k, for |b| <= 1/2
_LGAMMA2 = [0.0, 1.0 - 0.57721566490153286061] + [
    (-1) ** k * _zeta_minus_one(k) / k for k in range(2, 40)]


def _gammaln_near_zeros(x: Tensor) -> Tensor:
    """``log Γ(x)`` for x in [1/2, 5/2) by the series about 2 (relative accuracy near the
    zeros at 1 and 2, where the recurrence-and-Stirling route cancels)."""
    up = x >= 1.5
    b = _where(up, x, x + 1.0) - 2.0
    poly: Any = _LGAMMA2[-1]
    for c in reversed(_LGAMMA2[:-1]):
        poly = c + b * poly
    return poly - _where(up, 0.0, _ew.log(_where(up, 1.0, x)))


def gammaln(x: Tensor) -> Tensor:
    """``log |Γ(x)|`` (torch.special.gammaln / torch.lgamma); +inf at 0 and the negative
    integers."""
    x = _t(x)
    if x.dtype.kind not in "f":
        from .core.dtypes import get_default_dtype
        x = x.to(get_default_dtype())
    right = x >= 0.5
    arg = _where(right, x, 1.0 - x)  # >= 1/2 on both branches
    near = arg < 2.5
    pos = _where(near, _gammaln_near_zeros(_where(near, arg, 2.0)),
                 _gammaln_pos(_where(near, 3.0, arg)))
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


def _bessel_i_parts(x: Tensor, nu: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """For the modified Bessel function I_nu (nu = 0 or 1): (|x|, mask of |x| <= 30, the
    power series there (signed: I_1 is odd), exp(-|x|) I_nu(|x|) by the asymptotic
    expansion elsewhere), each branch on a safe argument."""
    ax = _ew.abs(x)
    small = ax <= 30.0
    xs = _where(small, x, 0.0)
    q = xs * xs / 4.0
    term = q * 0.0 + 1.0 if nu == 0 else xs / 2.0
    total = term
    for k in range(1, 90):  # the terms peak near k = x/2 and are below 1e-17 of it by 90
        term = term * q / float(k * (k + nu))
        total = total + term
    xl = _where(small, 31.0, ax)
    # sum_k c_k / x^k with c_k = (-1)^k prod_{j<=k} (4 nu^2 - (2j - 1)^2) / (k! 8^k)
    coefs, c = [1.0], 1.0
    for k in range(1, 10):
        c *= -(4.0 * nu * nu - (2 * k - 1) ** 2) / (k * 8.0)
        coefs.append(c)
    inv = 1.0 / xl
    series: Any = coefs[-1]
    for c in reversed(coefs[:-1]):
        series = c + inv * series
    return ax, small, total, series / _ew.sqrt(2.0 * math.pi * xl)


def _bessel_i(x: Any, nu: int, scaled: bool) -> Tensor:
    x = _t(x)
    ax, small, total, asym = _bessel_i_parts(x, nu)
    if nu == 1:
        asym = _where(x < 0, -asym, asym)
    if scaled:
        return _where(small, total * _ew.exp(-_where(small, ax, 0.0)), asym)
    return _where(small, total, asym * _ew.exp(_where(small, 0.0, ax)))


def i0(x: Tensor) -> Tensor:
    """The modified Bessel function of the first kind, order 0."""
    return _bessel_i(x, 0, scaled=False)


def i0e(x: Tensor) -> Tensor:
    """``exp(-|x|) i0(x)`` (finite where ``i0`` overflows)."""
    return _bessel_i(x, 0, scaled=True)


def i1(x: Tensor) -> Tensor:
    """The modified Bessel function of the first kind, order 1."""
    return _bessel_i(x, 1, scaled=False)


def i1e(x: Tensor) -> Tensor:
    """``exp(-|x|) i1(x)`` (finite where ``i1`` overflows)."""
    return _bessel_i(x, 1, scaled=True)


modified_bessel_i0 = i0
modified_bessel_i1 = i1


def _converge(step: Any, state: tuple, done: Any, limit: int) -> tuple:
    """Run ``state = step(state)`` in blocks of 8 until ``done(state)`` holds everywhere
    (one host read per block), at most ``limit`` steps: the series and continued fraction
    of the incomplete gamma function need O(sqrt(a)) terms near their crossover."""
    n = 0
    while n < limit:
        for _ in range(8):
            state = step(state)
        n += 8
        if bool(done(state).all()):
            return state
    raise ArithmeticError(f"gammainc: no convergence within {limit} terms (an argument "
                          f"above ~1e7?)")


def _igamma_lower_series(a: Tensor, x: Tensor, eps: float) -> tuple[Tensor, Tensor]:
    """(P, dP/da) for x < a + 1: P = x^a e^-x / Γ(a+1) * S, S = sum_n t_n with
    t_0 = 1, t_n = t_(n-1) x / (a + n); each t_n carries its a-derivative."""
    def step(st: tuple) -> tuple:
        n, t, dt, s, ds = st
        r = x / (a + n)
        dt = dt * r - t * r / (a + n)
        t = t * r
        return n + 1.0, t, dt, s + t, ds + dt
    one, zero = a * 0.0 + 1.0, a * 0.0
    _, _, _, s, ds = _converge(step, (1.0, one, zero, one, zero),
                               lambda st: (st[1] <= eps * st[3]) &
                               (_ew.abs(st[2]) <= eps * _ew.abs(st[4]) + 1e-300), 1 << 20)
    f = _ew.exp(a * _ew.log(x) - x - gammaln(a + 1.0))
    return f * s, f * ((_ew.log(x) - digamma(a + 1.0)) * s + ds)


def _igamma_upper_fraction(a: Tensor, x: Tensor, tiny: float, eps: float
                           ) -> tuple[Tensor, Tensor]:
    """(Q, dQ/da) for x >= a + 1: Q = x^a e^-x / Γ(a) / (x+1-a - 1(1-a)/(x+3-a - ...)),
    by the modified Lentz algorithm carrying each quantity's a-derivative. A lane stops
    when value and derivative both have converged (at integer a the fraction's value
    ends at an = 0, its derivative does not) and is frozen from then on (run far past
    convergence the recurrence drifts)."""
    def guard(v: Tensor, dv: Tensor) -> tuple[Tensor, Tensor]:
        small = _ew.abs(v) < tiny
        return _where(small, tiny, v), _where(small, 0.0, dv)

    def step(st: tuple) -> tuple:
        i, b, c, dc, d, dd, h, dh, done = st
        an, dan = -i * (i - a), i  # d b / d a = -1 throughout
        b = b + 2.0
        u, du = guard(an * d + b, dan * d + an * dd - 1.0)
        d, dd = 1.0 / u, -du / (u * u)
        c, dc = guard(b + an / c, -1.0 + (dan * c - an * dc) / (c * c))
        delta, ddelta = d * c, dd * c + d * dc
        new_h, new_dh = h * delta, dh * delta + h * ddelta
        conv = (_ew.abs(delta - 1.0) <= 4 * eps) & \
            (_ew.abs(new_dh - dh) <= 4 * eps * _ew.abs(new_dh) + 1e-300)
        return (i + 1.0, b, c, dc, d, dd, _where(done, h, new_h), _where(done, dh, new_dh),
                done | conv)
    b = x + 1.0 - a
    d, dd = guard(b, b * 0.0 - 1.0)
    d, dd = 1.0 / d, -dd / (d * d)
    huge = b * 0.0 + 1.0 / tiny
    st = _converge(step, (1.0, b, huge, b * 0.0, d, dd, d, dd, b != b), lambda st: st[8],
                   1 << 20)
    f = _ew.exp(a * _ew.log(x) - x - gammaln(a))
    return f * st[6], f * ((_ew.log(x) - digamma(a)) * st[6] + st[7])


def _igamma_parts(a: Tensor, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """(P, Q, dP/da) of broadcast float tensors, edges included (the derivative is 0
    there)."""
    from .core.dtypes import finfo
    fi = finfo(a.dtype)
    bad = (a < 0) | (x < 0) | (a != a) | (x != x) | ((a == 0) & (x == 0))
    regular = (~bad) & (a > 0) & (x > 0) & (x < math.inf) & (a < math.inf)
    use_series = x < a + 1.0
    # each method on safe arguments, so the other's lanes neither overflow nor stall
    lower, dlower = _igamma_lower_series(_where(regular & use_series, a, 1.0),
                                         _where(regular & use_series, x, 0.5), fi.eps)
    upper, dupper = _igamma_upper_fraction(_where(regular & ~use_series, a, 1.0),
                                           _where(regular & ~use_series, x, 3.0),
                                           fi.tiny, fi.eps)
    p = _where(use_series, lower, 1.0 - upper)
    dp = _where(use_series, dlower, -dupper)
    # the edges: P(a, 0) = 0, P(0, x) = 1, P(a, inf) = 1, P(inf, x) = 0
    edge = _where((x == 0) | (a == math.inf), 0.0, 1.0)
    nan = bad | ((a == math.inf) & (x == math.inf))
    p = _where(nan, math.nan, _where(regular, p, edge))
    q = _where(nan, math.nan, _where(regular, _where(use_series, 1.0 - lower, upper),
                                     1.0 - edge))
    return p, q, _where(regular, dp, 0.0)


def _incomplete_gamma_function() -> Any:
    """The autograd Function of P and Q (built once, on first use: ``autograd`` imports
    core, which ``import omnitensor`` must not pay for here)."""
    global _INCOMPLETE_GAMMA
    if _INCOMPLETE_GAMMA is None:
        from .autograd import Function

        class IncompleteGamma(Function):
            @staticmethod
            def forward(ctx: Any, a: Tensor, x: Tensor, upper: bool) -> Tensor:
                p, q, dp = _igamma_parts(a.detach(), x.detach())
                ctx.save_for_backward(a, x, dp)
                ctx.sign = -1.0 if upper else 1.0
                return q if upper else p

            @staticmethod
            def backward(ctx: Any, grad: Tensor) -> tuple:
                a, x, dp = ctx.saved_tensors
                # d P / d x is the Gamma(a, 1) density
                xs = _where(x > 0, x, 1.0)
                pdf = _where(x > 0, _ew.exp((a - 1.0) * _ew.log(xs) - xs - gammaln(a)),
                             0.0)
                return ctx.sign * grad * dp, ctx.sign * grad * pdf, None
        _INCOMPLETE_GAMMA = IncompleteGamma
    return _INCOMPLETE_GAMMA


_INCOMPLETE_GAMMA: Any = None


def _igamma(a: Any, x: Any, upper: bool) -> Tensor:
    from .core.dtypes import get_default_dtype
    from .core.ops.shape import broadcast_tensors
    a, x = _t(a), _t(x)
    if a.dtype.kind != "f" and x.dtype.kind != "f":
        a, x = a.to(get_default_dtype()), x.to(get_default_dtype())
    a, x = broadcast_tensors(a, x)
    return _incomplete_gamma_function().apply(a, x, upper)


def gammainc_grad_a(a: Tensor, x: Tensor) -> Tensor:
    """``dP(a, x)/da``, exact to the series and fraction's convergence (torch has no
    gradient in ``a``; the Gamma sampler's implicit reparameterisation needs it)."""
    return _igamma_parts(a, x)[2]


def gammainc(input: Any, other: Any) -> Tensor:  # noqa: A002 - torch's names
    """The regularised lower incomplete gamma function P(a, x) (torch.special.gammainc,
    torch.igamma): series below ``x = a + 1``, continued fraction above, each carrying
    its ``a``-derivative. Differentiable in both arguments (torch's is in ``x`` only)."""
    return _igamma(input, other, upper=False)


def gammaincc(input: Any, other: Any) -> Tensor:  # noqa: A002 - torch's names
    """The regularised upper incomplete gamma function Q(a, x) = 1 - P(a, x)
    (torch.special.gammaincc, torch.igammac)."""
    return _igamma(input, other, upper=True)
