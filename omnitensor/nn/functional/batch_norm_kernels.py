"""SyncBatchNorm's kernels: torch's ``batch_norm_stats``, ``batch_norm_gather_stats``,
``batch_norm_gather_stats_with_counts``, ``batch_norm_elemt``, ``batch_norm_backward_reduce``,
``batch_norm_backward_elemt`` and ``batch_norm_update_stats``.

torch's SyncBatchNorm computes per-process channel statistics (``batch_norm_stats``),
all-gathers them, merges them into global ones with per-process counts
(``batch_norm_gather_stats_with_counts``, which also updates the running statistics) and
normalizes (``batch_norm_elemt``); its backward reduces the two gradient sums per channel
(``batch_norm_backward_reduce``), all-reduces them and applies them elementwise
(``batch_norm_backward_elemt``). torch's CPU build has only ``batch_norm_update_stats``; the
others are CUDA kernels, written here from their math with Tensor ops, so they run (and
differentiate) on every device. The input is ``(N, C, ...)``; statistics are per channel
(dim 1), ``invstd`` is ``1 / sqrt(biased_var + eps)``. As on CUDA, the statistics of a
float16/bfloat16 input are float32.
"""
from __future__ import annotations

from typing import Any

from ...core.graph import no_grad_ctx
from ...core.tensor import Tensor

__all__ = ["batch_norm_stats", "batch_norm_gather_stats", "batch_norm_gather_stats_with_counts",
           "batch_norm_elemt", "batch_norm_backward_reduce", "batch_norm_backward_elemt",
           "batch_norm_update_stats"]


def _axes(x: Tensor, op: str) -> tuple[int, ...]:
    """The reduced dims (all but the channel dim 1)."""
    if x.ndim < 2:
        raise ValueError(f"{op}: expected an (N, C, ...) input of at least 2 dims, got shape "
                         f"{tuple(x.shape)}")
    return (0,) + tuple(range(2, x.ndim))


def _channel(t: Tensor, like: Tensor) -> Tensor:
    """A per-channel ``(C,)`` tensor shaped to broadcast against ``like`` ``(N, C, ...)``."""
    return t.reshape((1, -1) + (1,) * (like.ndim - 2))


def _stat_input(x: Tensor) -> Tensor:
    """float16/bfloat16 data computes its statistics in float32 (torch's accumulate type)."""
    return x.float() if x.is_floating_point() and x.dtype.itemsize < 4 else x


def _update_running(running: Tensor | None, value: Tensor, momentum: float) -> None:
    if running is not None:
        with no_grad_ctx():
            running.mul_(1.0 - momentum).add_(value.detach().to(running.dtype) * momentum)


def batch_norm_stats(input: Tensor, eps: float) -> tuple[Tensor, Tensor]:  # noqa: A002
    """Per-channel ``(mean, invstd)`` of ``input``, ``invstd = 1 / sqrt(var + eps)`` with the
    biased variance."""
    axes = _axes(input, "batch_norm_stats")
    x = _stat_input(input)
    mean = x.mean(dim=axes)
    centered = x - _channel(mean, x)
    var = (centered * centered).mean(dim=axes)
    return mean, (var + eps).rsqrt()


def batch_norm_gather_stats_with_counts(
        input: Tensor, mean: Tensor, invstd: Tensor,  # noqa: A002 - torch's names
        running_mean: Tensor | None, running_var: Tensor | None, momentum: float, eps: float,
        counts: Tensor) -> tuple[Tensor, Tensor]:
    """Merge per-process statistics ``mean``/``invstd`` ``(W, C)`` of ``counts`` ``(W,)``
    elements each into global ``(mean, invstd)`` ``(C,)`` (each process's biased variance
    is ``1/invstd**2 - eps``); updates ``running_mean`` and ``running_var`` (unbiased) in
    place with ``momentum``. ``input`` gives only the device (as in torch)."""
    if mean.ndim != 2 or invstd.shape != mean.shape:
        raise ValueError(f"batch_norm_gather_stats_with_counts: mean and invstd must be "
                         f"(world_size, C), got {tuple(mean.shape)} and {tuple(invstd.shape)}")
    n = counts.to(mean.dtype).reshape(-1, 1)
    total = n.sum(dim=0)
    global_mean = (n * mean).sum(dim=0) / total
    var = 1.0 / (invstd * invstd) - eps
    diff = mean - global_mean
    var_n = (n * (var + diff * diff)).sum(dim=0)  # the total sum of squared deviations
    _update_running(running_mean, global_mean, momentum)
    _update_running(running_var, var_n / (total - 1), momentum)
    return global_mean, (var_n / total + eps).rsqrt()


