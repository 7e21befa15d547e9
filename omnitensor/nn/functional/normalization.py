"""Normalization: ``batch_norm``, ``layer_norm``, ``group_norm``, ``instance_norm``,
``normalize``. Written with Tensor ops (autograd derives the backward, so double backward
works); running statistics are updated in place under no_grad, as torch does."""
from __future__ import annotations

import math

from typing import Any, Sequence

from ...core.autocast_state import autocast_operands, state as _autocast
from ...core.capture_hooks import composite
from ...core.graph import no_grad_ctx
from ...core.shape_util import as_shape
from ...core.tensor import Tensor

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "normalize",
           "rms_norm", "local_response_norm"]


def _channel_shape(x: Tensor) -> tuple[int, ...]:
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


def _in_input_dtype(out: Tensor, input: Tensor) -> Tensor:  # noqa: A002
    """torch's mixed-type norms: a float16/bfloat16 input with float32 parameters or
    running statistics (a model under autocast) gives an output in the input's dtype."""
    d = input.dtype
    if out.dtype is not d and d.is_floating_point and d.itemsize < 4:
        return out.to(d)
    return out


@composite("batch_norm")
def batch_norm(input: Tensor, running_mean: Tensor | None,  # noqa: A002
               running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Tensor:
    """Normalize each channel (dim 1) of ``(N, C, ...)`` by batch statistics in training
    (updating ``running_*`` with ``momentum``; the running variance is unbiased) or by the
    running statistics in evaluation."""
    if input.ndim < 2:
        return _batch_norm_no_channels(input, running_mean, running_var, weight, bias,
                                       training)
    axes = (0,) + tuple(range(2, input.ndim))
    shape = _channel_shape(input)
    if training:
        count = input.numel() // input.shape[1]
        if count <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got "
                             f"input size {tuple(input.shape)}")
        mean = input.mean(dim=axes, keepdim=True)
        centered = input - mean
        var = (centered * centered).mean(dim=axes, keepdim=True)
        if running_mean is not None or running_var is not None:
            with no_grad_ctx():
                if running_mean is not None:
                    running_mean.mul_(1.0 - momentum).add_(
                        mean.detach().reshape(-1).to(running_mean.dtype) * momentum)
                if running_var is not None:
                    unbiased = var.detach().reshape(-1) * (count / (count - 1))
                    running_var.mul_(1.0 - momentum).add_(
                        unbiased.to(running_var.dtype) * momentum)
        out = centered * (var + eps).rsqrt()
    else:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm: running_mean and running_var are required when "
                             "training=False")
        scale = (running_var.reshape(shape) + eps).rsqrt()
        out = (input - running_mean.reshape(shape)) * scale
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return _in_input_dtype(out, input)


def _batch_norm_no_channels(input: Tensor, running_mean: Tensor | None,  # noqa: A002
                            running_var: Tensor | None, weight: Tensor | None,
                            bias: Tensor | None, training: bool) -> Tensor:
    """A 0-D or 1-D input has no channel dim (dim 1): torch counts 0 channels, so only an
    empty input with empty statistics (or none, in training) normalizes, to an empty
    result; anything else is refused."""
    given = [t for t in (running_mean, running_var, weight, bias) if t is not None]
    if not training and (running_mean is None or running_var is None):
        raise ValueError("batch_norm: running_mean and running_var are required when "
                         "training=False")
    if input.numel() or any(t.numel() for t in given):
        raise ValueError(f"batch_norm: expected at least a 2-D input (a 1-D one has no "
                         f"channel dimension, so torch takes only an empty one with empty "
                         f"statistics), got shape {tuple(input.shape)}")
    return _in_input_dtype(input.clone(), input)


