"""Dirichlet(concentration) (torch.distributions.dirichlet)."""
from __future__ import annotations

from typing import Any

from .. import special
from ..core.ops.ternary import where

from ..core.tensor import Tensor
from . import constraints
from ._samplers import sample_dirichlet
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution on the simplex of the last dim of ``concentration``;
    ``rsample`` normalises reparameterised Gamma draws."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True
    _expand_attrs = ("concentration",)

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return sample_dirichlet(self.concentration.expand(shape))

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return special.xlogy(c - 1.0, value).sum(-1) + special.gammaln(c.sum(-1)) - \
            special.gammaln(c).sum(-1)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        cm1 = (self.concentration - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, keepdim=True)
        # every concentration below 1: the density peaks at the vertex of the largest
        from ..nn.functional import one_hot
        vertex = one_hot(cm1.argmax(-1), cm1.shape[-1]).to(mode.dtype)
        return where((self.concentration < 1).all(-1, keepdim=True), vertex, mode)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        c0 = c.sum(-1, keepdim=True)
        return c * (c0 - c) / (c0.pow(2) * (c0 + 1))

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return special.gammaln(c).sum(-1) - special.gammaln(a0) - \
            (k - a0) * special.digamma(a0) - ((c - 1.0) * special.digamma(c)).sum(-1)

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.concentration,)

    def _log_normalizer(self, x: Any) -> Tensor:
        return special.gammaln(x).sum(-1) - special.gammaln(x.sum(-1))



