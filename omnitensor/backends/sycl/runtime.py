"""The SYCL runtime under the generated kernels: one device's state, its USM pool, kernels.

The OpenCL backend's kernel-driving modules (``opencl/elementwise``, ``reduce``, ``scan``,
``sort``, ``indexing``, ``gemm``, ``random``, ``memory``...) take a device *state* and
arrays whose ``data`` is a buffer; :class:`SyclState` is that state on dpctl, so the same
code (one implementation) launches the same NumPy-exact kernels on a SYCL device:

* **one in-order queue** per device (``property="in_order"``): every kernel, copy and oneMKL
  call (dpnp on views of our memory, ``library.py``) runs in submission order, so nothing
  waits on the host between them and no dependency lists are built;
* **a USM pool of our own** (:class:`USMPool`): a freed block goes back to a free list and
  the next allocation of its size class reuses it, which the in-order queue makes safe
  without waiting (any later use runs after the earlier kernels). So no per-call keep-alive
  of kernel arguments is needed: memory is released to the driver only after a queue wait
  (``empty_cache``, a deferred drop). Reused addresses also starve the vendor-runtime leak
  the soak found (Intel's ``Context::USMFree`` keeps a map entry per distinct freed address;
  ``tests/soak/sycl_leak_repro.py``);
* :class:`SyclKernel` keeps a kernel's arguments as the OpenCL launch layer sets them
  (``opencl/launch.py``: ``set_mem``/``set_bytes``/``set_null``) and submits itself with
  ``SyclQueue.submit_async``.

Measured on the Intel OpenCL CPU runtime (2 busy cores, ``benchmarks/sycl_backend.py``): a
bare ``submit_async`` of an 8-element add costs ~10-20 us, about 1.5 us per USM argument;
dpnp's add ~65-110 us, most of it Python around the same submission.
"""
from __future__ import annotations

import threading
from typing import Any

import ml_dtypes
import numpy as np

import dpctl
import dpctl.program as dpp
from dpctl.memory import MemoryUSMDevice, USMAllocationError

from ...errors import BackendError, DeviceDTypeError
from ...kernels import gemm as gemm_text
from .. import host_memory
from ..opencl.device import DeviceState
from . import build

