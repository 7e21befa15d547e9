"""Setting kernel arguments and enqueueing, with as little Python as possible per call.

``Kernel.set_arg`` costs ~20 us per numpy scalar in pyopencl 2026.1 (it tries several
argument types in turn), which alone would exceed our per-op budget. pyopencl's generated
invokers use ``Kernel._set_arg_multi`` (memory objects) and ``_set_arg_buf_multi`` (raw
bytes of by-value arguments), ~0.5 us for a whole argument list; we call them directly and
fall back to the public ``set_arg`` if a future pyopencl drops them.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pyopencl as cl
from pyopencl import _cl

_FAST = hasattr(cl.Kernel, "_set_arg_multi") and hasattr(cl.Kernel, "_set_arg_buf_multi")
_enqueue = _cl.enqueue_nd_range_kernel
_Kernel = cl.Kernel

#: While a profiler records device time (``profiling.OpenCLDeviceTimer``), a list that
#: :func:`run` appends ``(queue, kernel, event)`` to; None otherwise (one global read).
recording: list | None = None


def set_mem(k: Any, pairs: tuple) -> None:
    """Set memory-object arguments: ``pairs = (index, buffer, index, buffer, ...)``."""
    if _FAST:
        k._set_arg_multi(pairs)
    else:  # pragma: no cover - older/newer pyopencl without the private fast path
        for i in range(0, len(pairs), 2):
            k.set_arg(pairs[i], pairs[i + 1])


def set_bytes(k: Any, pairs: tuple) -> None:
    """Set by-value arguments from raw bytes: ``pairs = (index, bytes, ...)``."""
    if _FAST:
        k._set_arg_buf_multi(pairs)
    else:  # pragma: no cover
        for i in range(0, len(pairs), 2):
            k.set_arg(pairs[i], np.frombuffer(pairs[i + 1], dtype=np.uint8))


def set_null(k: Any, index: int) -> None:
    """Set a pointer argument the kernel will not dereference to NULL (PoCL then tracks
    no buffer for it, which makes the enqueue cheaper)."""
    k._set_arg_null(index) if _FAST else k.set_arg(index, None)


def run(queue: Any, k: Any, gsize: tuple, lsize: tuple | None) -> Any:
    """Enqueue ``k`` (positional call: pyopencl's binding is slow with keywords). A kernel
    of another runtime (the sycl backend's ``SyclKernel``, which implements the three
    argument setters above) enqueues itself on its own queue."""
    if k.__class__ is not _Kernel:
        return k.enqueue(gsize, lsize)
    try:
        # pyopencl's stubs declare fewer positional parameters than its binding takes
        evt = _enqueue(queue, k, gsize, lsize, None, None, False, False)  # type: ignore[call-arg]
    except cl.Error as e:
        raise launch_error(queue, k, e) from None
    if recording is not None:
        recording.append((queue, k, evt))
    return evt


def launch_error(queue: Any, k: Any, err: Exception) -> Exception:
    """An omnitensor error for a failed enqueue, naming kernel, device and the cause."""
    from ...errors import BackendError
    dev = queue.device
    name = getattr(k, "function_name", "?")
    what = str(err)
    if "OUT_OF_RESOURCES" in what or "MEM_OBJECT_ALLOCATION" in what or \
            "OUT_OF_HOST_MEMORY" in what:
        from ...errors import out_of_memory
        from .device import cl_devices
        where = next((f"opencl:{i}" for i, d in enumerate(cl_devices()) if d == dev),
                     f"OpenCL device {dev.name.strip()}")
        return out_of_memory(where, None,
                             why=f"running kernel {name}: {what}")
    return BackendError(f"OpenCL kernel {name} failed on {dev.name.strip()}: {what}")


def run1d(st: Any, k: Any, n: int, local: int = 64) -> Any:
    """Enqueue ``k`` over ``n`` work-items (kernels guard ``i >= n``) with a fixed local
    size: PoCL compiles a kernel once per local size, so never let the driver pick one."""
    return run(st.queue, k, (-(-n // local) * local,), (local,))


def run_items(st: Any, k: Any, n: int) -> Any:
    """Enqueue ``k`` over ``n`` independent work-items (kernels guard ``i >= n``): local
    size 1 on a CPU device, where each work-item is a plain loop PoCL vectorizes, else
    groups of 64 (n rounded up)."""
    if st.is_cpu:
        return run(st.queue, k, (n,), (1,))
    return run(st.queue, k, (-(-n // 64) * 64,), (64,))
