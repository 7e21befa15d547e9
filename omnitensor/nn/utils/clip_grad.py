"""Gradient clipping: ``clip_grad_norm_`` (= ``get_total_norm`` then
``clip_grads_with_norm_``, as torch splits it), ``clip_grad_value_``."""
from __future__ import annotations

import math
import warnings
from typing import Iterable

from ...core.graph import no_grad_ctx
from ...core.ops.creation import tensor
from ...core.ops.join import stack
from ...core.tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


def _as_list(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def get_total_norm(tensors: Tensor | Iterable[Tensor], norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The ``norm_type`` norm of all tensors together (as if concatenated); ``foreach``
    (torch's choice of fused kernels) changes nothing here."""
    ts = _as_list(tensors)
    norm_type = float(norm_type)
    if not ts:
        return tensor(0.0)
    with no_grad_ctx():
        dev = ts[0].device
        if norm_type == math.inf:
            norms = [t.detach().abs().amax().to(dev) for t in ts]
            total = stack(norms).amax()
        else:
            # the norm of the per-tensor norms is the norm of the concatenation
            norms = [t.detach().norm(norm_type).to(dev) for t in ts]
            total = stack(norms).norm(norm_type)
    if error_if_nonfinite and not bool(total.isfinite().item()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           f"`parameters` is non-finite, so it cannot be clipped. To disable "
                           f"this error and scale the gradients by the non-finite norm "
                           f"anyway, set `error_if_nonfinite=False`")
    return total


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Scale the gradients in place so that their total norm is at most ``max_norm``;
    returns the total norm before clipping (a 0-d tensor on the first gradient's device).
    The scale stays on the device (no host sync), as torch does."""
    params = _as_list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grads_with_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                          total_norm: Tensor, foreach: bool | None = None) -> None:
    """Scale the gradients in place by ``max_norm / (total_norm + 1e-6)``, clamped to 1
    (``total_norm`` computed by the caller, e.g. :func:`get_total_norm` across ranks)."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad_ctx():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device).to(g.dtype))


def clip_grad_norm(parameters: Tensor | Iterable[Tensor], max_norm: float,
                   norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """Deprecated name of :func:`clip_grad_norm_` (torch warns the same way)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every gradient element into ``[-clip_value, clip_value]`` in place."""
    c = float(clip_value)
    with no_grad_ctx():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(-c, c)
