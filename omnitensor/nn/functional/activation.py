"""Activation functions, softmax and log_softmax.

``softmax``/``log_softmax`` are core's (``core/ops/softmax.py``: single graph nodes with
explicit, differentiable backward formulas, and the backend's optional native forward);
this module gives them torch's ``nn.functional`` signatures.
"""
from __future__ import annotations

import math
from typing import Any

from ...core.autocast_state import autocast_operands, state as _autocast
from ...core.capture_hooks import composite
from ...core.ops.elementwise import logaddexp
from ...core.ops.softmax import softmax_data, softmax_node
from ...core.graph import is_grad_enabled, needs_grad, no_grad_ctx, record
from ...core.tensor import Tensor

__all__ = ["relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "elu", "selu", "celu",
           "gelu", "silu", "mish", "tanh", "sigmoid", "hardtanh", "hardsigmoid", "hardswish",
           "softplus", "softsign", "logsigmoid", "glu", "softmax", "log_softmax", "softmin",
           "threshold", "hardshrink", "softshrink", "tanhshrink", "prelu", "rrelu", "rrelu_",
           "gumbel_softmax", "elu_", "celu_", "selu_", "hardtanh_", "threshold_"]


def _apply(input: Tensor, fn: Any, inplace: bool) -> Tensor:  # noqa: A002
    """``fn(input)``, or with ``inplace`` ``input.copy_(fn(input))`` under torch's in-place
    autograd semantics: when the graph records, ``fn`` runs on a copy of the input, so what
    its backward saves (clamp's mask, silu's input) is never the overwritten tensor --
    ``nn.ReLU6(inplace=True)(x * 1)`` trains as in torch, while a tensor that some other
    node saved still raises on backward (its version changed)."""
    if not inplace:
        return fn(input)
    if input.requires_grad and is_grad_enabled():
        return input.copy_(fn(input.clone()))
    return input.copy_(fn(input))


def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``max(x, 0)``."""
    return input.relu_() if inplace else input.relu()


def relu_(input: Tensor) -> Tensor:  # noqa: A002
    """In-place ``relu``."""
    return input.relu_()


def relu6(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``min(max(x, 0), 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def threshold(input: Tensor, threshold: float, value: float,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold`` else ``value``."""
    return _apply(input, lambda x: x.where(x > threshold, value), inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01,  # noqa: A002
               inplace: bool = False) -> Tensor:
    """``x`` for ``x > 0`` else ``negative_slope * x``."""
    return _apply(input, lambda x: x.where(x > 0, x * negative_slope), inplace)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:  # noqa: A002
    """In-place ``leaky_relu``."""
    return leaky_relu(input, negative_slope, True)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x`` for positive ``x``, else ``alpha * (exp(x) - 1)``."""
    return _apply(input, lambda x: x.where(x > 0, x.clamp(max=0).expm1() * alpha), inplace)


def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``scale * elu(x, alpha)`` with the self-normalizing constants."""
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return _apply(input, lambda x: elu(x, alpha) * scale, inplace)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    return _apply(input, lambda x: x.where(x > 0, (x.clamp(max=0) / alpha).expm1() * alpha),
                  inplace)


_SQRT_HALF = 1.0 / math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


@composite("gelu")
def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    """``x * Phi(x)`` (exact, with erf) or the tanh approximation (``approximate='tanh'``)."""
    if approximate == "none":
        # Phi(x) = erfc(-x/sqrt 2)/2: no cancellation in the left tail, where 1 + erf(x/sqrt 2)
        # loses every digit (float32 gelu(-4) was 1e-3 off relative)
        return input * 0.5 * (input * -_SQRT_HALF).erfc()
    if approximate == "tanh":
        inner = (input + input * input * input * 0.044715) * _SQRT_2_OVER_PI
        return input * 0.5 * (inner.tanh() + 1.0)
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


def silu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * sigmoid(x)`` (swish)."""
    return _apply(input, lambda x: x * x.sigmoid(), inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * tanh(softplus(x))``."""
    return _apply(input, lambda x: x * softplus(x).tanh(), inplace)


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    """Hyperbolic tangent."""
    return input.tanh()


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """``1 / (1 + exp(-x))``."""
    return input.sigmoid()


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,  # noqa: A002
             inplace: bool = False) -> Tensor:
    """``clamp(x, min_val, max_val)``; unlike clamp's, the gradient is 0 at the bounds
    (torch's ``hardtanh_backward``: ``min_val < x < max_val``), so ``relu6`` matches."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype.kind in "iu":  # torch keeps an integer tensor's dtype
        return _apply(input, lambda x: x.clamp(min_val, max_val).to(x.dtype), inplace)
    return _apply(input, lambda x: x.where((x > min_val) & (x < max_val),
                                           x.detach().clamp(min_val, max_val)), inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``clamp(x / 6 + 1/2, 0, 1)``; its gradient is torch's: 1/6 strictly inside (-3, 3),
    0 at the corners, outside and at NaN."""
    def f(x: Tensor) -> Tensor:
        with no_grad_ctx():
            out = (x / 6.0 + 0.5).clamp(0.0, 1.0)
        if needs_grad(x):
            record("HardsigmoidBackward0", _hardsigmoid_backward, out, (x,), (x,))
        return out
    return _apply(input, f, inplace)