def batch_norm_gather_stats(input: Tensor, mean: Tensor, invstd: Tensor,  # noqa: A002
                            running_mean: Tensor | None, running_var: Tensor | None,
                            momentum: float, eps: float, count: int) -> tuple[Tensor, Tensor]:
    """:func:`batch_norm_gather_stats_with_counts` where every process has ``count``
    elements per channel."""
    counts = mean.new_full((mean.shape[0],), float(count))
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean,
                                               running_var, momentum, eps, counts)


def batch_norm_elemt(input: Tensor, weight: Tensor | None,  # noqa: A002 - torch's names
                     bias: Tensor | None, mean: Tensor, invstd: Tensor, eps: float) -> Tensor:
    """``(input - mean) * invstd * weight + bias`` per channel (``eps`` is already in
    ``invstd``; torch takes and ignores it)."""
    _axes(input, "batch_norm_elemt")
    out = (input - _channel(mean, input)) * _channel(invstd, input)
    if weight is not None:
        out = out * _channel(weight, input)
    if bias is not None:
        out = out + _channel(bias, input)
    return out.to(input.dtype)


def batch_norm_backward_reduce(grad_out: Tensor, input: Tensor,  # noqa: A002
                               mean: Tensor, invstd: Tensor, weight: Tensor | None,
                               input_g: bool, weight_g: bool, bias_g: bool
                               ) -> tuple[Any, Any, Any, Any]:
    """Per-channel ``(sum_dy, sum_dy_xmu, grad_weight, grad_bias)``: ``sum(grad_out)``,
    ``sum(grad_out * (input - mean))``, ``sum_dy_xmu * invstd`` and ``sum_dy``; each is
    None where its flag (``input_g`` for the first two) is False, as torch leaves them
    undefined."""
    axes = _axes(input, "batch_norm_backward_reduce")
    dy = _stat_input(grad_out)
    sum_dy = dy.sum(dim=axes)
    sum_dy_xmu = (dy * (_stat_input(input) - _channel(mean, input))).sum(dim=axes)
    like = weight if weight is not None else mean
    grad_weight = (sum_dy_xmu * invstd).to(like.dtype) if weight_g else None
    grad_bias = sum_dy.to(like.dtype) if bias_g else None
    if not input_g:
        return None, None, grad_weight, grad_bias
    return sum_dy, sum_dy_xmu, grad_weight, grad_bias


def batch_norm_backward_elemt(grad_out: Tensor, input: Tensor,  # noqa: A002
                              mean: Tensor, invstd: Tensor, weight: Tensor | None,
                              sum_dy: Tensor, sum_dy_xmu: Tensor, count: Tensor) -> Tensor:
    """The input gradient from the all-reduced sums over all ``count.sum()`` elements:
    ``(grad_out - mean_dy - (input - mean) * invstd**2 * mean_dy_xmu) * invstd * weight``."""
    _axes(input, "batch_norm_backward_elemt")
    total = count.sum().to(sum_dy.dtype)
    mean_dy = _channel(sum_dy / total, input)
    mean_dy_xmu = _channel(sum_dy_xmu / total, input)
    scale = _channel(invstd, input)
    xmu = _stat_input(input) - _channel(mean, input)
    grad = (_stat_input(grad_out) - mean_dy - xmu * (scale * scale) * mean_dy_xmu) * scale
    if weight is not None:
        grad = grad * _channel(weight, input)
    return grad.to(input.dtype)


def batch_norm_update_stats(input: Tensor, running_mean: Tensor | None,  # noqa: A002
                            running_var: Tensor | None, momentum: float
                            ) -> tuple[Tensor, Tensor]:
    """Per-channel ``(mean, biased var)`` of ``input``; updates ``running_mean`` and
    ``running_var`` (with the unbiased variance) in place. The results have the running
    statistics' dtype where they are given (torch's mixed-precision rule), else input's."""
    axes = _axes(input, "batch_norm_update_stats")
    x = _stat_input(input)
    mean = x.mean(dim=axes)
    centered = x - _channel(mean, x)
    var = (centered * centered).mean(dim=axes)
    count = input.numel() // input.shape[1]
    _update_running(running_mean, mean, momentum)
    # one value per channel: 0/0, a nan running variance, as torch
    _update_running(running_var, var * float(count) / float(count - 1), momentum)
    like = running_mean if running_mean is not None else input
    return mean.to(like.dtype), var.to(like.dtype)
