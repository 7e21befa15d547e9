"""MultivariateNormal and Independent."""
from __future__ import annotations

import math
from typing import Any

from ..core.ops.random import randn
from ..core.tensor import Tensor
from . import constraints
from .distribution import Distribution

__all__ = ["MultivariateNormal", "Independent"]


def _batch_mahalanobis(L: Tensor, x: Tensor) -> Tensor:
    """``|| L^{-1} x ||²`` over the last dim, for lower-triangular ``L`` (batched)."""
    from ..linalg import solve_triangular
    from ..core.ops.shape import broadcast_to
    from ..core.shape_util import broadcast_shapes
    batch = broadcast_shapes(tuple(L.shape[:-2]), tuple(x.shape[:-1]))
    k = x.shape[-1]
    Lb = broadcast_to(L, batch + (k, k))
    xb = broadcast_to(x, batch + (k,)).unsqueeze(-1)
    return (solve_triangular(Lb, xb, upper=False).squeeze(-1) ** 2).sum(-1)


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
        from ..linalg import cholesky, inv
        from ..core.shape_util import broadcast_shapes
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError("MultivariateNormal: exactly one of covariance_matrix, "
                             "precision_matrix or scale_tril must be specified")
        if not isinstance(loc, Tensor) or loc.ndim < 1:
            raise ValueError("MultivariateNormal: loc must be at least one-dimensional")
        m = given[0]
        if m.ndim < 2 or m.shape[-1] != m.shape[-2] or m.shape[-1] != loc.shape[-1]:
            raise ValueError(f"MultivariateNormal: the matrix must be (..., {loc.shape[-1]}, "
                             f"{loc.shape[-1]}), got {tuple(m.shape)}")
        if scale_tril is not None:
            self.scale_tril = scale_tril
            L = scale_tril
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix
            L = None
        else:
            self.precision_matrix = precision_matrix
            L = None
        batch = broadcast_shapes(tuple(loc.shape[:-1]), tuple(m.shape[:-2]))
        k = loc.shape[-1]
        self.loc = loc.expand(batch + (k,))
        super().__init__(batch, (k,), validate_args=validate_args)  # validates the matrix
        if L is None:
            cov = covariance_matrix if covariance_matrix is not None else inv(m)  # m: the one given
            L = cholesky(cov)
        self._unbroadcasted_scale_tril = L

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        v = (self._unbroadcasted_scale_tril ** 2).sum(-1)
        return v.expand(self._batch_shape + self._event_shape)

    def __getattr__(self, name: str) -> Any:  # the matrix forms not given, derived on use
        d = self.__dict__
        L = d.get("_unbroadcasted_scale_tril")
        if L is None:
            raise AttributeError(name)
        k = self._event_shape
        if name == "scale_tril":
            return L.expand(self._batch_shape + k + k)
        if name == "covariance_matrix":
            return (L @ L.mT).expand(self._batch_shape + k + k)
        if name == "precision_matrix":
            from ..linalg import inv
            return inv(L @ L.mT).expand(self._batch_shape + k + k)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return L.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        k = self._event_shape[0]
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (k * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self) -> Tensor:
        k = self._event_shape[0]
        h = 0.5 * k * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(self._batch_shape) if self._batch_shape else h


class Independent(Distribution):
    """Reinterprets the rightmost ``reinterpreted_batch_ndims`` batch dims of
    ``base_distribution`` as event dims (``log_prob`` and ``entropy`` sum over them)."""
    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int,
                 validate_args: bool | None = None) -> None:
        n = reinterpreted_batch_ndims
        bs = base_distribution.batch_shape
        if not isinstance(n, int) or n < 0 or n > len(bs):
            raise ValueError(f"Independent: reinterpreted_batch_ndims must be in [0, "
                             f"{len(bs)}] for base batch_shape {bs}, got {n}")
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n
        split = len(bs) - n
        super().__init__(bs[:split], bs[split:] + base_distribution.event_shape,
                         validate_args=False if validate_args is None else validate_args)

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    @property
    def support(self) -> constraints.Constraint | None:  # type: ignore[override]
        base = self.base_dist.support
        return constraints.independent(base, self.reinterpreted_batch_ndims) \
            if base is not None else None

    @property
    def mean(self) -> Tensor:
        return self.base_dist.mean

    @property
    def mode(self) -> Tensor:
        return self.base_dist.mode

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def sample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def _sum_rightmost(self, x: Tensor) -> Tensor:
        for _ in range(self.reinterpreted_batch_ndims):
            x = x.sum(-1)
        return x

    def log_prob(self, value: Tensor) -> Tensor:
        return self._sum_rightmost(self.base_dist.log_prob(value))

    def entropy(self) -> Tensor:
        return self._sum_rightmost(self.base_dist.entropy())

    def __repr__(self) -> str:
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"
