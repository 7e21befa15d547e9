"""NegativeBinomial(total_count, probs | logits) (torch.distributions.negative_binomial)."""
from __future__ import annotations

from typing import Any

from .. import special
from ..core.grad_mode import no_grad
from ..core.ops.ternary import where
from ..core.tensor import Tensor
from . import constraints
from ._probs_logits import ProbsOrLogits
from ._samplers import poisson
from .distribution import Distribution
from .gamma import Gamma
from .utils import _softplus, lazy_property

__all__ = ["NegativeBinomial"]


def _logsigmoid(x: Tensor) -> Tensor:
    # -softplus(-x) through logaddexp: nn.functional.logsigmoid's gradient at 0 is 1, not
    # 1/2 (its |x| and clamp kinks meet there)
    return -_softplus(-x)


class NegativeBinomial(ProbsOrLogits, Distribution):
    """The number of successes (each of probability ``probs``) before ``total_count``
    failures; sampled as a Gamma-Poisson mixture."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer
    _expand_attrs = ("total_count", "probs", "logits")

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        param, count = self._set_probs_or_logits(probs, logits, total_count)
        self.total_count = count.to(param.dtype)
        super().__init__(param.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def _gamma(self) -> Gamma:
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(),
                     validate_args=False)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with no_grad():
            return poisson(self._gamma.sample(sample_shape))

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        unnormalized = n * _logsigmoid(-self.logits) + value * _logsigmoid(self.logits)
        normalization = -special.gammaln(n + value) + special.gammaln(1.0 + value) + \
            special.gammaln(n)
        # n = k = 0 is the empty draw: probability 1
        normalization = where(n + value == 0.0, 0.0, normalization)
        return unnormalized - normalization
