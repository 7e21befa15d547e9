"""ATen private operators that torch's decompositions and FX graphs call often (the
softmax pair with their backward formulas, ``_to_copy``, ``_unsafe_view``, ``index.Tensor``,
``alias``, ``_pin_memory``):
each the public op it stands for, with the schema's arguments (see
:mod:`omnitensor.aten.kernels`)."""
from __future__ import annotations

from typing import Any, Sequence

import omnitensor as _ot
from ..core.tensor import Tensor
from .kernels import kernel

__all__ = ["softmax_", "log_softmax_", "log_softmax_backward_data", "to_copy", "unsafe_view",
           "index", "alias", "pin_memory_"]


@kernel("_softmax")
def softmax_(self: Tensor, dim: int, half_to_float: bool) -> Tensor:
    """softmax along ``dim`` (in float32 when ``half_to_float``)."""
    return _ot.softmax(self, dim, dtype=_ot.float32 if half_to_float else None)


@kernel("_log_softmax")
def log_softmax_(self: Tensor, dim: int, half_to_float: bool) -> Tensor:
    """log_softmax along ``dim`` (in float32 when ``half_to_float``)."""
    return _ot.log_softmax(self, dim, dtype=_ot.float32 if half_to_float else None)


@kernel("_log_softmax_backward_data")
def log_softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int,
                              input_dtype: Any) -> Tensor:
    """The gradient of log_softmax's input from its output: ``g - exp(y) * sum(g, dim)``."""
    if grad_output.dtype != input_dtype:
        raise RuntimeError(f"expected scalar type {input_dtype} but found "
                           f"{grad_output.dtype}")
    return grad_output - output.exp() * grad_output.sum(dim, keepdim=True)


@kernel("_to_copy")
def to_copy(self: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
            pin_memory: bool | None = None, non_blocking: bool = False,
            memory_format: Any = None) -> Tensor:
    """A copy of ``self``, on ``device`` and of ``dtype`` when given."""
    return self.to(device=device if device is not None else self.device,
                   dtype=dtype if dtype is not None else self.dtype, copy=True)


@kernel("_unsafe_view")
def unsafe_view(self: Tensor, size: Sequence[int]) -> Tensor:
    """``self.view(size)``."""
    return self.view(list(size))


@kernel("index", "Tensor")
@kernel("_unsafe_index", "Tensor")
def index(self: Tensor, indices: Sequence[Tensor | None]) -> Tensor:
    """``self[indices]``, a None index taking its whole dimension."""
    return self[tuple(slice(None) if i is None else i for i in indices)]


@kernel("alias")
def alias(self: Tensor) -> Tensor:
    """A view of all of ``self`` (same storage, same shape)."""
    return self.view(list(self.shape))


@kernel("_pin_memory")
def pin_memory_(self: Tensor, device: Any = None) -> Tensor:
    """``self.pin_memory(device)``: a copy in page-locked host memory."""
    return self.pin_memory(device) if device is not None else self.pin_memory()
