"""KL divergences between different families (torch's registered cross pairs).

Each is ``-H(p) + E_p[-log q(x)]`` with ``p``'s moments in closed form; where ``p``'s
support leaves ``q``'s (a real-line ``p`` against a positive ``q``, a heavy-tailed ``p``
without the moment the cross-entropy needs) the divergence is infinite."""
from __future__ import annotations

import math
from typing import Any

from .. import special
from ..core.ops.ternary import where
from ..core.tensor import Tensor
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .continuous_bernoulli import ContinuousBernoulli
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .kl import _infinite_like, _x_log_x, register_kl
from .laplace import Laplace
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .uniform import Uniform
from .utils import euler_constant

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


# ------------------------------------------------ cross-entropies against each q family
def _ce_normal(q: Any, mean: Tensor, second_moment: Tensor) -> Tensor:
    """``E[-log N(x; μ, σ)] = log σ + log(2π)/2 + E[(x - μ)²] / (2σ²)``."""
    sq_dev = second_moment - 2 * q.loc * mean + q.loc.pow(2)
    return q.scale.log() + _HALF_LOG_2PI + sq_dev / (2 * q.scale.pow(2))


def _ce_gamma(q: Any, mean: Tensor, mean_log: Tensor) -> Tensor:
    """``E[-log Gamma(x; a, b)] = lgamma(a) - a log b - (a - 1) E[log x] + b E[x]``."""
    a = q.concentration
    return special.gammaln(a) - a * q.rate.log() - (a - 1) * mean_log + q.rate * mean


def _ce_exponential(q: Any, mean: Tensor) -> Tensor:
    return -q.rate.log() + q.rate * mean


def _ce_gumbel(q: Any, mean: Tensor, mean_exp_neg: Tensor) -> Tensor:
    """``E[-log Gumbel(x; μ, β)] = log β + E[z] + E[e^-z]`` for ``z = (x - μ)/β``;
    ``mean_exp_neg`` is ``E[exp(-x / β)]``."""
    return q.scale.log() + (mean - q.loc) / q.scale + (q.loc / q.scale).exp() * mean_exp_neg


def _ce_cont_bernoulli(q: Any, mean: Tensor) -> Tensor:
    return -(mean * q.logits + (-q.probs).log1p() + q._cont_bern_log_norm())


def _ce_beta(q: Any, mean_log: Tensor, mean_log1m: Tensor) -> Tensor:
    a, b = q.concentration1, q.concentration0
    lbeta = special.gammaln(a) + special.gammaln(b) - special.gammaln(a + b)
    return lbeta - (a - 1) * mean_log - (b - 1) * mean_log1m


def _ce_uniform(q: Any, p_low: Any, p_high: Any) -> Tensor:
    result = (q.high - q.low).log()
    return where((q.low > p_low) | (q.high < p_high), math.inf, result)


def _ce_pareto(q: Any, mean_log: Tensor) -> Tensor:
    """``E[-log Pareto(x; s, α)] = -log α - α log s + (α + 1) E[log x]``."""
    return -q.alpha.log() - q.alpha * q.scale.log() + (q.alpha + 1) * mean_log


# ------------------------------------------------------------------ p = Bernoulli
@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p: Any, q: Any) -> Tensor:
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


# ------------------------------------------------------------------------ p = Beta
def _beta_moments(p: Any) -> tuple[Tensor, Tensor, Tensor]:
    """(E[x], E[x²], E[log x]) of a Beta."""
    total = p.concentration1 + p.concentration0
    mean = p.concentration1 / total
    second = mean * (1 - mean) / (total + 1) + mean.pow(2)
    return mean, second, special.digamma(p.concentration1) - special.digamma(total)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_cb(p: Any, q: Any) -> Tensor:
    return -p.entropy() + _ce_cont_bernoulli(q, p.mean)


@register_kl(Beta, Pareto)
def _kl_beta_infinity(p: Any, q: Any) -> Tensor:
    return _infinite_like(p.concentration1)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p: Any, q: Any) -> Tensor:
    return -p.entropy() + _ce_exponential(q, _beta_moments(p)[0])


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p: Any, q: Any) -> Tensor:
    mean, _, mean_log = _beta_moments(p)
    return -p.entropy() + _ce_gamma(q, mean, mean_log)