@composite("layer_norm")
def layer_norm(input: Tensor, normalized_shape: Sequence[int],  # noqa: A002
               weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalize over the trailing ``normalized_shape`` dims (biased variance).
    ``normalized_shape`` is a sequence, as in torch (``nn.LayerNorm`` takes a bare int)."""
    if _autocast.active:
        input, weight, bias = autocast_operands("layer_norm", input, weight, bias)  # noqa: A001
    ns = as_shape((normalized_shape,), "normalized_shape", "layer_norm", sequence=True)
    if not ns:
        raise ValueError("layer_norm: normalized_shape must have at least one dim (torch), "
                         "got []")
    if tuple(input.shape[input.ndim - len(ns):]) != ns:
        raise ValueError(f"layer_norm: normalized_shape {list(ns)} does not match the "
                         f"trailing dims of input of shape {tuple(input.shape)}")
    axes = tuple(range(input.ndim - len(ns), input.ndim))
    mean = input.mean(dim=axes, keepdim=True)
    centered = input - mean
    var = (centered * centered).mean(dim=axes, keepdim=True)
    out = centered * (var + eps).rsqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return _in_input_dtype(out, input)


@composite("group_norm")
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalize groups of channels of ``(N, C, ...)`` (``C`` divisible by ``num_groups``),
    then apply a per-channel affine."""
    if _autocast.active:
        input, weight, bias = autocast_operands("group_norm", input, weight, bias)  # noqa: A001
    n, c = input.shape[:2]
    if c % num_groups:
        raise ValueError(f"group_norm: {c} channels are not divisible into {num_groups} "
                         f"groups")
    group = (c // num_groups) * math.prod(input.shape[2:])  # explicit: -1 fails when n == 0
    x = input.reshape(n, num_groups, group)
    mean = x.mean(dim=2, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(dim=2, keepdim=True)
    out = (centered * (var + eps).rsqrt()).reshape(input.shape)
    return _in_input_dtype(_channel_affine(out, input, weight, bias), input)


def _channel_affine(out: Tensor, input: Tensor, weight: Tensor | None,  # noqa: A002
                    bias: Tensor | None) -> Tensor:
    """``out * weight + bias`` with per-channel (dim 1) weight and bias."""
    shape = _channel_shape(input)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def instance_norm(input: Tensor, running_mean: Tensor | None = None,  # noqa: A002
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each (sample, channel) plane over its spatial dims. With running
    statistics, ``use_input_stats`` updates them (the per-plane means and unbiased
    variances averaged over the batch, as torch's batch-norm-of-planes does); without it,
    the planes are normalized by them."""
    shape = _channel_shape(input)
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise ValueError("instance_norm: use_input_stats=False needs running_mean and "
                             "running_var")
        out = (input - running_mean.reshape(shape)) / (running_var.reshape(shape) + eps).sqrt()
        return _channel_affine(out, input, weight, bias)
    out = group_norm(input, input.shape[1], None, None, eps)
    if running_mean is not None or running_var is not None:
        axes = tuple(range(2, input.ndim))
        count = input[0, 0].numel()
        with no_grad_ctx():
            x = input.detach()
            if running_mean is not None:
                m = x.mean(dim=axes).mean(dim=0)
                running_mean.mul_(1 - momentum).add_(m.to(running_mean.dtype) * momentum)
            if running_var is not None:
                v = x.var(dim=axes, correction=1 if count > 1 else 0).mean(dim=0)
                running_var.mul_(1 - momentum).add_(v.to(running_var.dtype) * momentum)
    return _channel_affine(out, input, weight, bias)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,  # noqa: A002
              out: Any = None) -> Tensor:
    """``x / max(||x||_p, eps)`` along ``dim``."""
    if out is not None:
        raise NotImplementedError("normalize: out= is not supported")
    norm = input.norm(p, dim, keepdim=True).clamp(min=eps)
    return input / norm


def rms_norm(input: Tensor, normalized_shape: Sequence[int] | int,  # noqa: A002
             weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    """``x / sqrt(mean(x^2) + eps) * weight`` over the last ``len(normalized_shape)``
    dims; ``eps`` defaults to the dtype's machine epsilon, as torch's."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    if tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise ValueError(f"rms_norm: expected the input's last dims to be {list(shape)}, got "
                         f"shape {list(input.shape)}")
    from ...core.dtypes import finfo
    e = finfo(input.dtype).eps if eps is None else eps
    axes = tuple(range(input.ndim - len(shape), input.ndim))
    out = input * ((input * input).mean(dim=axes, keepdim=True) + e).rsqrt()
    return out * weight if weight is not None else out


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4,  # noqa: A002
                        beta: float = 0.75, k: float = 1.0) -> Tensor:
    """``x / (k + alpha * mean of x^2 over size neighbouring channels)^beta`` (the window
    is zero-padded: ``size // 2`` channels before, ``(size - 1) // 2`` after)."""
    if input.ndim < 3:
        raise ValueError(f"local_response_norm: expected 3D or higher input (got "
                         f"{input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    c = input.shape[1]
    before, after = size // 2, (size - 1) // 2
    from ...core.ops.join import cat
    from ...core.ops.creation import zeros
    pad_shape = lambda n: (input.shape[0], n) + tuple(input.shape[2:])
    padded = cat([zeros(pad_shape(before), dtype=sq.dtype, device=sq.device), sq,
                  zeros(pad_shape(after), dtype=sq.dtype, device=sq.device)], 1)
    window = padded.narrow(1, 0, c)
    for i in range(1, size):
        window = window + padded.narrow(1, i, c)
    if sq.dtype.kind in "iu":  # torch averages an integer window in integers (truncating)
        div = ((window // size) * alpha + k) ** beta
    else:
        div = (window * (alpha / size) + k) ** beta
    return input / div
