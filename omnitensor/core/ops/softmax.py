"""softmax and log_softmax: one formula, used by ``torch.softmax``, ``Tensor.softmax`` and
``nn.functional.softmax`` (a thin face over this module) alike.

Each is a single graph node with an explicit backward (fewer nodes = less Python per step
than the composite's six); the backward is written with Tensor ops on the saved *output*, so
it is itself differentiable (double backward). A backend may add a native forward:
``backend.softmax(x, axis) -> array`` and ``backend.log_softmax(x, axis) -> array`` on its
own arrays (same dtype and shape).
"""
from __future__ import annotations

import warnings
from typing import Any

from ..dtypes import get_default_dtype
from ..graph import needs_grad, no_grad_ctx, record
from ..shape_util import int_arg, normalize_axis
from ..tensor import Tensor
from .creation import ones_like, zeros_like

__all__ = ["softmax", "log_softmax", "softmax_data"]


def softmax_dim(ndim: int, dim: Any, name: str, stacklevel: int = 4) -> int:
    """The normalised axis; ``dim=None`` is torch's legacy implicit choice, with its warning
    (``stacklevel`` 4: softmax_dim < softmax_node < the public function < its caller)."""
    if dim is None:
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the "
                      f"call to include dim=X as an argument.", UserWarning,
                      stacklevel=stacklevel)
        dim = 0 if ndim in (0, 1, 3) else 1
    return normalize_axis(dim, ndim)  # 0-d: dims -1 and 0 only (torch)


def softmax_data(x: Tensor, d: int, log: bool, ops: Any = Tensor) -> Tensor:
    """The forward values (no graph); ``ops`` is the op namespace (``core/trusted.py``:
    the trusted ops once the caller has established one device and floating dtype)."""
    if x.ndim == 0:
        return zeros_like(x) if log else ones_like(x)
    if x.numel() == 0:  # nothing to normalise (an empty axis has no maximum)
        return x.clone()
    shifted = ops.sub(x, ops.amax(x, d, True))
    e = ops.exp(shifted)
    s = ops.sum(e, d, True)
    if log:
        return ops.sub_(shifted, ops.log(s))
    return ops.div_(e, s)


def softmax_node(x: Tensor, dim: int | None, dtype: Any, log: bool) -> Tensor:
    """softmax (``log``: log_softmax) as one graph node with its closed-form backward; called
    straight from the public functions (the implicit-dim warning points at their caller)."""
    if dtype is not None:
        x = x.to(dtype)
    if x.dtype.kind not in "fc":
        x = x.to(get_default_dtype())
    if x.dtype.compute is not x.dtype:  # bfloat16: computed in float32, rounded once
        return softmax_node(x.to(x.dtype.compute), dim, None, log).to(x.dtype)
    name = "log_softmax" if log else "softmax"
    d = softmax_dim(x.ndim, dim, name)
    with no_grad_ctx():
        out = softmax_data(x, d, log)
    if needs_grad(x):
        record("LogSoftmaxBackward0" if log else "SoftmaxBackward0",
               _log_softmax_backward if log else _softmax_backward, out, (x,), (out,), dim=d)
    return out


def _softmax_backward(node: Any, g: Tensor) -> tuple:
    (y,) = node.saved_tensors
    gy = g * y
    return (gy - y * gy.sum(dim=node.dim, keepdim=True),)


def _log_softmax_backward(node: Any, g: Tensor) -> tuple:
    (y,) = node.saved_tensors
    return (g - y.exp() * g.sum(dim=node.dim, keepdim=True),)


def softmax(x: Tensor, dim: int | None = None, dtype: Any = None) -> Tensor:
    """``exp(x - max) / sum(exp(x - max))`` along ``dim`` (numerically stable); torch's
    ``softmax(input, dim, dtype=None)``: ``dim`` an int (only ``nn.functional.softmax``
    keeps the legacy implicit dim)."""
    return softmax_node(x, int_arg(dim, "dim", "softmax"), dtype, False)


def log_softmax(x: Tensor, dim: int | None = None, dtype: Any = None) -> Tensor:
    """``x - logsumexp(x)`` along ``dim`` (numerically stable); torch's
    ``log_softmax(input, dim, dtype=None)``: ``dim`` an int (as :func:`softmax`)."""
    return softmax_node(x, int_arg(dim, "dim", "log_softmax"), dtype, True)
