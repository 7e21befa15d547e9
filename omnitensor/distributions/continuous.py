"""Normal, Uniform, Gamma and Beta."""
from __future__ import annotations

import math
from typing import Any

from ..core.ops import elementwise as _ew
from ..core.ops.random import rand, randn
from ..core.ops.ternary import where
from ..core.tensor import Tensor
from .. import special
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Normal", "Uniform", "Gamma", "Beta"]

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _draw(fn: Any, shape: tuple, like: Tensor) -> Tensor:
    return fn(shape, dtype=like.dtype, device=like.device)


class Normal(Distribution):
    """Normal(loc, scale); ``rsample`` is ``loc + scale * eps``."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale ** 2

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        eps = _draw(randn, self._extended_shape(sample_shape), self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -((value - self.loc) ** 2) / (2 * self.variance) - self.scale.log() - \
            _HALF_LOG_2PI

    def cdf(self, value: Tensor) -> Tensor:
        return 0.5 * (1 + _ew.erf((value - self.loc) / (self.scale * math.sqrt(2))))

    def icdf(self, value: Tensor) -> Tensor:
        return self.loc + self.scale * special.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + _HALF_LOG_2PI + self.scale.log()


class Uniform(Distribution):
    """Uniform on ``[low, high)``; ``rsample`` is ``low + u * (high - low)``."""
    arg_constraints = {"low": constraints.dependent, "high": constraints.dependent}
    has_rsample = True

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        super().__init__(tuple(self.low.shape), validate_args=validate_args)
        if self._validate_args and not bool((self.low < self.high).all()):
            raise ValueError(f"Uniform: expected low < high everywhere, got low={self.low}, "
                             f"high={self.high}")

    @property
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.half_open_interval(self.low, self.high)

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        u = _draw(rand, self._extended_shape(sample_shape), self.low)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        inside = ((self.low <= value) & (self.high > value)).to(self.low.dtype)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value: Tensor) -> Tensor:
        return ((value - self.low) / (self.high - self.low)).clamp(0, 1)

    def icdf(self, value: Tensor) -> Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()


def standard_gamma(concentration: Tensor, shape: tuple) -> Tensor:
    """Gamma(concentration, 1) draws of ``shape`` by Marsaglia and Tsang's method, vectorized:
    every round proposes for all entries and keeps the first accepted proposal of each
    (acceptance is above 95% per round); concentrations below 1 draw at ``a + 1`` and scale
    by ``u ** (1 / a)``."""
    from ..core.ops.creation import zeros
    from ..core.ops.shape import broadcast_to
    a = broadcast_to(concentration.detach(), shape)
    boost = a < 1
    a1 = where(boost, a + 1, a)
    d = a1 - 1.0 / 3
    c = 1.0 / (9 * d).sqrt()
    out = zeros(shape, dtype=a.dtype, device=a.device)
    done = out != out  # all False
    for _ in range(64):
        x = _draw(randn, shape, a)
        v = (1 + c * x) ** 3
        u = _draw(rand, shape, a)
        vs = where(v > 0, v, 1.0)
        ok = (v > 0) & (u.log() < 0.5 * x * x + d - d * vs + d * vs.log())
        out = where(ok & ~done, d * vs, out)
        done = done | ok
        if bool(done.all()):
            break
    else:
        raise RuntimeError("Gamma sampling did not converge (concentration out of range?)")
    u = _draw(rand, shape, a)
    return where(boost, out * u.clamp(min=1e-38) ** (1.0 / a), out)


class Gamma(Distribution):
    """Gamma(concentration, rate). ``has_rsample`` is False: its reparameterised gradient
    needs implicit differentiation of the gamma CDF, which omnitensor does not implement;
    ``rsample`` says so."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = False

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(tuple(self.rate.shape), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate ** 2

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return (standard_gamma(self.concentration, shape) / self.rate.detach()).clamp(
            min=1e-38)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        raise NotImplementedError("Gamma.rsample is not supported: reparameterised Gamma "
                                  "samples need implicit gradients, which omnitensor does not "
                                  "implement (has_rsample is False); use sample() with a "
                                  "score-function estimator, or a Normal/LogNormal surrogate")

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration, self.rate
        return special.xlogy(a, b) + special.xlogy(a - 1, value) - b * value - \
            special.gammaln(a)

    def entropy(self) -> Tensor:
        a = self.concentration
        return a - self.rate.log() + special.gammaln(a) + (1 - a) * special.digamma(a)

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError("Gamma.cdf needs the regularised incomplete gamma "
                                  "function, which omnitensor does not have yet")


class Beta(Distribution):
    """Beta(concentration1, concentration0), sampled as ``X / (X + Y)`` of two Gammas.
    ``has_rsample`` is False for the same reason as :class:`Gamma`'s."""
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = False

    def __init__(self, concentration1: Any, concentration0: Any,
                 validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        super().__init__(tuple(self.concentration1.shape), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return (self.concentration1 - 1) / (self.concentration1 + self.concentration0 - 2)

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total ** 2 * (total + 1))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x = standard_gamma(self.concentration1, shape)
        y = standard_gamma(self.concentration0, shape)
        return (x / (x + y)).clamp(1e-38, 1 - 1e-7 if x.dtype.itemsize == 4 else 1 - 1e-16)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        raise NotImplementedError("Beta.rsample is not supported: reparameterised Beta "
                                  "samples need implicit gradients of Gamma draws, which "
                                  "omnitensor does not implement (has_rsample is False)")

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return special.xlogy(a - 1, value) + special.xlog1py(b - 1, -value) - _log_beta(a, b)

    def entropy(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        total = a + b
        return _log_beta(a, b) - (a - 1) * special.digamma(a) - (b - 1) * special.digamma(b) \
            + (total - 2) * special.digamma(total)


def _log_beta(a: Tensor, b: Tensor) -> Tensor:
    return special.gammaln(a) + special.gammaln(b) - special.gammaln(a + b)
