"""``kl_divergence(p, q)`` and its pairwise registry (torch.distributions.kl).

``@register_kl(P, Q)`` registers ``fn(p, q)`` for distributions of types ``P`` and ``Q``.
Lookup picks the most specific registered pair along both classes' hierarchies (as
torch's, warning when the most specific pair by ``p`` first and by ``q`` first differ),
and an unregistered pair raises NotImplementedError naming both types. The same-family
pairs live here, the cross-family ones (mostly infinite: the supports differ) in
``_kl_cross``."""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable

from .. import special
from ..core.ops.creation import full_like
from ..core.ops.ternary import where
from ..core.tensor import Tensor
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .lowrank_multivariate_normal import (LowRankMultivariateNormal, _batch_lowrank_logdet,
                                          _batch_lowrank_mahalanobis)
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis, _solve_lower
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import _softplus, _sum_rightmost, euler_constant

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY: dict[tuple[type, type], Callable] = {}
_KL_MEMOIZE: dict[tuple[type, type], Any] = {}


def register_kl(type_p: type, type_q: type) -> Callable:
    """Decorator registering ``fn(p, q)`` as ``KL(p || q)`` for ``type_p`` and ``type_q``.
    Any classes are accepted, as torch's check lets them through: libraries register
    pairs with their own base classes (pyro's ``Distribution``, a mixin of torch's)."""
    for name, t in (("type_p", type_p), ("type_q", type_q)):
        if not isinstance(t, type):
            raise TypeError(f"Expected {name} to be a Distribution subclass but got {t}")

    def decorator(fun: Callable) -> Callable:
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun
    return decorator


def _most_specific(pairs: list[tuple[type, type]]) -> tuple[type, type]:
    """The pair no other pair is more specific than, comparing the first type first."""
    best = pairs[0]
    for cand in pairs[1:]:
        for x, y in zip(cand, best):
            if not issubclass(x, y):
                break
            if x is not y:
                best = cand
                break
    return best


def _dispatch_kl(type_p: type, type_q: type) -> Any:
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY
               if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return NotImplemented
    left = _most_specific(matches)
    right_q, right_p = _most_specific([(q, p) for p, q in matches])
    left_fun, right_fun = _KL_REGISTRY[left], _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left[0].__name__}, {right_q.__name__})",
                      RuntimeWarning, stacklevel=3)
    return left_fun


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """``KL(p || q) = E_p[log p(x) - log q(x)]``, batched over the batch shape."""
    key = (type(p), type(q))
    try:
        fun = _KL_MEMOIZE[key]
    except KeyError:
        fun = _KL_MEMOIZE[key] = _dispatch_kl(*key)
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{type(p).__name__} and q type {type(q).__name__}")
    return fun(p, q)


def _infinite_like(t: Tensor) -> Tensor:
    return full_like(t, math.inf)


