"""A caching allocator for result arrays on one SYCL device (what CuPy's memory pool does).

Why: dpnp gives every result a fresh USM allocation and frees it when the array dies. On
the OpenCL CPU device a fresh allocation is fresh pages: the kernel writing it first pays
the page faults, and freeing returns the pages (munmap). A 16M float32 ``a + b`` then runs
at a fifth of the speed of ``dpnp.add(a, b, out=c)`` into a warm buffer, and even a 256 KiB
result costs ~0.4 ms more. Reusing freed allocations of the same size class removes that
cost. Small arrays skip the pool: wrapping a cached block in an array costs ~50 us of
Python, more than the allocation it saves.

How: a cached ``MemoryUSMDevice`` is lent to one array through a :class:`_Lease` object
exposing ``__sycl_usm_array_interface__``; dpctl keeps the lease alive as long as the
array or any view of it lives, and the lease's ``__del__`` gives the allocation back.
Reuse is safe with asynchronous kernels: dpnp keeps every array a submitted kernel uses
alive until that kernel has finished (a host task holds the references), so a lease comes
back only after the last kernel touching its block is done; besides, dpnp makes each new
kernel on a queue depend on all unfinished ones (dpctl's ``SequentialOrderManager``, which
our arrays share: their queue compares and hashes equal to the device's queue).

The pool also removes the USM frees that used to wait (with the GIL released) between ops;
that exposed a dpnp deadlock, oneMKL VM waiting for earlier kernels while holding the GIL,
which ``sync.py`` fixes for pooled and unpooled results alike.

``OMNITENSOR_SYCL_POOL_LIMIT`` caps the idle cached bytes per device (default: an eighth
of the device memory, at most 4 GiB; ``0`` disables the pool).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from dpctl.memory import MemoryUSMDevice, USMAllocationError

from dpnp.dpnp_array import dpnp_array
from dpnp.tensor import usm_ndarray

from ... import envvars
from ...errors import out_of_memory

#: results smaller than this are left to dpnp's own allocation
MIN_BYTES = 1 << 18


def _size_class(nbytes: int) -> int:
    """Round up to 1/8 of the enclosing power of two (at most 12.5% slack), so arrays of
    nearby sizes share cached blocks."""
    step = max(4096, 1 << max(0, nbytes.bit_length() - 4))
    return -(-nbytes // step) * step


class _Lease:
    """Lends one cached allocation to an array and its views; returns it when they die."""

    __slots__ = ("mem", "pool", "__sycl_usm_array_interface__")

    def __init__(self, mem: Any, pool: "DevicePool") -> None:
        self.mem = mem
        self.pool = pool
        self.__sycl_usm_array_interface__ = mem.__sycl_usm_array_interface__

    def __del__(self) -> None:
        try:
            self.pool._release(self.mem)
        except Exception:  # noqa: BLE001 - interpreter shutdown: let dpctl free it
            pass


class DevicePool:
    """Idle device allocations of one queue, by size class. No lock: ``__del__`` may run
    from a garbage collection inside :meth:`empty`, and list append/pop are atomic
    under the GIL; ``cached`` is only an estimate for the limit."""

    def __init__(self, queue: Any, limit: int) -> None:
        self.queue = queue
        self.limit = limit
        self.cached = 0
        self.leased = 0  # bytes lent to live arrays (an estimate, like ``cached``)
        self.peak_leased = self.peak_reserved = 0  # since creation or the last reset
        self._free: dict[int, list[Any]] = {}
        self.name = "sycl"  # the backend sets "sycl:<index>" for messages

    def out_of_memory(self, nbytes: int, why: str = "USM allocation failed") -> Exception:
        """The OutOfMemoryError for a failed allocation of ``nbytes`` on this device."""
        dev = self.queue.sycl_device
        return out_of_memory(self.name, nbytes, allocated=self.leased,
                             reserved=self.leased + self.cached,
                             total=int(dev.global_mem_size), why=f"{dev.name}: {why}")

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> Any:
        """A C-contiguous dpnp array on a recycled (or new) allocation."""
        dtype = np.dtype(dtype)
        nbytes = math.prod(shape) * dtype.itemsize
        size = _size_class(nbytes)
        free = self._free.get(size)
        mem = None
        if free:
            try:
                mem = free.pop()
                self.cached -= size
            except IndexError:  # another thread took it
                mem = None
        if mem is None:
            try:
                mem = MemoryUSMDevice(size, queue=self.queue)
            except USMAllocationError:  # out of memory: give the cache back and retry
                self.empty_cache()
                try:
                    mem = MemoryUSMDevice(size, queue=self.queue)
                except USMAllocationError:
                    raise self.out_of_memory(nbytes) from None
        self.leased += size
        if self.leased > self.peak_leased:  # peaks for omnitensor.memory
            self.peak_leased = self.leased
        if self.leased + self.cached > self.peak_reserved:
            self.peak_reserved = self.leased + self.cached
        buf = MemoryUSMDevice(_Lease(mem, self))  # a view of mem that keeps the lease
        return dpnp_array._create_from_usm_ndarray(usm_ndarray(shape, dtype=dtype, buffer=buf))

    def _release(self, mem: Any) -> None:
        size = mem.nbytes
        self.leased -= size
        if self.cached + size > self.limit:
            return  # over the cap: dropping the reference frees it
        self._free.setdefault(size, []).append(mem)
        self.cached += size

    def empty_cache(self) -> None:
        """Free every idle cached allocation (``torch.cuda.empty_cache``)."""
        self._free = {}
        self.cached = 0


def default_limit(global_mem_size: int) -> int:
    return envvars.byte_count("OMNITENSOR_SYCL_POOL_LIMIT", min(global_mem_size // 8, 4 << 30))


# ------------------------------------------------------------- pooled primitive wrappers
def _real_of(dtype: np.dtype) -> np.dtype:
    return np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype


def pooled_unary(fn: Any, pool_of: Any, name: str, predicate: bool) -> Any:
    """``fn(x, out=None)`` writing large results into pooled arrays. The result dtype is
    the contract's: bool for predicates, the real dtype for abs/real/imag of complex,
    else x's dtype."""
    to_real = name in ("abs", "real", "imag")
    bool_ = np.dtype(np.bool_)

    def call(x: Any, out: Any = None) -> Any:
        if out is None and x.nbytes >= MIN_BYTES:
            d = bool_ if predicate else (_real_of(x.dtype) if to_real else x.dtype)
            out = pool_of(x).empty(x.shape, d)
        return fn(x, out=out)
    call.__name__ = name
    call.__doc__ = f"dpnp's {name}; large results go to the device's memory pool."
    return call


