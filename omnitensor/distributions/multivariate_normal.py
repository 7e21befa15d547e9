"""MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril)
(torch.distributions.multivariate_normal) and the batched linear algebra it shares with
LowRankMultivariateNormal and Wishart."""
from __future__ import annotations

import math
from typing import Any

from ..core.ops.creation import eye
from ..core.ops.shape import broadcast_to
from ..core.shape_util import broadcast_shapes
from ..core.tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import _size, _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat: Tensor, bvec: Tensor) -> Tensor:
    """Batched matrix-vector product ``bmat @ bvec`` with broadcasting batch dims."""
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _solve_lower(low: Tensor, rhs: Tensor) -> Tensor:
    """``low^-1 rhs`` for lower-triangular ``low``, batch dims broadcast."""
    from ..linalg import solve_triangular
    batch = broadcast_shapes(tuple(low.shape[:-2]), tuple(rhs.shape[:-2]))
    n = low.shape[-1]
    return solve_triangular(broadcast_to(low, batch + (n, n)),
                            broadcast_to(rhs, batch + tuple(rhs.shape[-2:])), upper=False)


def _batch_mahalanobis(bL: Tensor, bx: Tensor) -> Tensor:  # torch's names
    """``x^T (L L^T)^-1 x`` over the last dim, for lower-triangular ``L``; batch dims of
    ``L`` and ``x`` broadcast."""
    return _solve_lower(bL, bx.unsqueeze(-1)).squeeze(-1).pow(2).sum(-1)


def _cholesky_inverse(low: Tensor) -> Tensor:
    """``(L L^T)^-1`` from the lower Cholesky factor ``L``."""
    n = low.shape[-1]
    inv_low = _solve_lower(low, eye(n, dtype=low.dtype, device=low.device))
    return inv_low.mT @ inv_low


def _precision_to_scale_tril(P: Tensor) -> Tensor:  # torch's names
    """The lower Cholesky factor of ``P^-1`` without forming the inverse: with ``J`` the
    exchange matrix, ``J P J = Lf Lf^T`` gives ``P = U U^T`` for the upper-triangular
    ``U = J Lf J``, so ``L = U^-T``."""
    from ..linalg import cholesky
    lf = cholesky(P.flip((-2, -1)))
    l_inv = lf.flip((-2, -1)).mT
    return _solve_lower(l_inv, eye(P.shape[-1], dtype=P.dtype, device=P.device))


class MultivariateNormal(Distribution):
    """N(loc, Σ) with Σ given as ``covariance_matrix``, ``precision_matrix`` or its lower
    Cholesky factor ``scale_tril`` (exactly one); ``rsample`` is ``loc + L eps``."""
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if not isinstance(loc, Tensor) or loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        name, m = given[0]
        if m.ndim < 2:
            raise ValueError(f"{name} must be at least two-dimensional, with optional "
                             f"leading batch dimensions")
        if m.shape[-1] != m.shape[-2] or m.shape[-1] != loc.shape[-1]:
            raise ValueError(f"{name} must be (..., {loc.shape[-1]}, {loc.shape[-1]}) for a "
                             f"loc of size {loc.shape[-1]}, got {tuple(m.shape)}")
        batch = broadcast_shapes(tuple(m.shape[:-2]), tuple(loc.shape[:-1]))
        setattr(self, name, m.expand(batch + (-1, -1)))
        self.loc = loc.expand(batch + (-1,))
        super().__init__(batch, loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = m
        elif name == "covariance_matrix":
            from ..linalg import cholesky
            self._unbroadcasted_scale_tril = cholesky(m)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(m)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "MultivariateNormal":
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = _size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self) -> tuple:
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

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

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - \
            self._half_log_det()

    def entropy(self) -> Tensor:
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(tuple(self._batch_shape)) if len(self._batch_shape) else h