def _x_log_x(t: Tensor) -> Tensor:
    return special.xlogy(t, t)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Any, q: Any) -> Tensor:
    t1 = p.probs * (_softplus(-q.logits) - _softplus(-p.logits))
    t1 = where(p.probs == 0, 0.0, where(q.probs == 0, math.inf, t1))
    t2 = (1 - p.probs) * (_softplus(q.logits) - _softplus(p.logits))
    t2 = where(p.probs == 1, 0.0, where(q.probs == 1, math.inf, t2))
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Any, q: Any) -> Tensor:
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    lg = special.gammaln
    t1 = lg(q.concentration1) + lg(q.concentration0) + lg(sum_p)
    t2 = lg(p.concentration1) + lg(p.concentration0) + lg(sum_q)
    t3 = (p.concentration1 - q.concentration1) * special.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * special.digamma(p.concentration0)
    t5 = (sum_q - sum_p) * special.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p: Any, q: Any) -> Tensor:
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > "
                                  "p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return where(p.total_count > q.total_count, math.inf, kl)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Any, q: Any) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    t = where(p.probs == 0, 0.0, where(q.probs == 0, math.inf, t))
    return t.sum(-1)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_cb_cb(p: Any, q: Any) -> Tensor:
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    t3 = -q._cont_bern_log_norm() - (-q.probs).log1p()
    return t1 + t2 + t3


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Any, q: Any) -> Tensor:
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = special.gammaln(sum_p) - special.gammaln(sum_q)
    t2 = (special.gammaln(p.concentration) - special.gammaln(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = special.digamma(p.concentration) - special.digamma(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Any, q: Any) -> Tensor:
    ratio = q.rate / p.rate
    return -ratio.log() + ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p: Any, q: Any) -> Tensor:
    """The Bregman divergence of the log normalizer between the natural parameters."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    from ..autograd import grad
    from ..core.grad_mode import enable_grad
    with enable_grad():
        p_params = [t.detach().requires_grad_() for t in p._natural_params]
        lg_normal = p._log_normalizer(*p_params)
        grads = grad(lg_normal.sum(), p_params, create_graph=True)
    q_params = q._natural_params
    result = q._log_normalizer(*q_params) - lg_normal
    for pp, qp, g in zip(p_params, q_params, grads):
        result = result - _sum_rightmost((qp - pp) * g, len(q.event_shape))
    return result


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Any, q: Any) -> Tensor:
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = special.gammaln(q.concentration) - special.gammaln(p.concentration)
    t3 = (p.concentration - q.concentration) * special.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p: Any, q: Any) -> Tensor:
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * euler_constant
    t3 = (ct2 + special.gammaln(1 + ct1) - ct3).exp()
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p: Any, q: Any) -> Tensor:
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p: Any, q: Any) -> Tensor:
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Any, q: Any) -> Tensor:
    ratio = p.scale / q.scale
    diff = (p.loc - q.loc).abs()
    return -ratio.log() + diff / q.scale + ratio * (-diff / p.scale).exp() - 1


def _check_event_shapes(p: Any, q: Any) -> int:
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two (Low Rank) Multivariate Normals with "
                         "different event shapes cannot be computed")
    return p.event_shape[0]


def _frobenius2(m: Tensor) -> Tensor:
    return m.pow(2).sum(-1).sum(-1)


def _lowrank_q_parts(q: Any) -> tuple[Tensor, Tensor]:
    """``D^-1`` and ``A`` with ``Σq^-1 = D^-1 - A^T A`` (Woodbury) for a low-rank ``q``."""
    wt_dinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    return q._unbroadcasted_cov_diag.reciprocal(), _solve_lower(q._capacitance_tril, wt_dinv)


def _lowrank_logdet(d: Any) -> Tensor:
    return _batch_lowrank_logdet(d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag,
                                 d._capacitance_tril)


def _lowrank_mahalanobis(q: Any, x: Tensor) -> Tensor:
    return _batch_lowrank_mahalanobis(q._unbroadcasted_cov_factor,
                                      q._unbroadcasted_cov_diag, x, q._capacitance_tril)


def _mvn_logdet(d: Any) -> Tensor:
    return 2 * d._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def _gaussian_kl(n: int, logdet_p: Tensor, logdet_q: Tensor, trace: Tensor,
                 mahalanobis: Tensor) -> Tensor:
    """``(log det Σq - log det Σp + tr(Σq^-1 Σp) + Δ^T Σq^-1 Δ - n) / 2``."""
    return 0.5 * (logdet_q - logdet_p + trace + mahalanobis - n)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p: Any, q: Any) -> Tensor:
    n = _check_event_shapes(p, q)
    dinv, a = _lowrank_q_parts(q)
    wp, dp = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    # tr((D^-1 - A^T A)(Wp Wp^T + Dp))
    trace = (dp * dinv).sum(-1) + _frobenius2(wp * dinv.unsqueeze(-1).sqrt()) - \
        _frobenius2(a * dp.unsqueeze(-2).sqrt()) - _frobenius2(a @ wp)
    return _gaussian_kl(n, _lowrank_logdet(p), _lowrank_logdet(q), trace,
                        _lowrank_mahalanobis(q, q.loc - p.loc))


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p: Any, q: Any) -> Tensor:
    n = _check_event_shapes(p, q)
    dinv, a = _lowrank_q_parts(q)
    lp = p._unbroadcasted_scale_tril
    trace = _frobenius2(lp * dinv.unsqueeze(-1).sqrt()) - _frobenius2(a @ lp)
    return _gaussian_kl(n, _mvn_logdet(p), _lowrank_logdet(q), trace,
                        _lowrank_mahalanobis(q, q.loc - p.loc))


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p: Any, q: Any) -> Tensor:
    n = _check_event_shapes(p, q)
    lq = q._unbroadcasted_scale_tril
    wp, dp = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    trace = _frobenius2(_solve_lower(lq, wp)) + \
        _frobenius2(_solve_lower(lq, dp.sqrt().diag_embed()))
    return _gaussian_kl(n, _lowrank_logdet(p), _mvn_logdet(q), trace,
                        _batch_mahalanobis(lq, q.loc - p.loc))


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: Any, q: Any) -> Tensor:
    n = _check_event_shapes(p, q)
    lq = q._unbroadcasted_scale_tril
    trace = _frobenius2(_solve_lower(lq, p._unbroadcasted_scale_tril))
    return _gaussian_kl(n, _mvn_logdet(p), _mvn_logdet(q), trace,
                        _batch_mahalanobis(lq, q.loc - p.loc))


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Any, q: Any) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p: Any, q: Any) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p: Any, q: Any) -> Tensor:
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return where(p.scale < q.scale, math.inf, result)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Any, q: Any) -> Tensor:
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p: Any, q: Any) -> Tensor:
    if p.transforms != q.transforms:
        raise NotImplementedError("KL between TransformedDistributions with different "
                                  "transforms is not implemented")
    if p.event_shape != q.event_shape:
        raise NotImplementedError("KL between TransformedDistributions with different "
                                  "event shapes is not implemented")
    extra = len(p.event_shape) - len(p.base_dist.event_shape)
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), extra)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Any, q: Any) -> Tensor:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return where((q.low > p.low) | (q.high < p.high), math.inf, result)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Any, q: Any) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independents with different "
                                  "reinterpreted_batch_ndims is not implemented")
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist),
                          p.reinterpreted_batch_ndims)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p: Any, q: Any) -> Tensor:
    return (((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2))
            / (4 * p.scale * q.scale)).log()

