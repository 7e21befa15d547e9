"""Wishart(df, covariance_matrix | precision_matrix | scale_tril)
(torch.distributions.wishart)."""
from __future__ import annotations

import math
import warnings
from numbers import Number
from typing import Any

from .. import special
from ..core.dtypes import finfo
from ..core.ops.creation import arange, tensor, tril_indices
from ..core.ops.ternary import where
from ..core.shape_util import broadcast_shapes
from ..core.tensor import Tensor
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .multivariate_normal import _cholesky_inverse, _precision_to_scale_tril, _solve_lower
from .utils import _size, _standard_normal, lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    """The derivative of the log multivariate gamma: ``sum_i digamma(x - i / 2)``."""
    return sum((special.digamma(x - i / 2) for i in range(p)), x * 0)


def _logabsdet(m: Tensor) -> Tensor:
    from ..linalg import slogdet
    return slogdet(m)[1]


class Wishart(ExponentialFamily):
    """The Wishart distribution over positive definite ``p x p`` matrices with ``df``
    degrees of freedom (``df > p - 1``) and scale Σ (given as one of the three forms).
    ``rsample`` is Bartlett's decomposition, reparameterised through its chi-squared
    draws; a draw that is numerically singular is redrawn (up to ``max_try_correction``
    times, with a warning)."""
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, df: Any, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        name, param = given[0]
        if param.ndim < 2:
            raise ValueError(f"{name} must be at least two-dimensional, with optional "
                             f"leading batch dimensions")
        if isinstance(df, Number):
            batch = tuple(param.shape[:-2])
            self.df = tensor(float(df), dtype=param.dtype, device=param.device)  # type: ignore[arg-type]
        else:
            batch = broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape))
            self.df = df.expand(batch)
        p = param.shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{p - 1}.")
        setattr(self, name, param.expand(batch + (-1, -1)))
        if bool((self.df < p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to "
                          "occur for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch, tuple(param.shape[-2:]), validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = param
        elif name == "covariance_matrix":
            from ..linalg import cholesky
            self._unbroadcasted_scale_tril = cholesky(param)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(param)
        self._dist_chi2 = self._bartlett_chi2()

    def _bartlett_chi2(self) -> Chi2:
        """The squared diagonal of Bartlett's factor: chi2 with df, df - 1, ..., df - p + 1."""
        p = self._event_shape[-1]
        low = self._unbroadcasted_scale_tril
        steps = arange(p, dtype=low.dtype, device=low.device)
        return Chi2(df=self.df.unsqueeze(-1) - steps.expand(tuple(self._batch_shape) + (-1,)))

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self._event_shape[-1] - 1)}

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Wishart":
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = _size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(tuple(batch_shape))
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._bartlett_chi2()
        new._validate_args = self._validate_args
        return new

    def _full(self) -> tuple:
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._full())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        low = self._unbroadcasted_scale_tril
        return (low @ low.mT).expand(self._full())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        return _cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._full())

    def _df_matrix(self) -> Tensor:
        return self.df.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self) -> Tensor:
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = where(factor <= 0, math.nan, factor)
        return factor.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        v = self.covariance_matrix
        d = v.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (v.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape: Any) -> Tensor:
        p = self._event_shape[-1]
        diag = self._dist_chi2.rsample(sample_shape).sqrt()
        diag = diag.clamp(min=finfo(diag.dtype).eps)
        noise = diag.diag_embed()
        rows, cols = tril_indices(p, p, offset=-1, device=diag.device)
        noise[..., rows, cols] = _standard_normal(
            tuple(_size(sample_shape)) + tuple(self._batch_shape) + (p * (p - 1) // 2,),
            dtype=noise.dtype, device=noise.device)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.mT

    def rsample(self, sample_shape: Any = (), max_try_correction: int | None = None
                ) -> Tensor:
        """Bartlett draws; numerically singular ones are redrawn (torch 2.13 redraws the
        valid ones instead, warning on every call: not copied)."""
        tries = 10 if max_try_correction is None else max_try_correction
        sample_shape = _size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = ~self.support.check(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(tries):
                fresh = self._bartlett_sampling(sample_shape)
                mask = singular.reshape(tuple(singular.shape) + (1, 1))
                sample = where(mask, fresh, sample)
                singular = ~self.support.check(sample)
                if not bool(singular.any()):
                    break
        return sample

    def _half_log_det_term(self) -> Tensor:
        p = self._event_shape[-1]
        return p * _LOG_2 / 2 + \
            self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        low = self._unbroadcasted_scale_tril
        # tr(Σ^-1 X) = ||L^-1 X^1/2||^2 = tr(L^-T L^-1 X)
        inv_low_value = _solve_lower(low, value)
        trace = _solve_lower(low, inv_low_value.mT).diagonal(dim1=-2, dim2=-1).sum(-1)
        return -nu * self._half_log_det_term() - special.multigammaln(nu / 2, p) + \
            (nu - p - 1) / 2 * _logabsdet(value) - trace / 2

    def entropy(self) -> Tensor:
        nu = self.df
        p = self._event_shape[-1]
        return (p + 1) * self._half_log_det_term() + special.multigammaln(nu / 2, p) - \
            (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x: Any, y: Any) -> Tensor:
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-_logabsdet(-2 * x) + _LOG_2 * p) + \
            special.multigammaln(y + (p + 1) / 2, p)
