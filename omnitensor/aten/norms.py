"""ATen's private batch-norm kernels, and the norms whose ATen schemas carry a cuDNN switch
(``layer_norm``, ``group_norm``), over omnitensor's public differentiable ops (see
:mod:`omnitensor.aten.kernels`)."""
from __future__ import annotations

from typing import Any, Sequence

import omnitensor as _ot
from ..core.tensor import Tensor
from ..nn import functional as F
from .kernels import kernel

__all__ = ["native_batch_norm_legit", "batch_norm_with_update", "layer_norm", "group_norm"]

_LOW = ("float16", "bfloat16")


def _batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
                running_mean: Tensor | None, running_var: Tensor | None, training: bool,
                momentum: float, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """(output, the batch's mean, its 1/sqrt(var + eps)): ``F.batch_norm``'s output and
    running-statistics update, with the saved statistics ATen returns besides (empty in
    evaluation, where the running statistics normalize)."""
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("_native_batch_norm_legit: running_mean and running_var "
                           "must be defined in evaluation mode")
    y = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    stats_dtype = running_mean.dtype if running_mean is not None else input.dtype
    if not training:
        empty = _ot.empty((0,), dtype=stats_dtype, device=input.device)
        return y, empty, empty.clone()
    x = input.float() if input.dtype.name in _LOW else input
    dims = tuple(d for d in range(input.ndim) if d != 1)
    mean = x.mean(dims)
    rstd = (x.var(dims, correction=0) + eps).rsqrt()
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


@kernel("layer_norm")
def layer_norm(input: Tensor, normalized_shape: Sequence[int],  # noqa: A002
               weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-5,
               cudnn_enable: bool = True) -> Tensor:
    """``F.layer_norm`` (the cuDNN switch has nothing to choose here)."""
    return F.layer_norm(input, list(normalized_shape), weight, bias, eps)


@kernel("group_norm")
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5,
               cudnn_enabled: bool = True) -> Tensor:
    """``F.group_norm`` (the cuDNN switch has nothing to choose here)."""
    return F.group_norm(input, num_groups, weight, bias, eps)
