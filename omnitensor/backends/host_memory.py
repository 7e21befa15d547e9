"""How much host memory this process can still get, for devices whose memory is the host's.

Why: an OpenCL CPU device (PoCL) advertises most of the machine's RAM as its global memory
and allocates lazily; under an address-space limit (``ulimit -v``, ``RLIMIT_AS``) or a
cgroup memory limit its allocation fails deep inside the driver and the process segfaults
instead of returning an error. So backends whose "device" memory is host memory check a
large allocation against :func:`available_bytes` first and raise ``OutOfMemoryError``.

The answer is the smallest of: the kernel's ``MemAvailable``, the headroom under
``RLIMIT_AS`` (limit minus this process's current virtual size), and the headroom under a
cgroup v2 ``memory.max``. Each read is a few microseconds; callers check only allocations
above a threshold.
"""
from __future__ import annotations

import os

try:
    import resource
except ImportError:  # not POSIX
    resource = None  # type: ignore[assignment]

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_UNLIMITED = 1 << 62


def _mem_available() -> int:
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return _UNLIMITED


def _address_space_headroom() -> int:
    if resource is None:
        return _UNLIMITED
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft == resource.RLIM_INFINITY or soft < 0:
        return _UNLIMITED
    try:
        with open("/proc/self/statm", "rb") as f:
            vsize = int(f.read().split()[0]) * _PAGE
    except (OSError, ValueError, IndexError):
        return _UNLIMITED
    return max(0, soft - vsize)


def _cgroup_headroom() -> int:
    try:
        with open("/sys/fs/cgroup/memory.max", "rb") as f:
            limit = f.read().strip()
        if limit == b"max":
            return _UNLIMITED
        with open("/sys/fs/cgroup/memory.current", "rb") as f:
            current = int(f.read().strip())
        return max(0, int(limit) - current)
    except (OSError, ValueError):
        return _UNLIMITED


def available_bytes() -> int:
    """Bytes of host memory this process can still allocate (a large number when no limit
    can be found)."""
    return min(_mem_available(), _address_space_headroom(), _cgroup_headroom())


def address_space_headroom() -> int:
    """Headroom under ``RLIMIT_AS`` alone (cheap: one ``getrlimit``, one small read)."""
    return _address_space_headroom()
