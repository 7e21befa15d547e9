"""Activation functions, softmax and log_softmax.

``softmax``/``log_softmax`` are single graph nodes with explicit backward formulas (fewer
nodes = less Python per step than the composite's six); each backward is written with
Tensor ops on the saved *output*, so it is itself differentiable (double backward). A
backend may add a native forward: ``backend.softmax(x, axis) -> array`` and
``backend.log_softmax(x, axis) -> array`` on its own arrays (same dtype and shape).
"""
from __future__ import annotations

import math
import warnings
from typing import Any

from ...core.graph import needs_grad, no_grad_ctx, record
from ...core.shape_util import normalize_axis
from ...core.tensor import Tensor
from ._utils import native, wrap

__all__ = ["relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "elu", "selu", "celu",
           "gelu", "silu", "mish", "tanh", "sigmoid", "hardtanh", "hardsigmoid", "hardswish",
           "softplus", "softsign", "logsigmoid", "glu", "softmax", "log_softmax", "softmin",
           "threshold"]


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
    out = input.where(input > threshold, value)
    return input.copy_(out) if inplace else out


def leaky_relu(input: Tensor, negative_slope: float = 0.01,  # noqa: A002
               inplace: bool = False) -> Tensor:
    """``x`` for ``x > 0`` else ``negative_slope * x``."""
    out = input.where(input > 0, input * negative_slope)
    return input.copy_(out) if inplace else out


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:  # noqa: A002
    """In-place ``leaky_relu``."""
    return leaky_relu(input, negative_slope, True)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x`` for positive ``x``, else ``alpha * (exp(x) - 1)``."""
    out = input.where(input > 0, input.clamp(max=0).expm1() * alpha)
    return input.copy_(out) if inplace else out


def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``scale * elu(x, alpha)`` with the self-normalizing constants."""
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    out = elu(input, alpha) * scale
    return input.copy_(out) if inplace else out


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    out = input.where(input > 0, (input.clamp(max=0) / alpha).expm1() * alpha)
    return input.copy_(out) if inplace else out


_SQRT_HALF = 1.0 / math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


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
    out = input * input.sigmoid()
    return input.copy_(out) if inplace else out


def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * tanh(softplus(x))``."""
    out = input * softplus(input).tanh()
    return input.copy_(out) if inplace else out


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    """Hyperbolic tangent."""
    return input.tanh()


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """``1 / (1 + exp(-x))``."""
    return input.sigmoid()


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,  # noqa: A002
             inplace: bool = False) -> Tensor:
    """``clamp(x, min_val, max_val)``."""
    out = input.clamp(min_val, max_val)
    return input.copy_(out) if inplace else out


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``clamp(x / 6 + 1/2, 0, 1)``."""
    out = (input / 6.0 + 0.5).clamp(0.0, 1.0)
    return input.copy_(out) if inplace else out


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * hardsigmoid(x)``."""
    out = input * (input + 3.0).clamp(0.0, 6.0) / 6.0
    return input.copy_(out) if inplace else out


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
def _softmax_dim(ndim: int, dim: Any, name: str) -> int:
    if dim is None:
        # torch's legacy implicit choice, with its warning
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the "
                      f"call to include dim=X as an argument.", UserWarning, stacklevel=3)
        dim = 0 if ndim in (0, 1, 3) else 1
    return normalize_axis(dim, max(ndim, 1)) if ndim else 0


def _softmax_data(x: Tensor, d: int, log: bool, ops: Any = Tensor) -> Tensor:
    """The forward values (no graph); ``ops`` is the op namespace (``core/trusted.py``:
    the trusted ops once the caller has established one device and floating dtype)."""
    fast = native(x, "log_softmax" if log else "softmax")
    if fast is not None:
        return wrap(fast(x._data, d), x)
    if x.ndim == 0:
        from ...core.ops.creation import zeros_like, ones_like
        return zeros_like(x) if log else ones_like(x)
    shifted = ops.sub(x, ops.amax(x, d, True))
    e = ops.exp(shifted)
    s = ops.sum(e, d, True)
    if log:
        return ops.sub_(shifted, ops.log(s))
    return ops.div_(e, s)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
            dtype: Any = None) -> Tensor:
    """``exp(x - max) / sum(exp(x - max))`` along ``dim`` (numerically stable)."""
    return _softmax_node(input, dim, dtype, False)


def _softmax_node(input: Tensor, dim: int | None, dtype: Any, log: bool  # noqa: A002
                  ) -> Tensor:
    """softmax (``log``: log_softmax) as one graph node with its closed-form backward."""
    x = input if dtype is None else input.to(dtype)
    if x.dtype.kind not in "fc":
        x = x.to(_default_float())
    name = "log_softmax" if log else "softmax"
    d = _softmax_dim(x.ndim, dim, name)
    with no_grad_ctx():
        out = _softmax_data(x, d, log)
    if needs_grad(x):
        record("LogSoftmaxBackward0" if log else "SoftmaxBackward0",
               _log_softmax_backward if log else _softmax_backward, out, (x,), (out,), dim=d)
    return out


def _softmax_backward(node: Any, g: Tensor) -> tuple:
    (y,) = node.saved_tensors
    gy = g * y
    return (gy - y * gy.sum(dim=node.dim, keepdim=True),)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
                dtype: Any = None) -> Tensor:
    """``x - logsumexp(x)`` along ``dim`` (numerically stable)."""
    return _softmax_node(input, dim, dtype, True)


def _log_softmax_backward(node: Any, g: Tensor) -> tuple:
    (y,) = node.saved_tensors
    return (g - y.exp() * g.sum(dim=node.dim, keepdim=True),)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
            dtype: Any = None) -> Tensor:
    """Softmax of ``-x`` along ``dim``."""
    return softmax(-input, dim, dtype=dtype)


def _default_float() -> Any:
    from ...core.dtypes import get_default_dtype
    return get_default_dtype()
