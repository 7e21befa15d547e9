"""Binomial(total_count, probs | logits) (torch.distributions.binomial)."""
from __future__ import annotations

from typing import Any

from .. import special
from ..core.grad_mode import no_grad
from ..core.ops.creation import arange
from ..core.tensor import Tensor
from . import constraints
from ._probs_logits import ProbsOrLogits
from ._samplers import binomial
from .distribution import Distribution
from .utils import _softplus

__all__ = ["Binomial"]


class Binomial(ProbsOrLogits, Distribution):
    """The number of successes in ``total_count`` independent trials of probability
    ``probs`` (``total_count`` may be a tensor, broadcast with the probabilities)."""
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True
    _expand_attrs = ("total_count", "probs", "logits")

    def __init__(self, total_count: Any = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        param, count = self._set_probs_or_logits(probs, logits, total_count)
        self.total_count = count.to(param.dtype)
        super().__init__(param.shape, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            return binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_binom = special.gammaln(n + 1) - special.gammaln(value + 1) - \
            special.gammaln(n - value + 1)
        # k log p + (n - k) log(1 - p) = k logits - n softplus(logits)
        return log_binom + value * self.logits - n * _softplus(self.logits)

    def _homogeneous_count(self, what: str) -> int:
        count = int(self.total_count.max())
        if not count == self.total_count.min():
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return count

    def entropy(self) -> Tensor:
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        count = self._homogeneous_count("enumerate_support")
        values = arange(1 + count, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
