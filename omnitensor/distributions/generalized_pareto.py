"""GeneralizedPareto(loc, scale, concentration) (torch.distributions.generalized_pareto)."""
from __future__ import annotations

import math
from typing import Any

from ..core.ops.random import rand
from ..core.ops.ternary import where
from ..core.tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalised Pareto distribution of tails: survival ``(1 + ξ z)^(-1/ξ)`` for
    ``z = (x - loc) / scale`` and concentration ``ξ`` (``exp(-z)`` at ``ξ = 0``; an
    interval support when ``ξ < 0``). ``rsample`` inverts the CDF."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True
    _expand_attrs = ("loc", "scale", "concentration")

    def __init__(self, loc: Any, scale: Any, concentration: Any,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def _xi(self) -> tuple[Tensor, Tensor]:
        """(where ξ counts as 0 (|ξ| <= 1e-8, torch's isclose), ξ with 1 there)."""
        zero = self.concentration.abs() <= 1e-8
        return zero, where(zero, 1.0, self.concentration)

    def _z(self, x: Any) -> Tensor:
        return (x - self.loc) / self.scale

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return self.icdf(rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, xi = self._xi()
        power = 1 / xi + 1  # 0 at ξ = -1: the uniform case, flat on its interval
        tail = where(power == 0, 0.0, power * (xi * z).log1p())
        return -self.scale.log() - where(zero, z, tail)

    def log_survival_function(self, value: Any) -> Tensor:
        """``log(1 - cdf(value))``."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, xi = self._xi()
        return where(zero, -z, -(xi * z).log1p() / xi)

    def log_cdf(self, value: Any) -> Tensor:
        """``log(cdf(value))``."""
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value: Any) -> Tensor:
        return self.log_cdf(value).exp()

    def icdf(self, value: Any) -> Tensor:
        zero, xi = self._xi()
        log_survival = (-value).log1p()
        return where(zero, self.loc - self.scale * log_survival,
                     self.loc + self.scale / xi * (-xi * log_survival).expm1())

    @property
    def mean(self) -> Tensor:
        xi = self.concentration
        ok = xi < 1
        return where(ok, self.loc + self.scale / (1 - where(ok, xi, 0.5)), math.nan)

    @property
    def variance(self) -> Tensor:
        xi = self.concentration
        ok = xi < 0.5
        xs = where(ok, xi, 0.25)
        return where(ok, self.scale ** 2 / ((1 - xs) ** 2 * (1 - 2 * xs)), math.nan)

    def entropy(self) -> Tensor:
        from ..core.ops.shape import broadcast_to
        return broadcast_to(self.scale.log() + self.concentration + 1,
                            tuple(self._batch_shape))

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        neg = self.concentration < 0
        upper = where(neg, self.loc - self.scale / where(neg, self.concentration, -1.0),
                      math.inf)
        return constraints.interval(self.loc, upper)