def pooled_binary(fn: Any, pool_of: Any, name: str, predicate: bool) -> Any:
    """``fn(a, b, out=None)`` (either operand may be a Python scalar) writing large
    results into pooled arrays; operands are already broadcast by core."""
    bool_ = np.dtype(np.bool_)
    nd = dpnp_array

    def call(a: Any, b: Any, out: Any = None) -> Any:
        if out is None:
            if isinstance(a, nd):
                x, same_shape = a, not isinstance(b, nd) or b.shape == a.shape
            else:
                x, same_shape = b, True
            if same_shape and x.nbytes >= MIN_BYTES:
                out = pool_of(x).empty(x.shape, bool_ if predicate else x.dtype)
        return fn(a, b, out=out)
    call.__name__ = name
    call.__doc__ = f"dpnp's {name}; large results go to the device's memory pool."
    return call


def fill(pool: DevicePool, shape: tuple[int, ...], value: Any, dtype: np.dtype) -> Any:
    out = pool.empty(shape, dtype)
    out[...] = value
    return out


def copy_into(pool: DevicePool, x: Any, dtype: np.dtype) -> Any:
    """A C-contiguous copy of x (a device array, or a host NumPy array: the copy from the
    host completes before this returns) converted to ``dtype`` (C casts, as astype)."""
    out = pool.empty(x.shape, dtype)
    out[...] = x
    return out

