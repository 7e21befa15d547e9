"""FisherSnedecor(df1, df2) (torch.distributions.fishersnedecor)."""
from __future__ import annotations

import math
from typing import Any

from .. import special
from ..core.ops.ternary import where
from ..core.tensor import Tensor
from . import constraints
from .distribution import Distribution
from .gamma import Gamma, _floor_tiny
from .utils import _size, broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """The F distribution: the ratio of two scaled chi-squared draws, reparameterised."""
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1: Any, df2: Any, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        # validate_args reaches the inner Gammas too (torch 2.13 validates them regardless)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1, validate_args=validate_args)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2, validate_args=validate_args)
        super().__init__(self.df1.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "FisherSnedecor":
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = _size(batch_shape)
        new.df1 = self.df1.expand(tuple(batch_shape))
        new.df2 = self.df2.expand(tuple(batch_shape))
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        df2 = where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self) -> Tensor:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self) -> Tensor:
        df1 = self.df1
        df2 = where(self.df2 <= 4, math.nan, self.df2)
        return 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        # X1 ~ chi2(df1) / df1 and X2 ~ chi2(df2) / df2, each a Gamma(df / 2, df / 2)
        x1 = self._gamma1.rsample(sample_shape).reshape(shape)
        x2 = _floor_tiny(self._gamma2.rsample(sample_shape).reshape(shape))
        return _floor_tiny(x1 / x2)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = special.gammaln(ct1 + ct2) - special.gammaln(ct1) - special.gammaln(ct2)
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3