@register_kl(Beta, Normal)
def _kl_beta_normal(p: Any, q: Any) -> Tensor:
    mean, second, _ = _beta_moments(p)
    return -p.entropy() + _ce_normal(q, mean, second)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p: Any, q: Any) -> Tensor:
    return -p.entropy() + _ce_uniform(q, 0.0, 1.0)


# ------------------------------------------------------------ p = ContinuousBernoulli
@register_kl(ContinuousBernoulli, Pareto)
def _kl_cb_infinity(p: Any, q: Any) -> Tensor:
    return _infinite_like(p.probs)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_cb_exponential(p: Any, q: Any) -> Tensor:
    return -p.entropy() + _ce_exponential(q, p.mean)


@register_kl(ContinuousBernoulli, Normal)
def _kl_cb_normal(p: Any, q: Any) -> Tensor:
    return -p.entropy() + _ce_normal(q, p.mean, p.variance + p.mean.pow(2))


@register_kl(ContinuousBernoulli, Uniform)
def _kl_cb_uniform(p: Any, q: Any) -> Tensor:
    return -p.entropy() + _ce_uniform(q, 0.0, 1.0)


# ----------------------------------------------------------------- p = Exponential
@register_kl(Exponential, Beta)
@register_kl(Exponential, ContinuousBernoulli)
@register_kl(Exponential, Pareto)
@register_kl(Exponential, Uniform)
def _kl_exponential_infinity(p: Any, q: Any) -> Tensor:
    return _infinite_like(p.rate)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p: Any, q: Any) -> Tensor:
    # E[log x] = -γ - log λ
    return -p.entropy() + _ce_gamma(q, p.rate.reciprocal(), -euler_constant - p.rate.log())


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p: Any, q: Any) -> Tensor:
    # E[exp(-x/β)] = λ / (λ + 1/β)
    return -p.entropy() + _ce_gumbel(q, p.rate.reciprocal(),
                                     p.rate / (p.rate + q.scale.reciprocal()))


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p: Any, q: Any) -> Tensor:
    mean = p.rate.reciprocal()
    return -p.entropy() + _ce_normal(q, mean, 2 * mean.pow(2))


# ------------------------------------------------------------------------ p = Gamma
@register_kl(Gamma, Beta)
@register_kl(Gamma, ContinuousBernoulli)
@register_kl(Gamma, Pareto)
@register_kl(Gamma, Uniform)
def _kl_gamma_infinity(p: Any, q: Any) -> Tensor:
    return _infinite_like(p.concentration)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p: Any, q: Any) -> Tensor:
    return -p.entropy() + _ce_exponential(q, p.concentration / p.rate)


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p: Any, q: Any) -> Tensor:
    # E[exp(-x/β)] = (1 + 1/(b β))^-a: the Gamma's Laplace transform
    mgf = (1 + (p.rate * q.scale).reciprocal()).pow(-p.concentration)
    return -p.entropy() + _ce_gumbel(q, p.concentration / p.rate, mgf)


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p: Any, q: Any) -> Tensor:
    a, b = p.concentration, p.rate
    return -p.entropy() + _ce_normal(q, a / b, a * (a + 1) / b.pow(2))


# ----------------------------------------------------------------------- p = Gumbel
@register_kl(Gumbel, Beta)
@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Gumbel, Exponential)
@register_kl(Gumbel, Gamma)
@register_kl(Gumbel, Pareto)
@register_kl(Gumbel, Uniform)
def _kl_gumbel_infinity(p: Any, q: Any) -> Tensor:
    return _infinite_like(p.loc)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p: Any, q: Any) -> Tensor:
    return -p.entropy() + _ce_normal(q, p.mean, p.variance + p.mean.pow(2))


# ---------------------------------------------------------------------- p = Laplace
@register_kl(Laplace, Beta)
@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Laplace, Exponential)
@register_kl(Laplace, Gamma)
@register_kl(Laplace, Pareto)
@register_kl(Laplace, Uniform)
def _kl_laplace_infinity(p: Any, q: Any) -> Tensor:
    return _infinite_like(p.loc)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p: Any, q: Any) -> Tensor:
    return -p.entropy() + _ce_normal(q, p.loc, p.variance + p.loc.pow(2))


