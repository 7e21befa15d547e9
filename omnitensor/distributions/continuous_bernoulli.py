"""ContinuousBernoulli(probs | logits) (torch.distributions.continuous_bernoulli)."""
from __future__ import annotations

import math
from typing import Any

from ..core.ops.random import rand
from ..core.ops.ternary import where
from ..core.tensor import Tensor
from . import constraints
from ._probs_logits import ProbsOrLogits
from .exp_family import ExponentialFamily
from .utils import _softplus, clamp_probs, lazy_property, logits_to_probs

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ProbsOrLogits, ExponentialFamily):
    """The continuous Bernoulli on [0, 1] (Loaiza-Ganem and Cunningham, 2019): density
    ``C(λ) λ^x (1 - λ)^(1 - x)``. Near ``λ = 1/2`` (inside ``lims``) the normaliser, mean
    and variance cancel catastrophically, so Taylor expansions about 1/2 replace them."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True
    _expand_attrs = ("probs", "logits")

    def __init__(self, probs: Any = None, logits: Any = None,
                 lims: tuple[float, float] = (0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        (param,) = self._set_probs_or_logits(probs, logits)
        if probs is not None:
            if validate_args is not None and \
                    not bool(self.arg_constraints["probs"].check(param).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(param)
        self._lims = lims
        super().__init__(param.shape, validate_args=validate_args)

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _outside_unstable_region(self) -> Tensor:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Tensor:
        return where(self._outside_unstable_region(), self.probs, self._lims[0])

    def _cont_bern_log_norm(self) -> Tensor:
        """``log C(λ)``: ``log(|log(1-λ) - log λ| / |1 - 2λ|)``."""
        p = self._cut_probs()
        below = where(p <= 0.5, p, 0.0)
        above = where(p >= 0.5, p, 1.0)
        log_norm = ((-p).log1p() - p.log()).abs().log() - \
            where(p <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log())
        x = (self.probs - 0.5) ** 2
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        p = self._cut_probs()
        mus = p / (2.0 * p - 1.0) + 1.0 / ((-p).log1p() - p.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x ** 2) * x
        return where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    @property
    def variance(self) -> Tensor:
        p = self._cut_probs()
        v = p * (p - 1.0) / (1.0 - 2.0 * p) ** 2 + 1.0 / ((-p).log1p() - p.log()) ** 2
        x = (self.probs - 0.5) ** 2
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), v, taylor)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return self.icdf(rand(shape, dtype=self.probs.dtype, device=self.probs.device))

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(_softplus(self.logits) - value * self.logits) + self._cont_bern_log_norm()

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut_probs()
        cdfs = (p ** value * (1.0 - p) ** (1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        unbounded = where(self._outside_unstable_region(), cdfs, value)
        return where(value <= 0.0, 0.0, where(value >= 1.0, 1.0, unbounded))

    def icdf(self, value: Any) -> Tensor:
        p = self._cut_probs()
        inverse = ((-p + value * (2.0 * p - 1.0)).log1p() - (-p).log1p()) / \
            (p.log() - (-p).log1p())
        return where(self._outside_unstable_region(), inverse, value)

    def entropy(self) -> Tensor:
        log_p0 = (-self.probs).log1p()
        log_p1 = self.probs.log()
        return self.mean * (log_p0 - log_p1) - self._cont_bern_log_norm() - log_p0

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.logits,)

    def _log_normalizer(self, x: Any) -> Tensor:
        """``log((e^η - 1) / η)``, by its Taylor series near ``η = 0``."""
        lo, hi = self._lims[0] - 0.5, self._lims[1] - 0.5
        outside = (x <= lo) | (x > hi)
        cut = where(outside, x, lo)
        log_norm = (cut.exp() - 1.0).abs().log() - cut.abs().log()
        taylor = 0.5 * x + x ** 2 / 24.0 - x ** 4 / 2880.0
        return where(outside, log_norm, taylor)
