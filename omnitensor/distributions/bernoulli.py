"""Bernoulli(probs | logits) (torch.distributions.bernoulli)."""
from __future__ import annotations

import math
from typing import Any

from ..core.grad_mode import no_grad
from ..core.ops.creation import arange
from ..core.ops.random import rand
from ..core.ops.ternary import where
from ..core.tensor import Tensor
from . import constraints
from ._probs_logits import ProbsOrLogits
from .exp_family import ExponentialFamily
from .utils import _softplus

__all__ = ["Bernoulli"]


class Bernoulli(ProbsOrLogits, ExponentialFamily):
    """1 with probability ``probs`` (or ``sigmoid(logits)``), else 0."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0
    _expand_attrs = ("probs", "logits")

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        (param,) = self._set_probs_or_logits(probs, logits)
        super().__init__(param.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return where(self.probs == 0.5, math.nan, mode)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            p = self.probs.expand(shape)
            return (rand(shape, dtype=p.dtype, device=p.device) < p).to(p.dtype)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(_softplus(self.logits) - value * self.logits)

    def entropy(self) -> Tensor:
        return _softplus(self.logits) - self.probs * self.logits

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return ((self.probs / (1 - self.probs)).log(),)

    def _log_normalizer(self, x: Any) -> Tensor:
        return _softplus(x)
