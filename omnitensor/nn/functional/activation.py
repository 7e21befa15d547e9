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
from ...core.ops.softmax import softmax_data, softmax_node
from ...core.graph import is_grad_enabled
from ...core.tensor import Tensor

__all__ = ["relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "elu", "selu", "celu",
           "gelu", "silu", "mish", "tanh", "sigmoid", "hardtanh", "hardsigmoid", "hardswish",
           "softplus", "softsign", "logsigmoid", "glu", "softmax", "log_softmax", "softmin",
           "threshold"]


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
    return _apply(input, lambda x: x.where((x > min_val) & (x < max_val),
                                           x.detach().clamp(min_val, max_val)), inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``clamp(x / 6 + 1/2, 0, 1)``."""
    return _apply(input, lambda x: (x / 6.0 + 0.5).clamp(0.0, 1.0), inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * hardsigmoid(x)``."""
    return _apply(input, lambda x: x * (x + 3.0).clamp(0.0, 6.0) / 6.0, inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: A002
    """``log(1 + exp(beta x)) / beta``, linear above ``threshold`` (torch)."""
    bx = input * beta
    # log1p(exp(-|bx|)) + max(bx, 0) never overflows
    soft = ((-bx.abs()).exp().log1p() + bx.clamp(min=0)) / beta
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
