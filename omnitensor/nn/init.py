"""``nn.init``: in-place initializers with torch's formulas (all run under no_grad and
accept a ``generator`` for reproducible draws on any device)."""
from __future__ import annotations

import math
import warnings
from typing import Any

from ..core.graph import no_grad_ctx
from ..core.ops.random import Generator
from ..core.tensor import Tensor

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "default_weight_bias_", "dirac_", "sparse_", "uniform", "normal", "constant", "eye", "dirac",
           "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal", "orthogonal",
           "sparse"]


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (torch's table)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0,
             generator: Generator | None = None) -> Tensor:
    """Fill with U(a, b)."""
    with no_grad_ctx():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
            generator: Generator | None = None) -> Tensor:
    """Fill with N(mean, std^2)."""
    with no_grad_ctx():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Generator | None = None) -> Tensor:
    """Fill with N(mean, std^2) restricted to [a, b] (redrawing values outside)."""
    from ..core.ops.random import randn
    with no_grad_ctx():
        out = randn(tensor.shape, dtype=tensor.dtype, device=tensor.device,
                    generator=generator) * std + mean
        for _ in range(64):  # each round keeps >= 95% of the remaining draws for [-2, 2]
            bad = (out < a) | (out > b)
            if not bool(bad.any()):
                break
            fresh = randn(tensor.shape, dtype=tensor.dtype, device=tensor.device,
                          generator=generator) * std + mean
            out = fresh.where(bad, out)
        return tensor.copy_(out.clamp(a, b))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    with no_grad_ctx():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones."""
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros."""
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from ..core.ops.creation import eye
    with no_grad_ctx():
        return tensor.copy_(eye(tensor.shape[0], tensor.shape[1], dtype=tensor.dtype,
                                device=tensor.device))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0,
                    generator: Generator | None = None) -> Tensor:
    """U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))`` (Glorot)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0,
                   generator: Generator | None = None) -> Tensor:
    """N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu",
                     generator: Generator | None = None) -> Tensor:
    """U(-b, b) with ``b = gain * sqrt(3 / fan)`` (He)."""
    if 0 in tensor.shape:
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu",
                    generator: Generator | None = None) -> Tensor:
    """N(0, std^2) with ``std = gain / sqrt(fan)`` (He)."""
    if 0 in tensor.shape:
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0,
                generator: Generator | None = None) -> Tensor:
    """A (semi-)orthogonal matrix times ``gain`` (Saxe et al.): the Q of a QR
    factorisation of a normal draw, its columns' signs fixed by R's diagonal as torch does;
    dimensions after the first are flattened."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    from .. import linalg
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with no_grad_ctx():
        flat = normal_(tensor.new_empty((rows, cols)), 0.0, 1.0, generator)
        if rows < cols:
            flat = flat.t()
        q, r = linalg.qr(flat)
        q = q * r.diagonal(0, -2, -1).sign()
        if rows < cols:
            q = q.t()
        tensor.copy_((q * gain).reshape(tensor.shape))
    return tensor


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """The Dirac delta for a 3-5-D convolution weight: each of ``groups`` blocks of output
    channels passes its input channel through unchanged (the centre tap is 1)."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out_per_group = tensor.shape[0] // groups
    if tensor.shape[0] % groups:
        raise ValueError("dim 0 must be divisible by groups")
    n = min(out_per_group, tensor.shape[1])
    centre = tuple(k // 2 for k in tensor.shape[2:])
    with no_grad_ctx():
        tensor.zero_()
        for g in range(groups):
            for d in range(n):
                tensor[(g * out_per_group + d, d) + centre] = 1
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01,
            generator: Generator | None = None) -> Tensor:
    """A 2-D tensor from N(0, std^2) with a ``sparsity`` fraction of each column zero
    (Martens 2010)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    zeros_per_col = int(math.ceil(sparsity * rows))
    from ..core.ops.random import randperm
    with no_grad_ctx():
        normal_(tensor, 0.0, std, generator)
        for c in range(cols):
            idx = randperm(rows, generator=generator, device=tensor.device)[:zeros_per_col]
            tensor[idx, c] = 0
    return tensor


def _deprecated(fn: Any) -> Any:
    """torch's old, un-suffixed init names (``nn.init.normal`` for ``normal_``)."""
    def old(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(f"nn.init.{fn.__name__[:-1]} is now deprecated in favor of "
                      f"nn.init.{fn.__name__}.", FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)
    old.__name__ = fn.__name__[:-1]
    old.__doc__ = f"Deprecated spelling of :func:`{fn.__name__}`."
    return old


uniform, normal, constant, eye, dirac, xavier_uniform, xavier_normal = (
    _deprecated(f) for f in (uniform_, normal_, constant_, eye_, dirac_, xavier_uniform_,
                             xavier_normal_))
kaiming_uniform, kaiming_normal, orthogonal, sparse = (
    _deprecated(f) for f in (kaiming_uniform_, kaiming_normal_, orthogonal_, sparse_))


def default_weight_bias_(weight: Tensor, bias: Tensor | None) -> None:
    """torch's default initialisation of Linear and Conv layers: ``kaiming_uniform_`` with
    ``a = sqrt(5)`` for the weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        uniform_(bias, -bound, bound)
