"""The regularised incomplete gamma functions P(a, x) and Q(a, x) (torch.special.gammainc
and gammaincc, torch.igamma and igammac): the series below ``x = a + 1`` and the modified
Lentz continued fraction above, each carrying its ``a``-derivative as a dual number, so
that both arguments are differentiable (torch's gradient is in ``x`` only) and the Gamma
sampler's implicit reparameterisation has ``dP/da``.
"""
from __future__ import annotations

import math
from typing import Any

from ..core.ops import elementwise as _ew
from ..core.ops.ternary import where as _where
from ..core.tensor import Tensor
from ._common import as_tensor as _t
from .gamma import digamma, gammaln


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
    from ..core.dtypes import finfo
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
        from ..autograd import Function

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
    from ..core.dtypes import get_default_dtype
    from ..core.ops.shape import broadcast_tensors
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
