"""torch's ``native_batch_norm``, ``native_layer_norm`` and ``native_group_norm``: the
normalisations with their saved statistics as outputs (``(out, mean, invstd)``).

Composites of reductions and elementwise ops in core (``nn.functional``'s layers sit above
core and are not imported here), so they run on every backend and differentiate through
their parts. As in torch, ``native_batch_norm``'s statistics outputs carry no gradient of
their own (its backward reads only the output's), while the layer and group norms'
statistics do.
"""
from __future__ import annotations

from typing import Sequence

from ...errors import ShapeError
from ..graph import no_grad_ctx
from ..tensor import Tensor
from . import creation

__all__ = ["native_batch_norm", "native_layer_norm", "native_group_norm"]


def _channel_view(t: Tensor, ndim: int) -> Tensor:
    """A per-channel (C,) tensor shaped to broadcast against (N, C, ...)."""
    return t.reshape((1, -1) + (1,) * (ndim - 2))


def _affine(y: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    if weight is not None:
        y = y * _channel_view(weight, y.ndim)
    if bias is not None:
        y = y + _channel_view(bias, y.ndim)
    return y


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
                      running_mean: Tensor | None, running_var: Tensor | None,
                      training: bool, momentum: float, eps: float) -> tuple:
    """Batch normalisation over every dim but 1: ``(out, save_mean, save_invstd)``. In
    training the batch statistics are used and the running ones (if given) updated in
    place with ``momentum`` (the unbiased variance); otherwise the running statistics are
    used and the saved outputs are empty."""
    if input.ndim < 2:
        raise ShapeError(f"native_batch_norm: expected an input of at least 2 dimensions, "
                         f"got {input.ndim}")
    dims = (0,) + tuple(range(2, input.ndim))
    if training:
        mean = input.mean(dim=dims)
        centred = input - _channel_view(mean, input.ndim)
        var = (centred * centred).mean(dim=dims)
        invstd = 1 / (var + eps).sqrt()
        out = _affine(centred * _channel_view(invstd, input.ndim), weight, bias)
        n = input.numel() // max(input.shape[1], 1)
        with no_grad_ctx():
            if running_mean is not None:
                running_mean.copy_(running_mean * (1 - momentum) + mean * momentum)
            if running_var is not None:
                unbiased = var * (n / (n - 1)) if n > 1 else var
                running_var.copy_(running_var * (1 - momentum) + unbiased * momentum)
        return out, mean.detach(), invstd.detach()
    if running_mean is None or running_var is None:
        raise ValueError("native_batch_norm: running_mean and running_var are needed when "
                         "training=False")
    invstd = 1 / (running_var + eps).sqrt()
    out = _affine((input - _channel_view(running_mean, input.ndim))
                  * _channel_view(invstd, input.ndim), weight, bias)
    empty = creation.zeros(0, dtype=input.dtype, device=input.device)
    return out, empty, empty.clone()


def native_layer_norm(input: Tensor, normalized_shape: Sequence[int],  # noqa: A002
                      weight: Tensor | None, bias: Tensor | None, eps: float) -> tuple:
    """Layer normalisation over the last ``len(normalized_shape)`` dims:
    ``(out, mean, rstd)``, the statistics shaped ``input.shape[:axis] + (1,) * k``."""
    ns = tuple(int(n) for n in normalized_shape)
    k = len(ns)
    if k == 0:
        raise ShapeError("native_layer_norm: expected normalized_shape to be at least "
                         "1-dimensional, i.e., containing at least one element, but got "
                         "normalized_shape = []")
    if tuple(input.shape[input.ndim - k:]) != ns or k > input.ndim:
        raise ShapeError(f"native_layer_norm: normalized_shape {list(ns)} does not match "
                         f"the input's trailing dimensions {list(input.shape)}")
    dims = tuple(range(input.ndim - k, input.ndim))
    mean = input.mean(dim=dims, keepdim=True)
    var = ((input - mean) ** 2).mean(dim=dims, keepdim=True)
    rstd = 1 / (var + eps).sqrt()
    out = (input - mean) * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean, rstd


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
                      N: int, C: int, HxW: int, group: int, eps: float) -> tuple:
    """Group normalisation of ``input`` (N, C, ...) over ``group`` groups of channels:
    ``(out, mean, rstd)`` with statistics of shape (N, group)."""
    if group <= 0 or C % group:
        raise ValueError(f"native_group_norm: expected the number of channels {C} to be "
                         f"divisible by the number of groups {group}")
    if input.numel() != N * C * HxW:
        raise ShapeError(f"native_group_norm: input of shape {list(input.shape)} does not "
                         f"hold N={N} x C={C} x HxW={HxW} elements")
    grouped = input.reshape(N, group, (C // group) * HxW)
    mean = grouped.mean(dim=2, keepdim=True) if grouped.shape[2] else grouped.sum(2, True)
    var = ((grouped - mean) ** 2).mean(dim=2, keepdim=True) if grouped.shape[2] else mean
    rstd = 1 / (var + eps).sqrt()
    out = ((grouped - mean) * rstd).reshape(input.shape)
    if input.ndim >= 2:
        out = _affine(out, weight, bias)
    return out, mean.reshape(N, group), rstd.reshape(N, group)
