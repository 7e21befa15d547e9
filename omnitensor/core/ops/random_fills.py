"""torch's remaining in-place random fills: ``cauchy_``, ``geometric_``, ``log_normal_``.

Each transforms uniform or normal draws of :mod:`.random` (the same generators, so seeding
and compile's replay treat them as every other draw) by the inverse of its distribution
function, with torch's argument checks.
"""
from __future__ import annotations

import math
from typing import Any

from ..tensor import Tensor
from .random import Generator, _fill_, rand, randn

__all__ = ["cauchy_", "geometric_", "log_normal_"]


def _floating(op: str, x: Tensor) -> None:
    if x.dtype.kind != "f":
        raise TypeError(f"{op} expects a floating point tensor, got {x.dtype.name}")


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *,
            generator: Generator | None = None) -> Tensor:
    """Fill with Cauchy draws: ``median + sigma * tan(pi * (u - 1/2))``."""
    _floating("cauchy_", self)
    if not sigma > 0:
        raise ValueError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    u = rand(self.shape, dtype=self.dtype, device=self.device, generator=generator)
    return _fill_(self, ((u - 0.5) * math.pi).tan() * sigma + median)


def geometric_(self: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    """Fill with the number of Bernoulli(``p``) trials up to the first success (1, 2...):
    ``ceil(log(1 - u) / log(1 - p))``."""
    if not 0 < p < 1:
        raise ValueError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    u = rand(self.shape, device=self.device, generator=generator)
    k = ((-u).log1p() / math.log1p(-p)).ceil().clamp(min=1)
    return _fill_(self, k)


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *,
                generator: Generator | None = None) -> Tensor:
    """Fill with ``exp(N(mean, std**2))`` draws."""
    _floating("log_normal_", self)
    if not std > 0:
        raise ValueError(f"log_normal_ expects std > 0.0, but found std={std}")
    z = randn(self.shape, dtype=self.dtype, device=self.device, generator=generator)
    return _fill_(self, (z * std + mean).exp())


def bind(T: Any) -> None:
    """The Tensor methods of this module."""
    T.cauchy_, T.geometric_, T.log_normal_ = cauchy_, geometric_, log_normal_
