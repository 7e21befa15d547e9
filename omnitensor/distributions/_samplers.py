"""Samplers written with Tensor ops from omnitensor's generator (torch's
``_standard_gamma``, ``_sample_dirichlet``, ``poisson`` and ``binomial``).

Rejection samplers run every lane each round and keep the first accepted proposal per
lane, with one host read per round to stop (each round accepts most lanes). The Gamma
draw is reparameterised by implicit differentiation: ``dx/da = -(dP(a, x)/da) / p(x; a)``
with ``P`` the regularised incomplete gamma function, its ``a``-derivative carried
through ``special.gammainc``'s series and continued fraction, in float64 where the device
has it (an exact derivative where torch uses a fitted approximation)."""
from __future__ import annotations

from typing import Any, Callable

from .. import special
from ..autograd import Function
from ..core.dtypes import finfo, float64
from ..core.grad_mode import no_grad
from ..core.ops.creation import zeros
from ..core.ops.random import rand, randn
from ..core.ops.shape import broadcast_to
from ..core.ops.ternary import where
from ..core.tensor import Tensor

__all__ = ["standard_gamma", "standard_gamma_grad", "sample_dirichlet", "poisson",
           "binomial"]


def _uniform(like: Tensor) -> Tensor:
    return rand(tuple(like.shape), dtype=like.dtype, device=like.device)


def _reject(propose: Callable[[], tuple[Tensor, Tensor]], like: Tensor, what: str,
            rounds: int = 200) -> Tensor:
    """The first accepted proposal per lane; ``propose()`` gives (values, accepted)."""
    out = zeros(tuple(like.shape), dtype=like.dtype, device=like.device)
    done = out != out  # all False
    for _ in range(rounds):
        value, ok = propose()
        out = where(ok & ~done, value, out)
        done = done | ok
        if bool(done.all()):
            return out
    raise RuntimeError(f"{what} sampling did not converge in {rounds} rounds (parameters "
                       f"outside the sampler's range, or NaN?)")


def _marsaglia_tsang(a: Tensor) -> Tensor:
    """Gamma(a, 1) draws for ``a >= 1`` (Marsaglia and Tsang, 2000)."""
    d = a - 1.0 / 3
    c = 1.0 / (9 * d).sqrt()

    def propose() -> tuple[Tensor, Tensor]:
        z = randn(tuple(a.shape), dtype=a.dtype, device=a.device)
        v = (1 + c * z) ** 3
        u = _uniform(a)
        vs = where(v > 0, v, 1.0)
        ok = (v > 0) & (u.log() < 0.5 * z * z + d - d * vs + d * vs.log())
        return d * vs, ok
    return _reject(propose, a, "Gamma")


def _standard_gamma_draw(a: Tensor) -> Tensor:
    """Gamma(a, 1) draws of ``a``'s shape: concentrations below 1 draw at ``a + 1`` and
    scale by ``u ** (1 / a)`` (in logs, so tiny ``a`` underflows to 0, not NaN)."""
    boost = a < 1
    x = _marsaglia_tsang(where(boost, a + 1, a))
    u = _uniform(a).clamp(min=finfo(a.dtype).tiny)
    return where(boost, (x.log() + u.log() / a).exp(), x)


def standard_gamma_grad(alpha: Tensor, x: Tensor) -> Tensor:
    """``dx/dalpha`` of Gamma(alpha, 1) draws ``x`` by implicit differentiation of the
    CDF (torch's ``_standard_gamma_grad``); 0 where ``x`` underflowed to 0."""
    wide = float64 if x.device.supports_dtype(float64) else x.dtype
    a = alpha.detach().to(wide)
    xs = x.detach().to(wide)
    pos = xs > 0
    xs = where(pos, xs, 1.0)
    log_pdf = (a - 1) * xs.log() - xs - special.gammaln(a)
    out = -special.gammainc_grad_a(a, xs) * (-log_pdf).exp()
    out = where(pos & (out == out), out, 0.0)
    return out.to(x.dtype)


class _StandardGamma(Function):
    """A Gamma(alpha, 1) draw whose gradient is the implicit reparameterisation."""

    @staticmethod
    def forward(ctx: Any, alpha: Tensor) -> Tensor:
        x = _standard_gamma_draw(alpha.detach())
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> Tensor:
        alpha, x = ctx.saved_tensors
        return grad_output * standard_gamma_grad(alpha, x)


def standard_gamma(concentration: Tensor) -> Tensor:
    """Gamma(concentration, 1) draws of ``concentration``'s shape, reparameterised."""
    if concentration.requires_grad:
        return _StandardGamma.apply(concentration)
    with no_grad():
        return _standard_gamma_draw(concentration)


def sample_dirichlet(concentration: Tensor) -> Tensor:
    """Dirichlet draws (normalised Gamma draws over the last dim), reparameterised through
    the Gamma draws (gammas below the dtype's smallest normal count as it, so that every
    draw lies on the simplex)."""
    g = standard_gamma(concentration).clamp(min=finfo(concentration.dtype).tiny)
    return g / g.sum(-1, keepdim=True)


