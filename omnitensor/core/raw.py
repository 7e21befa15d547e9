"""Supported low-level access for libraries that fuse ops (``nn``, ``optim``, ``dist``).

A fused op (an optimizer step, im2col) may run backend primitives directly on a tensor's
backend array instead of going through the op table, as torch's ``foreach`` kernels do.
These helpers are the contract for that, so libraries do not reach into private fields:
the caller is responsible for dtypes/shapes (the backend contract in ``backends/base.py``)
and must not use them on tensors that need a graph (check ``requires_grad`` first).
"""
from __future__ import annotations

from typing import Any

from .device import Device
from .dtypes import DType, as_dtype
from .tensor import Tensor, _make


def data(t: Tensor) -> Any:
    """The backend array behind ``t`` (a NumPy/CuPy/dpnp array or an OpenCL CLArray)."""
    return t._data


def backend(t: Tensor) -> Any:
    """The backend object that owns ``t``'s device."""
    return t._device.backend


def wrap(array: Any, like: Tensor | None = None, *, device: Device | None = None,
         dtype: DType | None = None) -> Tensor:
    """A new tensor (no graph) around a backend array, on ``like``'s device (or
    ``device``) with ``like``'s dtype (or ``dtype``, default: the array's)."""
    dev = device if device is not None else like._device
    d = dtype if dtype is not None else (like._dtype if like is not None and
                                         like._dtype.np == array.dtype else
                                         as_dtype(array.dtype))
    return _make(array, dev, d)


def mark_modified(t: Tensor) -> None:
    """Record that ``t``'s memory was written in place (bumps the version counter that
    autograd uses to detect in-place changes to saved tensors)."""
    t._bump_version()
