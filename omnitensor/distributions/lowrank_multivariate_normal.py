"""LowRankMultivariateNormal(loc, cov_factor, cov_diag)
(torch.distributions.lowrank_multivariate_normal): Σ = W W^T + diag(D)."""
from __future__ import annotations

import math
from typing import Any

from ..core.ops.creation import eye
from ..core.ops.shape import broadcast_tensors
from ..core.shape_util import Size
from ..core.tensor import Tensor
from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis, _batch_mv, _solve_lower
from .utils import _size, _standard_normal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _with_identity(k: Tensor) -> Tensor:
    return k + eye(k.shape[-1], dtype=k.dtype, device=k.device)


def _batch_capacitance_tril(W: Tensor, D: Tensor) -> Tensor:
    """The Cholesky factor of the capacitance ``I + W^T D^-1 W``."""
    from ..linalg import cholesky
    return cholesky(_with_identity((W.mT / D.unsqueeze(-2)) @ W))


def _batch_lowrank_logdet(W: Tensor, D: Tensor, capacitance_tril: Tensor) -> Tensor:
    """``log det(W W^T + D)`` by the matrix determinant lemma."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W: Tensor, D: Tensor, x: Tensor,
                               capacitance_tril: Tensor) -> Tensor:
    """``x^T (W W^T + D)^-1 x`` by the Woodbury identity."""
    wt_dinv_x = _batch_mv(W.mT / D.unsqueeze(-2), x)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    """A multivariate normal with covariance ``cov_factor @ cov_factor.mT +
    diag(cov_diag)``: log-densities in O(n r^2) by Woodbury and the determinant lemma."""
    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, cov_factor: Tensor, cov_diag: Tensor,
                 validate_args: bool | None = None) -> None:
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.ndim < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape "
                             f"{Size(event_shape)}")
        try:
            loc_, self.cov_factor, diag_ = broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except Exception as e:  # the shapes say what went wrong
            raise ValueError(f"Incompatible batch shapes: loc {tuple(loc.shape)}, "
                             f"cov_factor {tuple(cov_factor.shape)}, cov_diag "
                             f"{tuple(cov_diag.shape)}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = diag_[..., 0]
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "LowRankMultivariateNormal":
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = _size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self) -> tuple:
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(tuple(self._batch_shape)
                                                       + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self) -> Tensor:
        from ..linalg import cholesky
        # Σ = D^1/2 (I + D^-1/2 W W^T D^-1/2) D^1/2: factor the middle, better conditioned
        d_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        dinv_w = self._unbroadcasted_cov_factor / d_sqrt
        return (d_sqrt * cholesky(_with_identity(dinv_w @ dinv_w.mT))).expand(self._full())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        w = self._unbroadcasted_cov_factor
        return (w @ w.mT + self._unbroadcasted_cov_diag.diag_embed()).expand(self._full())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        # Woodbury: D^-1 - D^-1 W C^-1 W^T D^-1 with C = L L^T the capacitance
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        a = _solve_lower(self._capacitance_tril, wt_dinv)
        return (self._unbroadcasted_cov_diag.reciprocal().diag_embed() - a.mT @ a).expand(
            self._full())

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        w_shape = shape[:-1] + tuple(self.cov_factor.shape[-1:])
        eps_w = _standard_normal(w_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_d = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_w) + \
            self._unbroadcasted_cov_diag.sqrt() * eps_d

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor,
                                       self._unbroadcasted_cov_diag, diff,
                                       self._capacitance_tril)
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                        self._unbroadcasted_cov_diag, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + m)

    def entropy(self) -> Tensor:
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                        self._unbroadcasted_cov_diag, self._capacitance_tril)
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return h.expand(tuple(self._batch_shape)) if len(self._batch_shape) else h
