"""ATen's private batch-norm kernels and antialiased bilinear upsampling, over omnitensor's
public differentiable ops (see :mod:`omnitensor.aten.kernels`)."""
from __future__ import annotations

from typing import Any, Sequence

import omnitensor as _ot
from ..autograd import no_grad
from ..core.tensor import Tensor
from ..nn.functional.interpolate import interpolate, resample
from .kernels import kernel

__all__ = ["native_batch_norm_legit", "batch_norm_with_update", "upsample_bilinear2d_aa"]

_LOW = ("float16", "bfloat16")


def _per_channel(t: Tensor, ndim: int) -> Tensor:
    return t.reshape((1, -1) + (1,) * (ndim - 2))


def _batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
                running_mean: Tensor | None, running_var: Tensor | None, training: bool,
                momentum: float, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """(output, the batch's mean, its 1/sqrt(var + eps)): the statistics over every
    dimension but the channels (1), the running ones updated in place when training;
    in evaluation the running statistics normalize and the saved ones are empty."""
    stats_dtype = running_mean.dtype if running_mean is not None else input.dtype
    x = input.float() if input.dtype.name in _LOW else input
    dims = tuple(d for d in range(input.ndim) if d != 1)
    if training:
        mean = x.mean(dims)
        var = x.var(dims, correction=0)
        if running_mean is not None and running_var is not None:
            n = input.numel() // input.shape[1]
            with no_grad():
                running_mean.mul_(1 - momentum).add_(mean.detach().to(running_mean.dtype)
                                                     * momentum)
                unbiased = var.detach() * (n / max(n - 1, 1))
                running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype)
                                                    * momentum)
        rstd = (var + eps).rsqrt()
        centre, scale = mean, rstd
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("_native_batch_norm_legit: running_mean and running_var "
                               "must be defined in evaluation mode")
        centre = running_mean.to(x.dtype)
        scale = (running_var.to(x.dtype) + eps).rsqrt()
    y = (x - _per_channel(centre, x.ndim)) * _per_channel(scale, x.ndim)
    if weight is not None:
        y = y * _per_channel(weight.to(x.dtype), x.ndim)
    if bias is not None:
        y = y + _per_channel(bias.to(x.dtype), x.ndim)
    y = y.to(input.dtype)
    if not training:
        empty = _ot.empty((0,), dtype=stats_dtype, device=input.device)
        return y, empty, empty.clone()
    return y, mean.to(stats_dtype), rstd.to(stats_dtype)


@kernel("_native_batch_norm_legit", "", torch_names=("_native_batch_norm_legit",))
def native_batch_norm_legit(input: Tensor, weight: Tensor | None,  # noqa: A002
                            bias: Tensor | None, *args: Any) -> tuple[Tensor, Tensor, Tensor]:
    """``(input, weight, bias, running_mean, running_var, training, momentum, eps)`` or,
    the ``no_stats`` overload, ``(input, weight, bias, training, momentum, eps)``."""
    if len(args) == 3:
        return _batch_norm(input, weight, bias, None, None, *args)
    return _batch_norm(input, weight, bias, *args)


@kernel("_native_batch_norm_legit", "default")
def _legit(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
           running_mean: Tensor, running_var: Tensor, training: bool, momentum: float,
           eps: float) -> tuple[Tensor, Tensor, Tensor]:
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                       eps)


@kernel("_native_batch_norm_legit", "no_stats")
def _legit_no_stats(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
                    training: bool, momentum: float, eps: float
                    ) -> tuple[Tensor, Tensor, Tensor]:
    return _batch_norm(input, weight, bias, None, None, training, momentum, eps)


@kernel("_batch_norm_with_update")
def batch_norm_with_update(input: Tensor, weight: Tensor | None,  # noqa: A002
                           bias: Tensor | None, running_mean: Tensor, running_var: Tensor,
                           momentum: float, eps: float
                           ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Training batch norm updating the running statistics: ``(output, mean, rstd,
    reserve)``, the reserve an empty uint8 tensor (cuDNN's workspace elsewhere)."""
    out = _batch_norm(input, weight, bias, running_mean, running_var, True, momentum, eps)
    reserve = _ot.empty((0,), dtype=_ot.uint8, device=input.device)
    return out + (reserve,)


@kernel("_upsample_bilinear2d_aa", "")
def upsample_bilinear2d_aa(input: Tensor, output_size: Any, align_corners: bool,  # noqa: A002
                           *args: Any, **kwargs: Any) -> Tensor:
    """Either overload, told apart by its arguments as torch's packet does: ``(self,
    output_size, align_corners, scales_h=None, scales_w=None)`` or ``vec``'s ``(input,
    output_size, align_corners, scale_factors)``."""
    if "scale_factors" in kwargs or output_size is None or \
            (args and isinstance(args[0], (list, tuple))):
        return _upsample_aa_vec(input, output_size, align_corners, *args, **kwargs)
    return _upsample_aa(input, output_size, align_corners, *args, **kwargs)


@kernel("_upsample_bilinear2d_aa", "default")
def _upsample_aa(self: Tensor, output_size: Sequence[int], align_corners: bool,
                 scales_h: float | None = None, scales_w: float | None = None) -> Tensor:
    """Antialiased bilinear resampling to ``output_size``; ``scales_*`` (when given) set
    the source coordinates, as interpolate's scale factors do."""
    return resample(self, tuple(int(v) for v in output_size), (scales_h, scales_w),
                            "bilinear", bool(align_corners), antialias=True)


@kernel("_upsample_bilinear2d_aa", "vec")
def _upsample_aa_vec(input: Tensor, output_size: Sequence[int] | None,  # noqa: A002
                     align_corners: bool, scale_factors: Sequence[float] | None) -> Tensor:
    return interpolate(input, size=None if output_size is None else list(output_size),
                               scale_factor=None if output_size is not None else
                               list(scale_factors or ()), mode="bilinear",
                               align_corners=align_corners, antialias=True)
