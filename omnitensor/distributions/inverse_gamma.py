"""InverseGamma(concentration, rate) (torch.distributions.inverse_gamma): 1 / Gamma."""
from __future__ import annotations

import math
from typing import Any

from .. import special
from ..core.ops.creation import ones_like
from ..core.ops.ternary import where
from ..core.tensor import Tensor
from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """``1 / X`` for ``X ~ Gamma(concentration, rate)``."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration: Any, rate: Any,
                 validate_args: bool | None = None) -> None:
        base = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -ones_like(base.rate)
        super().__init__(base, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "InverseGamma":
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def concentration(self) -> Tensor:
        return self.base_dist.concentration

    @property
    def rate(self) -> Tensor:
        return self.base_dist.rate

    @property
    def mean(self) -> Tensor:
        a = self.concentration
        return where(a > 1, self.rate / where(a > 1, a - 1, 1.0), math.inf)

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        a = self.concentration
        ok = a > 2
        am = where(ok, a, 3.0)
        return where(ok, self.rate.pow(2) / ((am - 1).pow(2) * (am - 2)), math.inf)

    def entropy(self) -> Tensor:
        a = self.concentration
        return a + self.rate.log() + special.gammaln(a) - (1 + a) * special.digamma(a)