_BF16 = np.dtype(ml_dtypes.bfloat16)
_KNOWN = frozenset(np.dtype(d) for d in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128"))
_RawArg = dpctl.RawKernelArg


def _size_class(nbytes: int) -> int:
    """Round up to 1/8 of the enclosing power of two (at most 12.5% slack, 64 B at
    least), so arrays of nearby sizes share cached blocks."""
    step = max(64, 1 << max(0, nbytes.bit_length() - 4))
    return -(-nbytes // step) * step


class Fixed:
    """A USM allocation the state owns for its life (layouts, the dummy argument)."""

    __slots__ = ("mem", "int_ptr")

    def __init__(self, mem: Any) -> None:
        self.mem = mem
        self.int_ptr = mem._pointer


class Block:
    """A pooled USM allocation lent to one array and its views; back to the pool when they
    die (the in-order queue makes its immediate reuse safe)."""

    __slots__ = ("mem", "int_ptr", "size", "pool")

    def __init__(self, mem: Any, size: int, pool: "USMPool") -> None:
        self.mem = mem
        self.int_ptr = mem._pointer
        self.size = size
        self.pool = pool

    def __del__(self) -> None:
        pool = self.pool
        if pool is not None:
            pool.release(self.mem, self.size)


class USMPool:
    """Idle device USM blocks of one queue by size class, with pyopencl's MemoryPool
    counters (``active_bytes``, ``managed_bytes``, ``free_held``). No lock: release runs
    from ``__del__``, anywhere; list append/pop are atomic under the GIL and the byte
    counts are estimates."""

    def __init__(self, queue: Any, limit: int) -> None:
        self.queue = queue
        self.limit = limit  # idle bytes kept; more are dropped (after a queue wait)
        self.active_bytes = 0
        self.held_bytes = 0
        self._free: dict[int, list[Any]] = {}
        self._drop: list[Any] = []  # over the limit: freed after the next queue wait

    @property
    def managed_bytes(self) -> int:
        return self.active_bytes + self.held_bytes

    def allocate(self, nbytes: int) -> Block:
        size = _size_class(nbytes)
        free = self._free.get(size)
        mem = None
        if free:
            try:
                mem = free.pop()
                self.held_bytes -= size
            except IndexError:  # another thread took it
                mem = None
        if mem is None:
            if len(self._drop) > 64:
                self.free_dropped()
            mem = MemoryUSMDevice(size, queue=self.queue)  # USMAllocationError: caller
        self.active_bytes += size
        return Block(mem, size, self)

    def release(self, mem: Any, size: int) -> None:
        self.active_bytes -= size
        if self.held_bytes + size > self.limit:
            self._drop.append(mem)  # a queued kernel may still use it: free after a wait
            return
        self._free.setdefault(size, []).append(mem)
        self.held_bytes += size

    def free_dropped(self) -> None:
        """Free the dropped blocks (waits for the queue first)."""
        if self._drop:
            self.queue.wait()
            self._drop = []

    def free_held(self) -> None:
        """Give every idle block back to the driver (waits for the queue first)."""
        self.queue.wait()
        self._free = {}
        self._drop = []
        self.held_bytes = 0


class SyclKernel:
    """A dpctl kernel with the argument list the OpenCL launch layer sets on it; not
    shared between threads (``program_cache.kernel`` makes one per thread)."""

    __slots__ = ("k", "args", "queue", "dummy", "function_name")

    def __init__(self, k: Any, queue: Any, dummy: Any) -> None:
        self.k = k
        self.queue = queue
        self.dummy = dummy
        self.args: list[Any] = [dummy] * int(k.num_args)
        self.function_name = k.get_function_name()

    def _set_arg_multi(self, pairs: tuple) -> None:
        args = self.args
        for i in range(0, len(pairs), 2):
            args[pairs[i]] = pairs[i + 1].mem

    def _set_arg_buf_multi(self, pairs: tuple) -> None:
        args = self.args
        for i in range(0, len(pairs), 2):
            args[pairs[i]] = _RawArg(pairs[i + 1])

    def _set_arg_null(self, index: int) -> None:
        self.args[index] = self.dummy  # never dereferenced; drops the previous buffer

    def set_arg(self, index: int, value: Any) -> None:
        """The public setter (``opencl/launch.py`` falls back to it)."""
        if value is None:
            self._set_arg_null(index)
        elif isinstance(value, np.ndarray):
            self.args[index] = _RawArg(value.tobytes())
        else:
            self.args[index] = value.mem

    def enqueue(self, gsize: tuple, lsize: tuple | None) -> Any:
        try:
            return self.queue.submit_async(self.k, self.args, list(gsize),
                                           None if lsize is None else list(lsize))
        except Exception as e:  # noqa: BLE001 - dpctl raises its own types
            raise BackendError(f"SYCL kernel {self.function_name} failed to launch on "
                               f"{self.queue.sycl_device.name}: {e}") from None


def dtype_reason(dev: Any, dtype: np.dtype) -> str | None:
    """None when the SYCL device ``dev`` computes ``dtype``, else why not (its aspect)."""
    dtype = np.dtype(dtype)
    if dtype == _BF16:
        return None
    if dtype.newbyteorder("=") not in _KNOWN:
        return f"SYCL kernels cannot hold {dtype}"
    if dtype == np.float16 and not dev.has_aspect_fp16:
        return (f"float16 needs the fp16 aspect, which {dev.name!r} lacks "
                f"(has_aspect_fp16 is False)")
    if dtype in (np.float64, np.complex128) and not dev.has_aspect_fp64:
        return (f"{dtype} needs the fp64 aspect, which {dev.name!r} lacks "
                f"(has_aspect_fp64 is False)")
    return None


class SyclState(DeviceState):
    """``sycl:index`` as the OpenCL kernel modules see a device (see the module doc)."""

    Error = (dpctl.SyclQueueCreationError, dpp.SyclProgramCompilationError,
             USMAllocationError, RuntimeError, ValueError, TypeError)
    fine_programs = True  # Intel's CPU compiler: ~0.2 s per op, ~3.5 s per family
    # dpctl's objects where DeviceState holds PyOpenCL's
    queue: Any
    pool: Any
    dummy: Any

    def __init__(self, index: int, dev: Any, pool_limit: int) -> None:
        # not DeviceState.__init__: that one opens a PyOpenCL context
        self.index = index
        self.dev = dev
        self.label = f"{dev.name} (SYCL {dev.backend.name})"
        self.name = f"sycl:{index}"
        self.queue = dpctl.SyclQueue(dev, property="in_order")
        self.ctx = self.queue.sycl_context
        self.pool = USMPool(self.queue, pool_limit)
        self.peak_active = self.peak_managed = 0
        self.is_cpu = bool(dev.is_cpu)
        self.compute_units = max(1, int(dev.max_compute_units))
        self.max_wg = int(dev.max_work_group_size)
        self.max_alloc = int(dev.max_mem_alloc_size)
        self.mem_size = int(dev.global_mem_size)
        self.fp64 = bool(dev.has_aspect_fp64)
        self.fp16 = bool(dev.has_aspect_fp16)
        self.int64_atomics = bool(dev.has_aspect_atomic64)
        self.build_options = ("-cl-fp32-correctly-rounded-divide-sqrt",
                              gemm_text.EXPLICIT_FMA)  # see kernels/gemm.MAC_MACRO
        self._dtype_ok: dict[np.dtype, bool] = {}
        self.kernels: dict[Any, Any] = {}
        self.programs: dict[Any, Any] = {}
        self.layouts: dict[tuple, Any] = {}
        self.dummy = Fixed(MemoryUSMDevice(64, queue=self.queue))
        self.pending: list[Any] = []
        self._pending_lock = threading.Lock()
        if self.is_cpu:
            self.min_chunk, self.max_groups, self.local = 8192, 16 * self.compute_units, (1,)
            self.small = self.min_chunk
        else:
            self.min_chunk, self.max_groups, self.local, self.small = 1, 1 << 30, (64,), 0

    # ------------------------------------------------------------------- runtime
    def build_program(self, source: str, options: tuple[str, ...]) -> Any:
        return build.build(self.queue, source, " ".join(options))  # the GIL released

    def make_kernel(self, prg: Any, name: str) -> SyclKernel:
        return SyclKernel(prg.get_sycl_kernel(name), self.queue, self.dummy.mem)

    def write(self, buf: Any, host: np.ndarray, offset: int = 0, blocking: bool = True
              ) -> Any:
        host = np.ascontiguousarray(host)
        dst = buf.mem if offset == 0 else _at(buf.mem, offset, host.nbytes)
        if blocking:
            dpctl.SyclEvent.wait_for([self.queue.memcpy_async(dst, host, host.nbytes)])
            return None
        return (self.queue.memcpy_async(dst, host, host.nbytes), host, dst)

    def read(self, host: np.ndarray, buf: Any, offset: int = 0) -> None:
        src = buf.mem if offset == 0 else _at(buf.mem, offset, host.nbytes)
        # waits with the GIL released: a dpnp keep-alive host task ahead of the copy in
        # the in-order queue needs the GIL to finish
        dpctl.SyclEvent.wait_for([self.queue.memcpy_async(host, src, host.nbytes)])

    def copy_buffer(self, dst: Any, src: Any, nbytes: int, src_offset: int,
                    dst_offset: int) -> None:
        self.queue.memcpy_async(_at(dst.mem, dst_offset, nbytes),
                                _at(src.mem, src_offset, nbytes), nbytes)

    def hold_upload(self, entry: Any) -> None:
        """Keep ``(event, host array, view)`` of a non-blocking upload until it ran:
        dpctl's copy does not hold the host array."""
        with self._pending_lock:
            self.pending.append(entry)
            if len(self.pending) > 256:
                self._prune()

    def uploads_done(self) -> None:
        """After a blocking read. Another thread may have queued an upload since that read
        was submitted: forget only the completed ones."""
        with self._pending_lock:
            self._prune()

    def _prune(self) -> None:
        done = dpctl.event_status_type.complete
        self.pending[:] = [p for p in self.pending if p[0].execution_status != done]

    def synchronize(self) -> None:
        try:
            self.queue.wait()
        except Exception as e:  # noqa: BLE001 - dpctl raises its own types
            raise BackendError(f"{self.name} ({self.label}): waiting for the queue failed "
                               f"(a kernel or copy enqueued earlier failed): {e}") from None
        self.uploads_done()
        self.pool.free_dropped()

    # ---------------------------------------------------------------- allocation
    def alloc(self, nbytes: int) -> Any:
        if nbytes <= 0:
            return self.dummy
        if nbytes > 1 << 20:
            self._check_room(nbytes)
        pool = self.pool
        try:
            buf = pool.allocate(nbytes)
        except USMAllocationError as e:
            pool.free_held()
            try:
                buf = pool.allocate(nbytes)
            except USMAllocationError:
                raise self._alloc_error(nbytes, e) from None
        if pool.active_bytes > self.peak_active:
            self.peak_active = pool.active_bytes
        if pool.managed_bytes > self.peak_managed:
            self.peak_managed = pool.managed_bytes
        return buf

    @staticmethod
    def _host_room(nbytes: int) -> int:
        room = host_memory.address_space_headroom()
        if nbytes >= 1 << 28:
            room = min(room, host_memory.available_bytes())
        return room

    def empty_cache(self) -> None:
        self.queue.wait()
        self.uploads_done()
        self.pool.free_held()

    def layout(self, key: tuple) -> Any:
        buf = self.layouts.get(key)
        if buf is None:
            if len(self.layouts) > 1024:
                self.queue.wait()  # a queued kernel may still read an old layout
                self.layouts.clear()
            host = np.asarray(key, dtype=np.int64)
            mem = MemoryUSMDevice(max(8, host.nbytes), queue=self.queue)
            buf = Fixed(mem)
            self.hold_upload(self.write(buf, host, 0, False))
            self.layouts[key] = buf
        return buf

    # -------------------------------------------------------------------- dtypes
    def supports(self, dtype: np.dtype) -> bool:
        ok = self._dtype_ok.get(dtype)
        if ok is None:
            ok = self._dtype_ok[dtype] = dtype_reason(self.dev, dtype) is None
        return ok

    def check_dtype(self, dtype: np.dtype) -> None:
        why = dtype_reason(self.dev, dtype)
        if why:
            raise DeviceDTypeError(f"{self.name} ({self.label}): {why}. Use float32 "
                                   f"(or complex64) on this device, or another device.")


def _at(mem: Any, offset: int, nbytes: int) -> Any:
    """A view of ``nbytes`` bytes of the USM allocation ``mem`` from byte ``offset``."""
    return MemoryUSMDevice(_Span(mem, offset, nbytes))


class _Span:
    """A sub-range of a USM allocation, as ``__sycl_usm_array_interface__`` (dpctl's
    memory objects take their own views this way)."""

    __slots__ = ("base", "__sycl_usm_array_interface__")

    def __init__(self, mem: Any, offset: int, nbytes: int) -> None:
        self.base = mem
        self.__sycl_usm_array_interface__ = {
            "data": (mem._pointer + offset, False), "shape": (nbytes,), "strides": None,
            "typestr": "|u1", "version": 1, "syclobj": mem.sycl_queue}
