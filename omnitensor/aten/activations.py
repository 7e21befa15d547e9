"""ATen's activation backward kernels (``gelu_backward(grad_output, self, *,
approximate)``, ``hardtanh_backward``...), which FX backward graphs call: one rule, the
vector-Jacobian product of the public activation at ``self`` (autograd's own backward
formula, taken with ``create_graph`` so the kernel differentiates again), and the two whose
schemas take the forward's output (``sigmoid_backward``, ``tanh_backward``) by formula.
"""
from __future__ import annotations

from typing import Any, Callable

from ..autograd import enable_grad, grad as _grad
from ..core.tensor import Tensor
from ..nn import functional as F
from .kernels import kernel

__all__ = ["VJP_FORWARDS"]

#: aten backward name -> the public forward called as ``forward(self, *args, **kwargs)``
VJP_FORWARDS: dict[str, Callable[..., Tensor]] = {
    "threshold_backward": lambda x, th: F.threshold(x, th, 0.0),
    "gelu_backward": F.gelu,
    "silu_backward": F.silu,
    "hardtanh_backward": F.hardtanh,
    "softplus_backward": F.softplus,
    "mish_backward": F.mish,
    "hardsigmoid_backward": F.hardsigmoid,
    "hardswish_backward": F.hardswish,
}


def _vjp_kernel(name: str, forward: Callable[..., Tensor]) -> None:
    def backward(grad_output: Tensor, self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        with enable_grad():
            x = self if self.requires_grad else self.detach().requires_grad_(True)
            y = forward(x, *args, **kwargs)
            (g,) = _grad(y, x, grad_output, create_graph=True)
        return g if grad_output.requires_grad or self.requires_grad else g.detach()
    backward.__name__ = name
    backward.__doc__ = f"``{name}``: the vector-Jacobian product of its forward at ``self``."
    kernel(name)(backward)


for _name, _forward in VJP_FORWARDS.items():
    _vjp_kernel(_name, _forward)


@kernel("sigmoid_backward")
def sigmoid_backward(grad_output: Tensor, output: Tensor) -> Tensor:
    """``grad_output * y * (1 - y)`` for the sigmoid's output ``y``."""
    return grad_output * output * (1 - output)


@kernel("tanh_backward")
def tanh_backward(grad_output: Tensor, output: Tensor) -> Tensor:
    """``grad_output * (1 - y^2)`` for tanh's output ``y``."""
    return grad_output * (1 - output * output)
