"""Turning every backend's out-of-memory failure into one ``OutOfMemoryError``.

Backends that manage their own memory (the OpenCL and SYCL pools) raise
:class:`~omnitensor.errors.OutOfMemoryError` themselves. What reaches core raw is translated
here, in the one place core translates backend exceptions (``_backend_failure``) and where
tensors are created: NumPy's ``MemoryError`` (cpu), dpctl's ``USMAllocationError`` (a dpnp
result allocation on sycl), CuPy's ``OutOfMemoryError``, an OpenCL allocation status. Core
never imports a vendor library: exceptions are recognised by type name and message.
"""
from __future__ import annotations

from typing import Any

from ..backends import host_memory
from ..errors import OutOfMemoryError, out_of_memory

__all__ = ["is_out_of_memory", "translate", "nbytes", "out_of_memory"]

_OOM_TYPES = frozenset(("MemoryError", "_ArrayMemoryError", "USMAllocationError",
                        "OutOfMemoryError"))
_OOM_STATUS = ("MEM_OBJECT_ALLOCATION_FAILURE", "OUT_OF_HOST_MEMORY", "OUT_OF_RESOURCES",
               "cudaErrorMemoryAllocation")


def is_out_of_memory(err: BaseException) -> bool:
    """Whether ``err`` is some library's way of saying an allocation failed."""
    if isinstance(err, (MemoryError, OutOfMemoryError)):
        return True
    if any(t.__name__ in _OOM_TYPES for t in type(err).__mro__):
        return True
    text = str(err)
    return any(s in text for s in _OOM_STATUS)


def translate(err: BaseException, dev: Any, requested: int | None = None) -> OutOfMemoryError:
    """The OutOfMemoryError for ``err`` (already one: returned as is) on device ``dev``;
    ``requested`` bytes when the caller knows them (NumPy's error carries its own)."""
    if isinstance(err, OutOfMemoryError):
        return err
    if requested is None:
        requested = getattr(err, "_total_size", None)  # NumPy's _ArrayMemoryError
    try:
        stats = dev.backend.memory_stats(dev.index)
    except Exception:  # noqa: BLE001 - a message must not fail for want of statistics
        stats = {}
    host = dev.type == "cpu"
    return out_of_memory(str(dev), requested, allocated=stats.get("allocated_bytes"),
                         reserved=stats.get("reserved_bytes"),
                         available=host_memory.available_bytes() if host else None,
                         why=f"{type(err).__name__}: {err}")


def nbytes(shape: tuple, itemsize: int) -> int:
    n = itemsize
    for s in shape:
        n *= int(s)
    return n
