"""Pinned (page-locked) host memory, torch's ``Tensor.pin_memory()`` / ``is_pinned()``.

torch pins a host tensor so that an accelerator copies it faster and asynchronously; its
CPU-only build refuses (there is no pinned allocator without an accelerator). Here the
allocator is the accelerator backend's ``pinned_empty`` hook (``backends/base.py``): CUDA
(CuPy's ``cupyx.empty_pinned``) has one; NumPy, OpenCL and SYCL on this machine's
runtimes do not, so ``pin_memory()`` returns a contiguous copy of the tensor (what torch
returns for a tensor not yet pinned, in ordinary host memory) and ``is_pinned()`` stays
False: every omnitensor device copies from ordinary host memory.
"""
from __future__ import annotations

from typing import Any, Callable

from .tensor import Tensor

__all__ = ["pinned_allocator", "pin_memory", "is_pinned"]


def pinned_allocator(device: Any = None) -> Callable[..., Any] | None:
    """The ``pinned_empty(shape, numpy_dtype)`` hook of the backend that pins for
    ``device`` (default: the accelerator, ``core/accelerators.py``), or None when it has
    none (or there is no accelerator)."""
    from ..backends import registry
    if device is None:
        from .accelerators import accelerator_type
        kind = accelerator_type()
        if kind is None:
            return None
    else:
        from .device import device as _device
        kind = _device(device).type  # a clear DeviceError for a device not here
    if kind == "cpu":
        return None
    backend, _why = registry.try_backend(kind)
    return None if backend is None else backend.hook("pinned_empty")


def is_pinned(self: Tensor, device: Any = None) -> bool:
    """torch's ``is_pinned()``: whether this tensor's memory is page-locked (made by
    :func:`pin_memory` with a pinning backend; a view of such a tensor is too)."""
    base = self._base
    return bool((self if base is None else base).__dict__.get("_pinned", False))


def pin_memory(self: Tensor, device: Any = None) -> Tensor:
    """torch's ``pin_memory()``: this cpu tensor copied to pinned host memory (itself when
    already pinned); where no backend pins (see the module doc), a contiguous copy in
    ordinary host memory. Differentiable, as a copy."""
    if self.device.type != "cpu" or self.layout.name != "strided":
        raise RuntimeError(f"cannot pin '{self.device.type}' tensor of layout {self.layout}: "
                           f"only dense CPU tensors can be pinned")
    if is_pinned(self):
        return self
    alloc = pinned_allocator(device)
    out = self.clone(memory_format=None)
    if not out.is_contiguous():
        out = out.contiguous()
    if alloc is not None:
        data = alloc(tuple(out.shape), out._data.dtype)
        data[...] = out._data
        out._data = data
        out.__dict__["_pinned"] = True
    return out
