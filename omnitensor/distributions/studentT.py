"""StudentT(df, loc, scale) (torch.distributions.studentT)."""
from __future__ import annotations

import math
from typing import Any

from .. import special
from ..core.ops.ternary import where
from ..core.tensor import Tensor
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _size, _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t with ``df`` degrees of freedom, shifted by ``loc`` and scaled by
    ``scale``; ``rsample`` is ``loc + scale * z / sqrt(chi2 / df)`` with the chi-squared
    draw reparameterised."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0,
                 validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        # validate_args reaches the inner Chi2 too (torch 2.13 validates it regardless)
        self._chi2 = Chi2(self.df, validate_args=validate_args)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "StudentT":
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = _size(batch_shape)
        new.df = self.df.expand(tuple(batch_shape))
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        new._chi2 = self._chi2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        df = self.df
        finite = self.scale.pow(2) * df / where(df > 2, df - 2, 1.0)
        return where(df > 2, finite, where(df > 1, math.inf, math.nan))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * (z / self.df).rsqrt()

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        df = self.df
        y = (value - self.loc) / self.scale
        z = self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi) + \
            special.gammaln(0.5 * df) - special.gammaln(0.5 * (df + 1.0))
        return -0.5 * (df + 1.0) * (y ** 2 / df).log1p() - z

    def entropy(self) -> Tensor:
        df = self.df
        lbeta = special.gammaln(0.5 * df) + math.lgamma(0.5) - \
            special.gammaln(0.5 * (df + 1))
        return self.scale.log() + 0.5 * (df + 1) * (
            special.digamma(0.5 * (df + 1)) - special.digamma(0.5 * df)) + \
            0.5 * df.log() + lbeta
