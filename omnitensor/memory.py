"""``omnitensor.memory``: torch.cuda's memory functions for every device type.

The figures are each backend's own pool counters (``Backend.memory_stats``):

========  ==============================================================================
opencl    pyopencl's memory pool: bytes held by tensors, bytes held from the driver
          (cached blocks included), and both peaks
sycl      omnitensor's USM pool (results of >= 256 KiB; smaller ones come from dpnp and are
          not counted), and both peaks
cuda      CuPy's memory pool; CuPy tracks no peak, so ``max_memory_*`` are the current
          figures there (said in ``memory_summary``)
cpu       no pool (NumPy allocates from the C heap): allocated and reserved are the bytes
          of the distinct buffers live cpu tensors hold, counted when asked
          (``core/host_memory.py``); no peak
========  ==============================================================================

``device`` is a device, a device string, an index of the default device's type (torch's
``memory_allocated(0)``) or None for the default device. ``omnitensor.cuda.*`` are the same
functions for CUDA devices.
"""
from __future__ import annotations

from typing import Any

__all__ = ["memory_stats", "memory_allocated", "memory_reserved", "max_memory_allocated",
           "max_memory_reserved", "reset_peak_memory_stats", "reset_max_memory_allocated",
           "empty_cache", "memory_summary"]


def _device(device: Any) -> Any:
    from .core.device import device as as_device, get_default_device
    if device is None:
        return get_default_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return as_device(f"{get_default_device().type}:{device}")
    return as_device(device)


def memory_stats(device: Any = None) -> dict[str, int]:
    """The pool counters of ``device`` (bytes); the ``peak_*`` entries only where the
    pool tracks peaks."""
    dev = _device(device)
    stats = {"allocated_bytes": 0, "reserved_bytes": 0}
    if dev.type == "cpu":  # no pool to ask: count what the live tensors hold
        from .core.host_memory import live_cpu_tensor_bytes
        held = live_cpu_tensor_bytes()
        stats.update(allocated_bytes=held, reserved_bytes=held)
    stats.update(dev.backend.memory_stats(dev.index))
    return stats


def memory_allocated(device: Any = None) -> int:
    """Bytes held by live tensors in ``device``'s pool."""
    return int(memory_stats(device)["allocated_bytes"])


def memory_reserved(device: Any = None) -> int:
    """Bytes the pool holds from the driver: allocated plus cached."""
    return int(memory_stats(device)["reserved_bytes"])


def max_memory_allocated(device: Any = None) -> int:
    """The peak of :func:`memory_allocated` since the pool was created or the last
    :func:`reset_peak_memory_stats` (the current figure where the pool tracks no peak)."""
    s = memory_stats(device)
    return int(s.get("peak_allocated_bytes", s["allocated_bytes"]))


def max_memory_reserved(device: Any = None) -> int:
    """The peak of :func:`memory_reserved` (as :func:`max_memory_allocated`)."""
    s = memory_stats(device)
    return int(s.get("peak_reserved_bytes", s["reserved_bytes"]))


def reset_peak_memory_stats(device: Any = None) -> None:
    """Restart the peaks from the current figures."""
    dev = _device(device)
    dev.backend.reset_peak_memory_stats(dev.index)


reset_max_memory_allocated = reset_peak_memory_stats


def empty_cache(device: Any = None) -> None:
    """Give cached blocks no tensor uses back to the driver (every loaded backend when
    ``device`` is None, as ``omnitensor.empty_cache``)."""
    if device is None:
        from .backends.registry import loaded_backends
        for be in loaded_backends().values():
            be.empty_cache(None)
        return
    dev = _device(device)
    dev.backend.empty_cache(dev.index)


def _fmt(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return str(n)


_NOTES = {
    "cpu": "no pool: the bytes live cpu tensors hold, each buffer once; no peak",
    "cuda": "CuPy's memory pool tracks no peak: peaks show the current figures",
    "sycl": "results under 256 KiB come from dpnp directly and are not counted",
}


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    """A readable table of :func:`memory_stats` (torch's ``memory_summary``)."""
    dev = _device(device)
    s = memory_stats(dev)
    peaks = "peak_allocated_bytes" in s
    rows = [("allocated (held by tensors)", s["allocated_bytes"],
             s.get("peak_allocated_bytes")),
            ("reserved (held from the driver)", s["reserved_bytes"],
             s.get("peak_reserved_bytes"))]
    width = 34
    lines = [f"omnitensor memory summary: {dev}", "-" * 64,
             f"{'':<{width}}{'current':>14}{'peak':>14}"]
    for name, cur, peak in rows:
        lines.append(f"{name:<{width}}{_fmt(cur):>14}{_fmt(peak) if peak is not None else '-':>14}")
    if not abbreviated:
        for k, v in sorted(s.items()):
            if k not in ("allocated_bytes", "reserved_bytes", "peak_allocated_bytes",
                         "peak_reserved_bytes"):
                lines.append(f"{k:<{width}}{_fmt(v):>14}")
    note = _NOTES.get(dev.type)
    if note or not peaks:
        lines.append(f"note: {note or 'this pool tracks no peak'}")
    return "\n".join(lines)
