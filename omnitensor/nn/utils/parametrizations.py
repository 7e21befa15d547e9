"""``nn.utils.parametrizations``: ``weight_norm`` and ``spectral_norm`` as
parametrizations (torch's modules, buffers and state-dict keys:
``parametrizations.weight.original0/original1`` for weight norm's ``g``/``v``;
``parametrizations.weight.original`` and ``parametrizations.weight.0._u/_v`` for spectral
norm). The formulas live here once; the legacy hook-based ``nn.utils.weight_norm`` and
``spectral_norm`` reuse them.
"""
from __future__ import annotations

from typing import Any

from ...core.graph import no_grad_ctx
from ...core.ops.creation import empty
from ...core.tensor import Tensor
from ..functional import normalize
from ..module import Module
from . import parametrize

__all__ = ["weight_norm", "spectral_norm", "norm_except_dim", "weight_norm_value"]


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:  # noqa: A002
    """The ``pow``-norm of ``v`` over every axis but ``dim``, shaped to broadcast against
    ``v`` (a 0-d norm of everything when ``dim == -1``), as torch's ``norm_except_dim``."""
    if dim == -1:
        return v.norm(pow)
    d = dim % v.ndim
    axes = tuple(i for i in range(v.ndim) if i != d)
    return v.norm(pow, axes, keepdim=True) if axes else v.abs()


def weight_norm_value(g: Tensor, v: Tensor, dim: int) -> Tensor:
    """``w = g * v / ||v||`` with the norm over every axis but ``dim``."""
    return v * (g / norm_except_dim(v, 2, dim))


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_norm_value(weight_g, weight_v, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as magnitude ``original0`` (g) times direction
    ``original1`` (v) (Salimans & Kingma 2016); ``dim=None`` uses one norm for the whole
    tensor."""
    return parametrize.register_parametrization(module, name, _WeightNorm(dim),
                                                unsafe=True)


def weight_matrix(weight: Tensor, dim: int) -> Tensor:
    """``weight`` with ``dim`` first, flattened to a matrix (spectral norm's view)."""
    if dim != 0:
        weight = weight.movedim(dim, 0)
    return weight.flatten(1)


def power_iteration(w: Tensor, u: Tensor, v: Tensor, n: int, eps: float,
                    v_first: bool) -> None:
    """``n`` power-method steps for the top singular vectors of ``w``, written into the
    buffers ``u`` and ``v`` in place (no graph). torch's parametrization updates ``u``
    first, its legacy hook ``v`` first."""
    with no_grad_ctx():
        for _ in range(n):
            if v_first:
                v.copy_(normalize(w.mT @ u, dim=0, eps=eps))
                u.copy_(normalize(w @ v, dim=0, eps=eps))
            else:
                u.copy_(normalize(w @ v, dim=0, eps=eps))
                v.copy_(normalize(w.mT @ u, dim=0, eps=eps))


def sigma(w: Tensor, u: Tensor, v: Tensor) -> Tensor:
    """The spectral-norm estimate ``u . (W v)`` (differentiable in ``w``)."""
    return (u * (w @ v)).sum()


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            w = weight_matrix(weight.detach(), self.dim)
            h, wd = w.shape
            kw: dict[str, Any] = {"dtype": weight.dtype, "device": weight.device}
            u = normalize(empty(h, **kw).normal_(0, 1), dim=0, eps=eps)
            v = normalize(empty(wd, **kw).normal_(0, 1), dim=0, eps=eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            power_iteration(w, self._u, self._v, 15, eps, v_first=False)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        w = weight_matrix(weight, self.dim)
        if self.training:
            power_iteration(w.detach(), self._u, self._v, self.n_power_iterations, self.eps,
                            v_first=False)
        return weight / sigma(w, self._u.clone(), self._v.clone())

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def _default_dim(module: Module) -> int:
    from ..conv import ConvTranspose2d
    return 1 if isinstance(module, ConvTranspose2d) else 0


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its largest singular value, estimated by power
    iteration (one step per training forward) (Miyato et al. 2018)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = _default_dim(module)
    return parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
