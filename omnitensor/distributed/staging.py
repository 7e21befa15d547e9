"""Host buffers for a transport that reads and writes host memory (MPI without device
support).

A tensor of a backend with ``host_arrays`` (the cpu backend's NumPy arrays) *is* the
buffer MPI uses when it is C-contiguous and writable: no copy either way (the benchmark
target depends on it). Device tensors, and cpu
tensors that are strided views, go through a C-contiguous host copy; results are written
back with the backend's ``assign_from_host`` into the tensor's own storage, so views and
aliases of it see the new values, as after torch's in-place collectives.

The device's queue is drained before MPI reads a buffer of an ``asynchronous`` backend:
``to_numpy`` waits for the kernels that produce the array, and we also call
``synchronize`` explicitly because a backend whose ``to_numpy`` read a snapshot early would
otherwise hand MPI stale values.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["read_buffer", "write_buffer", "bump"]


def _host(t: Any) -> tuple[np.ndarray, bool]:
    """(host array holding t's values, whether it is t's own memory)."""
    dev = t._device
    be = dev.backend
    if be.host_arrays:
        arr = t._data
        if arr.flags.c_contiguous and arr.flags.writeable:
            return arr, True
        return np.ascontiguousarray(arr), False
    if be.asynchronous:
        be.synchronize(dev.index)
    arr = be.to_numpy(t._data)
    # to_numpy may return a read-only or strided host array: MPI needs C order, writable
    if not (arr.flags.c_contiguous and arr.flags.writeable):
        arr = np.array(arr, order="C", copy=True)
    return arr, False


def read_buffer(t: Any) -> np.ndarray:
    """A C-contiguous host array with t's values, for MPI to read (never written)."""
    return _host(t)[0]


def write_buffer(t: Any, need_values: bool) -> tuple[np.ndarray, Callable[[], None] | None]:
    """A C-contiguous host array MPI may write, and the write-back to call afterwards
    (None when the array is the tensor's own memory). ``need_values``: whether MPI also
    reads the tensor's current values (in-place ops: all_reduce, broadcast's root)."""
    dev = t._device
    if dev.backend.host_arrays:
        arr = t._data
        if arr.flags.c_contiguous and arr.flags.writeable:
            return arr, None
        host = np.ascontiguousarray(arr) if need_values else np.empty(arr.shape, arr.dtype)
    elif need_values:
        host = _host(t)[0]
    else:
        host = np.empty(t.shape, t.dtype.np)
    return host, (lambda: write_back(t, host))


def write_back(t: Any, host: np.ndarray) -> None:
    """Copy ``host`` into t's storage in place (views of it see the values): straight
    from host memory, with no device temporary (``assign_from_host``)."""
    t._device.backend.assign_from_host(t._data, host)
    t._bump_version()


def bump(t: Any) -> None:
    """Mark t modified in place (its version counter), after MPI wrote its memory."""
    t._bump_version()
