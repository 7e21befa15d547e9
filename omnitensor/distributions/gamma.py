"""Gamma(concentration, rate) (torch.distributions.gamma)."""
from __future__ import annotations

from typing import Any

from .. import special
from ..core.dtypes import finfo
from ..core.tensor import Tensor
from . import constraints
from ._samplers import standard_gamma
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]


def _floor_tiny(value: Tensor) -> Tensor:
    """``value`` raised to the dtype's smallest normal where it underflowed, keeping its
    gradient (so ``log_prob`` of a draw stays finite)."""
    return value + (value.clamp(min=finfo(value.dtype).tiny) - value).detach()


class Gamma(ExponentialFamily):
    """Gamma(concentration, rate); ``rsample`` is reparameterised by implicit
    differentiation of the CDF (``_samplers.standard_gamma``)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0
    _expand_attrs = ("concentration", "rate")

    def __init__(self, concentration: Any, rate: Any,
                 validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return _floor_tiny(value)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration, self.rate
        return special.xlogy(a, b) + special.xlogy(a - 1, value) - b * value - \
            special.gammaln(a)

    def entropy(self) -> Tensor:
        a = self.concentration
        return a - self.rate.log() + special.gammaln(a) + (1.0 - a) * special.digamma(a)

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x: Any, y: Any) -> Tensor:
        return special.gammaln(x + 1) + (x + 1) * (-y.reciprocal()).log()

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return special.gammainc(self.concentration, self.rate * value)
