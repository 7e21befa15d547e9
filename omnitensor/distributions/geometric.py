"""Geometric(probs | logits) (torch.distributions.geometric)."""
from __future__ import annotations

from typing import Any

from ..core.dtypes import finfo
from ..core.grad_mode import no_grad
from ..core.ops.creation import zeros_like
from ..core.ops.random import rand
from ..core.ops.ternary import where
from ..core.tensor import Tensor
from . import constraints
from ._probs_logits import ProbsOrLogits
from .distribution import Distribution
from .utils import _softplus, broadcast_all

__all__ = ["Geometric"]


class Geometric(ProbsOrLogits, Distribution):
    """The number of failures before the first success in trials of probability
    ``probs`` (support 0, 1, 2, ...)."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer
    _expand_attrs = ("probs", "logits")

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        (param,) = self._set_probs_or_logits(probs, logits)
        super().__init__(param.shape, validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            raise ValueError(f"Expected parameter probs ({type(self.probs).__name__} of "
                             f"shape {tuple(self.probs.shape)}) of distribution {self!r} to "
                             f"be positive but found invalid values:\n"
                             f"{self.probs[~(self.probs > 0)]}")

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            p = self.probs
            u = rand(shape, dtype=p.dtype, device=p.device).clamp(min=finfo(p.dtype).tiny)
            return (u.log() / (-p).log1p()).floor()

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # p = 1 at k = 0 is certain: 0 * log(0) counts as 0
        probs = where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        return (_softplus(self.logits) - self.probs * self.logits) / self.probs
