"""LKJCholesky(dim, concentration) (torch.distributions.lkj_cholesky)."""
from __future__ import annotations

import math
from typing import Any

from .. import special
from ..core.dtypes import finfo
from ..core.grad_mode import no_grad
from ..core.ops.creation import arange, zeros
from ..core.ops.join import cat
from ..core.ops.random import randn
from ..core.tensor import Tensor
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import _size, broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution over Cholesky factors of ``dim x dim`` correlation matrices,
    density proportional to ``det(L L^T)^(concentration - 1)``. Sampled by the onion
    method (Lewandowski, Kurowicka and Joe, 2009): row ``i >= 1`` takes squared length
    ``y_i ~ Beta(i/2, concentration + (dim - 1 - i)/2)`` off the diagonal, in a
    uniformly random direction, and the diagonal takes the rest of the unit norm."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Any = 1.0,
                 validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal = self.concentration + 0.5 * (dim - 2)
        c = self.concentration
        offset = arange(dim - 1, dtype=c.dtype, device=c.device)
        offset = cat([zeros((1,), dtype=c.dtype, device=c.device), offset])
        # row i >= 1 of the factor: Beta(i / 2, ...) (offset = i - 1). torch 2.13 takes
        # offset + 1/2 = i - 1/2, right for row 1 only: its correlations beyond the first
        # column are too spread for dim >= 3 (at concentration 1 not exchangeable)
        self._beta = Beta(0.5 * offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(c.shape, (dim, dim), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "LKJCholesky":
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = _size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = tuple(self._extended_shape(sample_shape))
            u = randn(shape, dtype=y.dtype, device=y.device).tril(-1)
            norm = (u ** 2).sum(-1, keepdim=True).sqrt()
            # row 0 has no off-diagonal part (its norm is 0): the direction is 0 there
            direction = u / norm.clamp(min=finfo(u.dtype).tiny)
            w = y.sqrt() * direction
            diag = (1 - (w ** 2).sum(-1)).clamp(min=finfo(w.dtype).tiny).sqrt()
            return w + diag.diag_embed()

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        d = self.dim
        c = self.concentration
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, d + 1, dtype=c.dtype, device=c.device)
        order = 2 * (c - 1).unsqueeze(-1) + d - order
        unnormalized = (order * diag.log()).sum(-1)
        dm1 = d - 1
        alpha = c + 0.5 * dm1
        normalize = 0.5 * dm1 * math.log(math.pi) + \
            special.multigammaln(alpha - 0.5, dm1) - special.gammaln(alpha) * dm1
        return unnormalized - normalize
