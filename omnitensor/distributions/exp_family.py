"""ExponentialFamily (torch.distributions.exp_family): densities
``p(x; θ) = exp(<t(x), θ> - F(θ) + k(x))``, whose entropy (and KL between two members)
follows from the log normalizer ``F`` by autograd (a Bregman divergence)."""
from __future__ import annotations

from typing import Any

from ..core.tensor import Tensor
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base of exponential families: a family states ``_natural_params`` (θ),
    ``_log_normalizer(*θ)`` (F) and ``_mean_carrier_measure`` (E[k(x)])."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError(f"{type(self).__name__} does not state its natural "
                                  f"parameters")

    def _log_normalizer(self, *natural_params: Any) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not state its log "
                                  f"normalizer")

    @property
    def _mean_carrier_measure(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not state its mean carrier "
                                  f"measure")

    def entropy(self) -> Tensor:
        """``F(θ) - <θ, ∇F(θ)> - E[k(x)]``, with ``∇F`` by autograd."""
        from ..autograd import grad
        from ..core.grad_mode import enable_grad
        result: Any = -self._mean_carrier_measure
        with enable_grad():
            params = [p.detach().requires_grad_() for p in self._natural_params]
            lg_normal = self._log_normalizer(*params)
            grads = grad(lg_normal.sum(), params, create_graph=True)
        result = result + lg_normal
        for p, g in zip(params, grads):
            result = result - (p * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
