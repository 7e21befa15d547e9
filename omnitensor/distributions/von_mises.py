"""VonMises(loc, concentration) (torch.distributions.von_mises)."""
from __future__ import annotations

import math
from typing import Any

from .. import special
from ..core.dtypes import float64
from ..core.grad_mode import no_grad
from ..core.ops.creation import zeros
from ..core.ops.random import rand
from ..core.ops.ternary import where
from ..core.tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["VonMises"]


def _log_i0(k: Tensor) -> Tensor:
    """``log I0(k)`` without overflow: ``log(i0e(k)) + k``."""
    return special.i0e(k).log() + k


class VonMises(Distribution):
    """The von Mises distribution of an angle (``loc`` and values are read modulo 2π;
    samples lie in [-π, π)). Sampled by Best and Fisher's (1979) rejection method in
    float64 where the device has it."""
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False
    _expand_attrs = ("loc", "concentration")

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        k = self.concentration
        return k * (value - self.loc).cos() - math.log(2 * math.pi) - _log_i0(k)

    def _proposal_r(self, kappa: Tensor) -> Tensor:
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        r = (1 + rho ** 2) / (2 * rho)
        return where(kappa < 1e-5, 1 / kappa + kappa, r)  # r's expansion at small kappa

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        dev = self.loc.device
        wide = float64 if dev.supports_dtype(float64) else self.loc.dtype
        with no_grad():
            loc = self.loc.to(wide)
            kappa = self.concentration.to(wide).expand(shape)
            r = self._proposal_r(kappa)
            x = zeros(shape, dtype=wide, device=dev)
            done = x != x
            while not bool(done.all()):
                u1, u2, u3 = rand((3,) + shape, dtype=wide, device=dev).unbind(0)
                z = (math.pi * u1).cos()
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                x = where(accept & ~done, (u3 - 0.5).sign() * f.clamp(-1, 1).acos(), x)
                done = done | accept
            return ((x + math.pi + loc) % (2 * math.pi) - math.pi).to(self.loc.dtype)

    @property
    def mean(self) -> Tensor:
        """The circular mean (``loc``)."""
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        """The circular variance ``1 - I1(k) / I0(k)``."""
        k = self.concentration
        return 1 - special.i1e(k) / special.i0e(k)
