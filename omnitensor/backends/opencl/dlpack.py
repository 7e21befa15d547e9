"""DLPack export of CLArrays (``Tensor.__dlpack__`` / ``__dlpack_device__`` on ``opencl``).

A device whose buffers live in host memory (a CPU device such as PoCL's, or one with
``CL_DEVICE_HOST_UNIFIED_MEMORY``) exports **zero-copy**: ``enqueue_map_buffer`` (blocking,
so every op enqueued before has run) maps the bytes the view spans, a NumPy array with the
view's shape, strides and offset is laid over the mapping, and NumPy makes the capsule (it
knows every DLPack version and the read-only/copied flags). The capsule owns that NumPy
array, whose base holds the mapping *and* the pooled buffer: neither can be unmapped or
handed to another tensor while a consumer still reads the memory. Such a device reports
``(kDLCPU, 0)``.

Any other device reports ``(kDLOpenCL, index)``. No library consumes kDLOpenCL capsules, so
it exports only a host copy, and only when the consumer asks for the host
(``dl_device=(1, 0)``) and allows a copy; otherwise it raises ``BufferError`` saying what
to do.
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pyopencl as cl

from .array import CLArray
from .memory import to_numpy

K_DL_CPU = 1
K_DL_OPENCL = 4


def host_memory(st: Any) -> bool:
    """True when the device's buffers are host memory (mapping them copies nothing)."""
    flag = getattr(st, "dlpack_host", None)
    if flag is None:
        try:
            unified = bool(st.dev.host_unified_memory)
        except cl.Error:
            unified = False
        flag = st.dlpack_host = bool(st.is_cpu or unified)
    return flag


def device(x: CLArray) -> tuple[int, int]:
    """``__dlpack_device__``: (kDLCPU, 0) for a host-memory device, else (kDLOpenCL, i)."""
    if host_memory(x.state):
        return (K_DL_CPU, 0)
    return (K_DL_OPENCL, x.state.index)


#: maps and unmaps of buffers, one at a time: PoCL fails an unmap (clEnqueueUnmapMemObject)
#: while another thread maps or unmaps the same buffer, and pyopencl raises that from the
#: mapping's destructor, where it aborts the process (``x.cpu()`` of one tensor from three
#: threads did, within 300 calls)
_MAP_LOCK = threading.Lock()


class _Mapped:
    """A NumPy array interface over mapped memory that keeps the mapping and the buffer
    alive (the base of the exported array); it unmaps under :data:`_MAP_LOCK`."""

    __slots__ = ("__array_interface__", "_keep", "_map")

    def __init__(self, view: np.ndarray, buffer: Any, memory_map: Any) -> None:
        self.__array_interface__ = view.__array_interface__
        self._keep = (view, buffer)
        self._map = memory_map

    def __del__(self) -> None:
        m = self._map
        if m is None:
            return
        self._map = None
        with _MAP_LOCK:
            try:
                m.release()
            except cl.Error:   # (the context is going away at exit)
                pass


def host_view(x: CLArray) -> np.ndarray:
    """A writable NumPy array sharing x's memory (host-memory devices only); it keeps the
    mapping and x's buffer alive. Waits for x's pending work."""
    if x.size == 0:
        return np.empty(x.shape, x.dtype)
    isz = x.dtype.itemsize
    lo = hi = x.offset
    for n, s in zip(x.shape, x.strides):
        ext = s * (n - 1)
        if ext < 0:
            lo += ext
        else:
            hi += ext
    nbytes = (hi - lo + 1) * isz
    # pyopencl's stubs type the OR of two flags as int, which its binding accepts
    flags: Any = cl.map_flags.READ | cl.map_flags.WRITE
    with _MAP_LOCK:
        mapped, _evt = cl.enqueue_map_buffer(x.state.queue, x.data, flags, lo * isz,
                                             (nbytes,), np.dtype(np.uint8), is_blocking=True)
    view = np.ndarray(x.shape, x.dtype, buffer=mapped, offset=(x.offset - lo) * isz,
                      strides=tuple(s * isz for s in x.strides))
    return np.asarray(_Mapped(view, x.data, mapped.base))


def _norm_device(dl_device: Any) -> tuple[int, int] | None:
    if dl_device is None:
        return None
    try:
        kind, index = dl_device
        return (int(kind), int(index))
    except (TypeError, ValueError):
        raise BufferError(f"dl_device must be a (device_type, device_id) pair, got "
                          f"{dl_device!r}") from None


def export(x: CLArray, *, copy: bool | None = None, dl_device: Any = None,
           max_version: Any = None) -> Any:
    """``__dlpack__``: a DLPack capsule of x (versioned when ``max_version >= (1, 0)``)."""
    own = device(x)
    want = _norm_device(dl_device)
    kw: dict[str, Any] = {}
    if max_version is not None:
        kw["max_version"] = tuple(max_version)
    if own[0] == K_DL_CPU:
        if want is not None and want != own:
            raise BufferError(f"{x.state.name} ({x.state.label}) exports host memory "
                              f"(kDLCPU); it cannot export to DLPack device {want}")
        if copy:  # NumPy copies (and flags the capsule as a copy)
            return host_view(x).__dlpack__(copy=True, **kw)
        return host_view(x).__dlpack__(**kw)
    where = f"{x.state.name} ({x.state.label})"
    if want != (K_DL_CPU, 0):
        raise BufferError(f"{where}: DLPack capsules of OpenCL device memory (kDLOpenCL) are "
                          f"not supported; request a host copy with "
                          f"__dlpack__(dl_device=(1, 0)) (numpy.from_dlpack(x, device='cpu')) "
                          f"or use .cpu() first")
    if copy is False:
        raise BufferError(f"{where}: exporting to the host (dl_device=(1, 0)) needs a copy "
                          f"of the device memory, and copy=False forbids it; pass copy=None "
                          f"or copy=True, or use .cpu() first")
    return to_numpy(x).__dlpack__(**kw)
