"""The hook-based ``nn.utils.weight_norm``/``remove_weight_norm`` and
``nn.utils.spectral_norm``/``remove_spectral_norm`` (torch's legacy API and state-dict
keys: ``weight_g``/``weight_v``; ``weight_orig``/``weight_u``/``weight_v``). A forward
pre-hook recomputes the weight before every call, with the formulas of
``parametrizations.py``."""
from __future__ import annotations

from typing import Any

from ...core.graph import no_grad_ctx
from ...core.ops.creation import empty
from ...core.tensor import Tensor
from ..functional import normalize
from ..module import Module
from ..parameter import Parameter
from .parametrizations import (_default_dim, norm_except_dim, power_iteration, sigma,
                               weight_matrix, weight_norm_value)

__all__ = ["weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]


class WeightNorm:
    """The pre-hook of :func:`weight_norm` (torch's ``WeightNorm``)."""

    handle: Any  # its forward-pre-hook registration, set by weight_norm

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def compute_weight(self, module: Module) -> Tensor:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return weight_norm_value(g, v, self.dim)

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))

    def remove(self, module: Module) -> None:
        with no_grad_ctx():
            weight = self.compute_weight(module).detach()
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        module.register_parameter(self.name, Parameter(weight))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Replace parameter ``name`` by ``name_g`` (magnitude) and ``name_v`` (direction),
    recombined before every forward."""
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, WeightNorm) and hook.name == name:
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter "
                               f"{name}")
    dim = -1 if dim is None else dim
    weight = module._parameters.get(name)
    if weight is None:
        raise ValueError(f"Module '{type(module).__name__}' has no parameter '{name}'")
    fn = WeightNorm(name, dim)
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, fn.compute_weight(module))
    fn.handle = module.register_forward_pre_hook(fn)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Fold ``name_g``/``name_v`` back into one parameter ``name``."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")


class SpectralNorm:
    """The pre-hook of :func:`spectral_norm` (torch's ``SpectralNorm``)."""

    handle: Any  # its forward-pre-hook registration, set by spectral_norm

    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float) -> None:
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.n_power_iterations, self.dim, self.eps = \
            name, n_power_iterations, dim, eps

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        w = weight_matrix(weight, self.dim)
        if do_power_iteration:
            power_iteration(w.detach(), u, v, self.n_power_iterations, self.eps,
                            v_first=True)
            u, v = u.clone(), v.clone()
        return weight / sigma(w, u, v)

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))

    def remove(self, module: Module) -> None:
        with no_grad_ctx():
            weight = self.compute_weight(module, do_power_iteration=False).detach()
        delattr(module, self.name)
        del module._parameters[self.name + "_orig"]
        del module._buffers[self.name + "_u"]
        del module._buffers[self.name + "_v"]
        module.register_parameter(self.name, Parameter(weight))


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide parameter ``name`` by its spectral norm before every forward (power
    iteration in training mode); keeps ``name_orig``, ``name_u`` and ``name_v``."""
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                               f"parameter {name}")
    if dim is None:
        dim = _default_dim(module)
    weight = module._parameters.get(name)
    if weight is None:
        raise ValueError(f"Module '{type(module).__name__}' has no parameter '{name}'")
    fn = SpectralNorm(name, n_power_iterations, dim, eps)
    with no_grad_ctx():
        w = weight_matrix(weight.detach(), dim)
        h, wd = w.shape
        kw: dict[str, Any] = {"dtype": weight.dtype, "device": weight.device}
        u = normalize(empty(h, **kw).normal_(0, 1), dim=0, eps=eps)
        v = normalize(empty(wd, **kw).normal_(0, 1), dim=0, eps=eps)
    del module._parameters[name]
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, weight.detach())
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    fn.handle = module.register_forward_pre_hook(fn)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Fold the spectral normalisation back into one parameter ``name``."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