def _poisson_inversion(lam: Tensor) -> Tensor:
    """Poisson draws by sequential inversion of the CDF (for rates below 10)."""
    u = _uniform(lam)
    k = zeros(tuple(lam.shape), dtype=lam.dtype, device=lam.device)
    p = (-lam).exp()
    cdf = p
    while True:
        for _ in range(16):
            more = u > cdf
            k = where(more, k + 1, k)
            p = where(more, p * lam / k.clamp(min=1), p)
            cdf = where(more, cdf + p, cdf)
        # 1 - cdf below machine precision: the remaining mass is rounding, stop there
        if not bool(((u > cdf) & (p > finfo(lam.dtype).eps * 1e-3)).any()):
            return k


def _poisson_ptrs(lam: Tensor) -> Tensor:
    """Poisson draws by Hörmann's transformed rejection with squeeze (PTRS, 1993), for
    rates of 10 and above."""
    slam, loglam = lam.sqrt(), lam.log()
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2)

    def propose() -> tuple[Tensor, Tensor]:
        u = _uniform(lam) - 0.5
        v = _uniform(lam)
        us = 0.5 - u.abs()
        k = ((2 * a / us + b) * u + lam + 0.43).floor()
        squeeze = (us >= 0.07) & (v <= vr)
        ks = k.clamp(min=0)
        bound = -lam + ks * loglam - special.gammaln(ks + 1)
        accept = (v * inv_alpha / (a / (us * us) + b)).log() <= bound
        ok = squeeze | ((k >= 0) & ~((us < 0.013) & (v > us)) & accept)
        return k, ok
    return _reject(propose, lam, "Poisson")


def poisson(rate: Tensor) -> Tensor:
    """Poisson(rate) draws of ``rate``'s shape (torch.poisson), as floats."""
    lam = rate.detach()
    small = lam < 10
    out = where(small, _poisson_inversion(where(small, lam, 1.0)),
                _poisson_ptrs(where(small, 10.0, lam)))
    return where(lam == 0, 0.0, out)


def _binomial_inversion(n: Tensor, p: Tensor) -> Tensor:
    """Binomial(n, p) draws by sequential inversion, for ``n p < 10`` and ``p <= 1/2``."""
    q = 1 - p
    s = p / q
    a = (n + 1) * s
    r = q ** n
    u = _uniform(p)
    x = zeros(tuple(p.shape), dtype=p.dtype, device=p.device)
    while True:
        for _ in range(16):
            more = (u > r) & (x < n)
            u = where(more, u - r, u)
            x = where(more, x + 1, x)
            r = where(more, r * (a / x.clamp(min=1) - s), r)
        if not bool(((u > r) & (x < n) & (r > 0)).any()):
            return x


def _binomial_btrs(n: Tensor, p: Tensor) -> Tensor:
    """Binomial(n, p) draws by Hörmann's transformed rejection (BTRS, 1993), for
    ``n p >= 10`` and ``p <= 1/2``."""
    q = 1 - p
    spq = (n * p * q).sqrt()
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    vr = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    lpq = (p / q).log()
    m = ((n + 1) * p).floor()
    h = special.gammaln(m + 1) + special.gammaln(n - m + 1)

    def propose() -> tuple[Tensor, Tensor]:
        u = _uniform(p) - 0.5
        v = _uniform(p)
        us = 0.5 - u.abs()
        k = ((2 * a / us + b) * u + c).floor()
        inside = (k >= 0) & (k <= n)
        ks = k.clamp(min=0).minimum(n)
        squeeze = (us >= 0.07) & (v <= vr)
        lv = (v * alpha / (a / (us * us) + b)).log()
        bound = h - special.gammaln(ks + 1) - special.gammaln(n - ks + 1) + (ks - m) * lpq
        return k, inside & (squeeze | (lv <= bound))
    return _reject(propose, p, "Binomial")


def binomial(count: Tensor, prob: Tensor) -> Tensor:
    """Binomial(count, prob) draws of the broadcast shape (torch.binomial), as floats."""
    count, prob = count.detach(), prob.detach()
    from ..core.shape_util import broadcast_shapes
    shape = broadcast_shapes(tuple(count.shape), tuple(prob.shape))
    n = broadcast_to(count.to(prob.dtype), shape)
    p = broadcast_to(prob, shape)
    flip = p > 0.5
    pl = where(flip, 1 - p, p)
    small = n * pl < 10
    valid = (pl > 0) & (n > 0)
    pi = where(valid & small, pl, 0.25)
    ni = where(valid & small, n, 1.0)
    pb = where(valid & ~small, pl, 0.25)
    nb = where(valid & ~small, n, 100.0)
    x = where(small, _binomial_inversion(ni, pi), _binomial_btrs(nb, pb))
    x = where(valid, x, 0.0)
    return where(flip, n - x, x)
