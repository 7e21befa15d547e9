"""Weibull(scale, concentration) (torch.distributions.weibull)."""
from __future__ import annotations

from typing import Any

from .. import special
from ..core.ops.creation import ones_like
from ..core.tensor import Tensor
from . import constraints
from .distribution import Distribution
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import _size, broadcast_all, euler_constant

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """The Weibull distribution: ``scale * E^(1 / concentration)`` for a unit
    Exponential ``E``."""
    arg_constraints = {"scale": constraints.positive,
                       "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale: Any, concentration: Any,
                 validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Weibull":
        new = self._get_checked_instance(Weibull, _instance)
        batch_shape = _size(batch_shape)
        shape = tuple(batch_shape)
        new.scale = self.scale.expand(shape)
        new.concentration = self.concentration.expand(shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        new.base_dist = self.base_dist.expand(batch_shape)
        new.transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                          AffineTransform(loc=0, scale=new.scale)]
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.scale * special.gammaln(1 + self.concentration_reciprocal).exp()

    @property
    def mode(self) -> Tensor:
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self) -> Tensor:
        kr = self.concentration_reciprocal
        return self.scale.pow(2) * (special.gammaln(1 + 2 * kr).exp()
                                    - (2 * special.gammaln(1 + kr)).exp())

    def entropy(self) -> Tensor:
        kr = self.concentration_reciprocal
        return euler_constant * (1 - kr) + (self.scale * kr).log() + 1