def _hardsigmoid_backward(node: Any, g: Tensor) -> tuple:
    (x,) = node.saved_tensors
    inside = (x > -3.0).logical_and(x < 3.0)
    return ((g / 6.0).where(inside, 0.0),)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * hardsigmoid(x)``; its gradient is torch's: 0 up to -3, ``x / 3 + 1/2`` inside,
    1 from 3 on (and at NaN)."""
    def f(x: Tensor) -> Tensor:
        with no_grad_ctx():
            out = x * (x + 3.0).clamp(0.0, 6.0) / 6.0
        if needs_grad(x):
            record("HardswishBackward0", _hardswish_backward, out, (x,), (x,))
        return out
    return _apply(input, f, inplace)


def _hardswish_backward(node: Any, g: Tensor) -> tuple:
    (x,) = node.saved_tensors
    slope = (x / 3.0 + 0.5).where(x < 3.0, 1.0)
    return ((g * slope).where((x <= -3.0).logical_not(), 0.0),)  # NaN: slope 1, as torch


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: A002
    """``log(1 + exp(beta x)) / beta``, linear above ``threshold`` (torch)."""
    bx = input * beta
    # logaddexp(bx, 0) never overflows, and its gradient is sigmoid(bx) everywhere (the
    # split form log1p(exp(-|bx|)) + max(bx, 0) summed two one-sided slopes at 0: 1, not 1/2)
    soft = logaddexp(bx, 0.0) / beta
    return input.where(bx > threshold, soft)


def softsign(input: Tensor) -> Tensor:  # noqa: A002
    """``x / (1 + |x|)``."""
    return input / (input.abs() + 1.0)


def logsigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """``log(sigmoid(x))`` computed without overflow."""
    return -((-input.abs()).exp().log1p() + (-input).clamp(min=0))


def glu(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    """Gated linear unit: ``a * sigmoid(b)`` of the two halves along ``dim``."""
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


# ---------------------------------------------------------------- softmax family
# The one softmax formula (a graph node with its closed-form backward) is core's
# (core/ops/softmax.py); these are torch's nn.functional signatures over it.
_softmax_data = softmax_data


@composite("softmax")
def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
            dtype: Any = None) -> Tensor:
    """``exp(x - max) / sum(exp(x - max))`` along ``dim`` (numerically stable)."""
    if _autocast.active and dtype is None:  # torch: an explicit dtype is not autocast
        input, = autocast_operands("softmax", input)  # noqa: A001
    return softmax_node(input, dim, dtype, False)


@composite("log_softmax")
def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
                dtype: Any = None) -> Tensor:
    """``x - logsumexp(x)`` along ``dim`` (numerically stable)."""
    if _autocast.active and dtype is None:
        input, = autocast_operands("log_softmax", input)  # noqa: A001
    return softmax_node(input, dim, dtype, True)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
            dtype: Any = None) -> Tensor:
    """Softmax of ``-x`` along ``dim``."""
    return softmax_node(-input, dim, dtype, False)


# ------------------------------------------------------ shrinkage and parametric units
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """``x`` where ``|x| > lambd``, else 0."""
    return input.where(input.abs() > lambd, 0)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""
    if lambd < 0:
        raise ValueError(f"softshrink: lambda must be greater or equal to 0, but found to be "
                         f"{lambd}")
    return (input - lambd).where(input > lambd, (input + lambd).where(input < -lambd, 0))


def tanhshrink(input: Tensor) -> Tensor:  # noqa: A002
    """``x - tanh(x)``."""
    return input - input.tanh()


def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    """``max(0, x) + weight * min(0, x)``; ``weight`` has one value or one per channel
    (dim 1; an input of fewer than 2 dims has one channel)."""
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    n = weight.numel()
    channels = input.shape[1] if input.ndim >= 2 else 1
    if n != 1 and n != channels:
        raise ValueError(f"prelu: mismatch of parameter numbers and input channel size: "
                         f"the weight has {n} values, the input {channels} channels")
    w = weight.reshape(-1)
    if n != 1 and input.ndim >= 2:
        w = w.reshape((n,) + (1,) * (input.ndim - 2))
    elif n == 1:
        w = w.reshape(())
    return input.clamp(min=0) + w * input.clamp(max=0)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,  # noqa: A002
          training: bool = False, inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: slopes drawn uniformly from ``[lower, upper]`` for each
    negative element in training, their mean ``(lower + upper) / 2`` in evaluation."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)

    def f(x: Tensor) -> Tensor:
        from ...core.ops.random import rand
        slope = rand(tuple(x.shape), dtype=x.dtype, device=x.device) * (upper - lower) + lower
        return x.where(x >= 0, x * slope)
    return _apply(input, f, inplace)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,  # noqa: A002
           training: bool = False) -> Tensor:
    return rrelu(input, lower, upper, training, True)


def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """A sample of the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with
    Gumbel noise ``g``; ``hard`` returns the one-hot argmax with the soft sample's
    gradient (straight-through)."""
    from ...core.ops.random import rand
    u = rand(tuple(logits.shape), dtype=logits.dtype, device=logits.device)
    gumbels = -(-(u.clamp(min=eps)).log()).clamp(min=eps).log()
    y = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y
    index = y.argmax(dim=dim, keepdim=True)
    one_hot = y.detach() * 0
    one_hot = one_hot.scatter(dim, index, 1.0)
    return one_hot - y.detach() + y


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    return elu(input, alpha, True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    return celu(input, alpha, True)


def selu_(input: Tensor) -> Tensor:  # noqa: A002
    return selu(input, True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:  # noqa: A002
    return hardtanh(input, min_val, max_val, True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    return globals()["threshold"](input, threshold, value, True)