# ----------------------------------------------------------------------- p = Normal
@register_kl(Normal, Beta)
@register_kl(Normal, ContinuousBernoulli)
@register_kl(Normal, Exponential)
@register_kl(Normal, Gamma)
@register_kl(Normal, Pareto)
@register_kl(Normal, Uniform)
def _kl_normal_infinity(p: Any, q: Any) -> Tensor:
    return _infinite_like(p.loc)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p: Any, q: Any) -> Tensor:
    # E[exp(-x/β)] = exp(-μ/β + σ²/(2β²))
    mgf = (-p.loc / q.scale + p.scale.pow(2) / (2 * q.scale.pow(2))).exp()
    return -p.entropy() + _ce_gumbel(q, p.loc, mgf)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p: Any, q: Any) -> Tensor:
    # E|x - m| = σ sqrt(2/π) exp(-d²/(2σ²)) + d erf(d / (σ sqrt 2)), d = μ - m
    d = p.loc - q.loc
    mean_abs = p.scale * math.sqrt(2 / math.pi) * (-d.pow(2) / (2 * p.scale.pow(2))).exp() + \
        d * special.erf(d / (p.scale * math.sqrt(2)))
    return -p.entropy() + (2 * q.scale).log() + mean_abs / q.scale


# ----------------------------------------------------------------------- p = Pareto
@register_kl(Pareto, Beta)
@register_kl(Pareto, ContinuousBernoulli)
@register_kl(Pareto, Uniform)
def _kl_pareto_infinity(p: Any, q: Any) -> Tensor:
    return _infinite_like(p.scale)


def _pareto_mean(p: Any) -> Tensor:
    a = where(p.alpha > 1, p.alpha, 2.0)
    return where(p.alpha > 1, a * p.scale / (a - 1), math.inf)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p: Any, q: Any) -> Tensor:
    return -p.entropy() + _ce_exponential(q, _pareto_mean(p))


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p: Any, q: Any) -> Tensor:
    mean_log = p.scale.log() + p.alpha.reciprocal()
    return -p.entropy() + _ce_gamma(q, _pareto_mean(p), mean_log)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p: Any, q: Any) -> Tensor:
    a = where(p.alpha > 2, p.alpha, 3.0)
    second = where(p.alpha > 2, a * p.scale.pow(2) / (a - 2), math.inf)
    mean = where(p.alpha > 2, a * p.scale / (a - 1), 0.0)
    return -p.entropy() + _ce_normal(q, mean, second)


# ---------------------------------------------------------------------- p = Poisson
@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p: Any, q: Any) -> Tensor:
    return _infinite_like(p.rate)


# ---------------------------------------------------------------------- p = Uniform
def _uniform_mean_log(low: Tensor, high: Tensor) -> Tensor:
    """``E[log x]`` for x uniform on [low, high] (0 log 0 = 0)."""
    return (_x_log_x(high) - _x_log_x(low)) / (high - low) - 1


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p: Any, q: Any) -> Tensor:
    mean_log = _uniform_mean_log(p.low, p.high)
    mean_log1m = _uniform_mean_log(1 - p.high, 1 - p.low)
    result = -p.entropy() + _ce_beta(q, mean_log, mean_log1m)
    return where((p.high > 1) | (p.low < 0), math.inf, result)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_cb(p: Any, q: Any) -> Tensor:
    result = -p.entropy() + _ce_cont_bernoulli(q, p.mean)
    return where((p.high > 1) | (p.low < 0), math.inf, result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p: Any, q: Any) -> Tensor:
    result = -p.entropy() + _ce_exponential(q, p.mean)
    return where(p.low < 0, math.inf, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p: Any, q: Any) -> Tensor:
    result = -p.entropy() + _ce_gamma(q, p.mean, _uniform_mean_log(p.low, p.high))
    return where(p.low < 0, math.inf, result)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p: Any, q: Any) -> Tensor:
    b = q.scale
    mean_exp = b * ((-p.low / b).exp() - (-p.high / b).exp()) / (p.high - p.low)
    return -p.entropy() + _ce_gumbel(q, p.mean, mean_exp)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p: Any, q: Any) -> Tensor:
    return -p.entropy() + _ce_normal(q, p.mean, p.variance + p.mean.pow(2))


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p: Any, q: Any) -> Tensor:
    result = -p.entropy() + _ce_pareto(q, _uniform_mean_log(p.low, p.high))
    return where(p.low < q.scale, math.inf, result)
