"""``kl_divergence(p, q)`` and its pairwise registry (torch.distributions.kl).

``@register_kl(P, Q)`` registers a function for distributions of types ``P`` and ``Q``;
lookup picks the most specific registered pair along both classes' MROs (as torch's), and an
unregistered pair raises ``NotImplementedError`` naming the two types."""
from __future__ import annotations

import math
from typing import Callable

from ..core.ops import elementwise as _ew
from ..core.ops.ternary import where
from ..core.tensor import Tensor
from .. import special
from .continuous import Beta, Gamma, Normal, Uniform
from .discrete import Bernoulli, Categorical
from .distribution import Distribution
from .multivariate import Independent, MultivariateNormal, _batch_mahalanobis

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY: dict[tuple[type, type], Callable] = {}
_KL_MEMO: dict[tuple[type, type], Callable | None] = {}


def register_kl(type_p: type, type_q: type) -> Callable:
    """Decorator registering ``fn(p, q)`` as the KL divergence of ``type_p`` from
    ``type_q``."""
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)
            and isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError("register_kl expects two Distribution subclasses")

    def decorator(fn: Callable) -> Callable:
        _KL_REGISTRY[type_p, type_q] = fn
        _KL_MEMO.clear()
        return fn
    return decorator


def _dispatch(tp: type, tq: type) -> Callable | None:
    key = (tp, tq)
    if key not in _KL_MEMO:
        best, best_rank = None, None
        for (p, q), fn in _KL_REGISTRY.items():
            if issubclass(tp, p) and issubclass(tq, q):
                rank = (tp.__mro__.index(p), tq.__mro__.index(q))
                if best_rank is None or rank < best_rank:
                    best, best_rank = fn, rank
        _KL_MEMO[key] = best
    return _KL_MEMO[key]


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q), batched over the distributions' batch shape."""
    fn = _dispatch(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{type(p).__name__} and q type {type(q).__name__}")
    return fn(p, q)


def _softplus(x: Tensor) -> Tensor:
    return _ew.logaddexp(x, 0.0)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    outside = (q.low > p.low) | (q.high < p.high)
    return where(outside, math.inf, result)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    t1 = p.probs * (_softplus(-q.logits) - _softplus(-p.logits))
    t2 = (1 - p.probs) * (_softplus(q.logits) - _softplus(p.logits))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    t = where(p.probs == 0, 0.0, t)
    return where(q.probs == 0, math.inf, t).sum(-1)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Tensor:
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = special.gammaln(q.concentration) - special.gammaln(p.concentration)
    t3 = (p.concentration - q.concentration) * special.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = special.gammaln(q.concentration1) + special.gammaln(q.concentration0) + \
        special.gammaln(sum_p)
    t2 = special.gammaln(p.concentration1) + special.gammaln(p.concentration0) + \
        special.gammaln(sum_q)
    t3 = (p.concentration1 - q.concentration1) * special.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * special.digamma(p.concentration0)
    t5 = (sum_q - sum_p) * special.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    from ..linalg import solve_triangular
    from ..core.ops.shape import broadcast_to
    from ..core.shape_util import broadcast_shapes
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL between MultivariateNormals of different event shapes "
                         f"{p.event_shape} and {q.event_shape}")
    k = p.event_shape[0]
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = Lq.diagonal(dim1=-2, dim2=-1).log().sum(-1) - \
        Lp.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    batch = broadcast_shapes(tuple(Lp.shape[:-2]), tuple(Lq.shape[:-2]))
    term2 = (solve_triangular(broadcast_to(Lq, batch + (k, k)),
                              broadcast_to(Lp, batch + (k, k)), upper=False) ** 2
             ).sum(-1).sum(-1)
    term3 = _batch_mahalanobis(Lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - k)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independents with different "
                                  "reinterpreted_batch_ndims is not implemented")
    result = kl_divergence(p.base_dist, q.base_dist)
    for _ in range(p.reinterpreted_batch_ndims):
        result = result.sum(-1)
    return result
