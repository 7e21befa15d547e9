"""OpenCL devices: enumeration, and one lazily created context/queue/pool per device.

Device order (``opencl:0..N-1``) is stable and documented: platforms in
``pyopencl.get_platforms()`` order (the ICD loader's order; Intel's CPU runtime last when
``icd`` adds it), and within a platform its devices in ``platform.get_devices()`` order,
leaving out devices that cannot build a kernel (``icd.build_error``: PoCL on CPUs newer than
its compiler). ``omnitensor info`` prints the mapping and the devices left out.

A :class:`DeviceState` owns everything per device: the context, one in-order command queue
(so ops run in enqueue order and a buffer freed to the pool may be reused by the next op
without a wait), a ``pyopencl.tools.MemoryPool`` (allocations are not driver round trips),
the compiled-program and kernel caches, and the launch policy (how elementwise work is split
into work-items on a CPU vs a GPU).
"""
from __future__ import annotations

import threading
import warnings
from typing import Any

import ml_dtypes
import numpy as np
import pyopencl as cl
import pyopencl.tools as cl_tools

from ...kernels import gemm as gemm_text
from ...errors import BackendError, DeviceDTypeError, out_of_memory
from .. import driver_builds, host_memory
from . import icd

# pyopencl warns whenever a driver's build log is not empty (Intel's CPU compiler always
# writes one) and says to set PYOPENCL_COMPILER_OUTPUT=1 to see it: that hint is not the
# user's business on every op's first call. Setting the variable still shows the logs (they
# come under another message). A process-wide filter: warnings.catch_warnings is not
# thread-safe, and programs build on threads.
warnings.filterwarnings("ignore", message="Non-empty compiler output encountered",
                        category=cl.CompilerWarning)
_lock = threading.Lock()
#: host memory left free beyond a CPU device's allocation (driver and kernel scratch)
_HOST_MARGIN = 64 << 20
_devices: list[Any] | None = None
_enum_error: str | None = None
#: "device (platform): why" for each device left out because it cannot build a kernel
_skipped: list[str] = []
_platforms: list[Any] = []


def _enumerate() -> list[Any]:
    """Every (platform, device) pair in the documented order; remembers the failure."""
    global _devices, _enum_error
    if _devices is not None:
        return _devices
    with _lock:
        if _devices is not None:
            return _devices
        found: list[Any] = []
        try:
            platforms, _ = icd.get_platforms(cl)
        except cl.Error as e:  # no ICD loader / no platform registered
            _enum_error = f"pyopencl.get_platforms() failed: {e}"
            platforms = []
        _platforms[:] = platforms
        for p in platforms:
            try:
                devs = p.get_devices()
            except cl.Error:  # a platform without devices raises DEVICE_NOT_FOUND
                continue
            for dev in devs:
                why = icd.build_error(cl, dev)
                if why is None:
                    found.append(dev)
                else:
                    _skipped.append(f"{device_label(dev)}: {why}")
        _devices = found
        return found


def cl_devices() -> list[Any]:
    """The pyopencl Device objects, index i being ``opencl:i``."""
    return _enumerate()


def enumeration_error() -> str | None:
    """Why enumeration found nothing, when it raised."""
    _enumerate()
    return _enum_error


def platforms() -> list[Any]:
    """The OpenCL platforms, in the order that numbers ``opencl:N``."""
    _enumerate()
    return list(_platforms)


def skipped_devices() -> list[str]:
    """Devices the drivers list that are not offered, each with the reason."""
    _enumerate()
    return list(_skipped)


def _short_platform(p: Any) -> str:
    name = p.name.strip()
    return "PoCL" if name == "Portable Computing Language" else name


def device_label(dev: Any) -> str:
    """``"pthread-AMD EPYC (PoCL)"``: the device name and its platform, for messages."""
    return f"{dev.name.strip()} ({_short_platform(dev.platform)})"


def has_ext(dev: Any, ext: str) -> bool:
    return ext in dev.extensions.split()


class DeviceState:
    """Per-device runtime state, created on first use of ``opencl:index``."""

    def __init__(self, index: int, dev: Any) -> None:
        self.index = index
        self.dev = dev
        self.label = device_label(dev)
        self.name = f"opencl:{index}"
        self.ctx = cl.Context([dev])
        self.queue = cl.CommandQueue(self.ctx)
        self.pool = cl_tools.MemoryPool(cl_tools.ImmediateAllocator(self.queue))
        self.peak_active = self.peak_managed = 0  # bytes, since creation or the last reset
        self.is_cpu = bool(dev.type & cl.device_type.CPU)
        self.compute_units = max(1, int(dev.max_compute_units))
        self.max_wg = int(dev.max_work_group_size)
        self.max_alloc = int(dev.max_mem_alloc_size)
        # PoCL's CPU device reserves memory lazily: an allocation beyond its advertised
        # global memory "succeeds" and the process is later killed, so we refuse it here
        self.mem_size = int(dev.global_mem_size)
        self.fp64 = has_ext(dev, "cl_khr_fp64") or bool(dev.double_fp_config)
        self.fp16 = has_ext(dev, "cl_khr_fp16") or _emulate_fp16()
        self.int64_atomics = has_ext(dev, "cl_khr_int64_base_atomics")
        # NumPy divides and takes square roots correctly rounded; OpenCL allows 2.5 ulp
        # for float unless asked (and the device says it can)
        opts = []
        if dev.single_fp_config & cl.device_fp_config.CORRECTLY_ROUNDED_DIVIDE_SQRT:
            opts.append("-cl-fp32-correctly-rounded-divide-sqrt")
        if dev.platform.name.strip() != icd.POCL_PLATFORM:
            opts.append(gemm_text.EXPLICIT_FMA)  # see kernels/gemm.MAC_MACRO
        self.build_options = tuple(opts)
        # Intel's OpenCL CPU compiler (the device icd adds where PoCL cannot build) takes
        # ~0.2 s per op program and ~3.5 s per family program, as on sycl
        self.fine_programs = self.is_cpu and dev.platform.name.strip() == icd.INTEL_CPU_PLATFORM
        self._dtype_ok: dict[np.dtype, bool] = {}
        # kernels: key -> cl.Kernel; programs are cached in program_cache
        self.kernels: dict[Any, Any] = {}
        self.programs: dict[Any, Any] = {}
        # small read-only int64 buffers describing strided layouts, keyed by content
        self.layouts: dict[tuple, Any] = {}
        # a tiny buffer passed where a kernel wants a pointer that is never dereferenced
        # for real (scalar operands, empty arrays): reads from it stay in bounds
        self.dummy = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, 64)
        # host arrays of pending non-blocking uploads, kept alive until their copy is done
        self.pending: list[Any] = []
        # elementwise split: a CPU runs few large contiguous chunks per work-item (each a
        # plain loop the compiler vectorizes); a GPU runs one element per work-item
        if self.is_cpu:
            self.min_chunk = 8192
            self.max_groups = 16 * self.compute_units
            self.local = (1,)
            self.small = self.min_chunk  # sizes that run as one work-item
        else:
            self.min_chunk = 1
            self.max_groups = 1 << 30
            self.local = (64,)
            self.small = 0

    # ------------------------------------------------------------------- runtime
    # What the kernel-driving modules (program_cache, memory, scan) ask of the runtime, so
    # that the sycl backend's state (sycl/runtime.py) can drive the same modules on dpctl.
    #: the runtime's error type (builds, copies)
    Error: Any = cl.Error
    #: one program per op and dtype instead of per family (a family build is cheap here:
    #: ~0.2 s on PoCL; Intel's OpenCL CPU compiler takes ~3.5 s for one)
    fine_programs = False

    def build_program(self, source: str, options: tuple[str, ...]) -> Any:
        with driver_builds.building("OpenCL"):  # the exit waits for it (driver_builds)
            return cl.Program(self.ctx, source).build(options=list(options))

    def make_kernel(self, prg: Any, name: str) -> Any:
        return cl.Kernel(prg, name)

    def write(self, buf: Any, host: np.ndarray, offset: int = 0, blocking: bool = True
              ) -> Any:
        """Copy ``host`` into ``buf`` at byte ``offset``; non-blocking: an event that
        keeps ``host`` alive until the copy ran (for ``pending``)."""
        return cl.enqueue_copy(self.queue, buf, host, dst_offset=offset,
                               is_blocking=blocking)

    def read(self, host: np.ndarray, buf: Any, offset: int = 0) -> None:
        """Copy from ``buf`` at byte ``offset`` into ``host``, waiting for it."""
        cl.enqueue_copy(self.queue, host, buf, src_offset=offset, is_blocking=True)

    def copy_buffer(self, dst: Any, src: Any, nbytes: int, src_offset: int,
                    dst_offset: int) -> None:
        """A device-side copy of ``nbytes`` bytes, in queue order."""
        cl.enqueue_copy(self.queue, dst, src, byte_count=nbytes, src_offset=src_offset,
                        dst_offset=dst_offset)

    def hold_upload(self, evt: Any) -> None:
        """Keep a non-blocking upload's event (and so its host array) until it ran."""
        pending = self.pending
        pending.append(evt)
        if len(pending) > 256:
            done = cl.command_execution_status.COMPLETE
            pending[:] = [e for e in pending if e.command_execution_status != done]

    def uploads_done(self) -> None:
        """Called after a blocking read: every earlier upload has run (a pyopencl
        NannyEvent also keeps its host array alive by itself)."""
        self.pending.clear()

    # ----------------------------------------------------------------- allocation
    def alloc(self, nbytes: int) -> Any:
        """A pooled buffer of at least ``nbytes`` bytes (the shared dummy for 0 bytes)."""
        if nbytes <= 0:
            return self.dummy
        if nbytes > 1 << 20:
            self._check_room(nbytes)
        try:
            buf = self.pool.allocate(nbytes)
        except cl.Error as e:
            self.pool.free_held()  # give cached blocks back and retry once
            try:
                buf = self.pool.allocate(nbytes)
            except cl.Error:
                raise self._alloc_error(nbytes, e) from None
        active = self.pool.active_bytes  # peaks for omnitensor.memory (two compares)
        if active > self.peak_active:
            self.peak_active = active
        if self.pool.managed_bytes > self.peak_managed:
            self.peak_managed = self.pool.managed_bytes
        return buf

    def _check_room(self, nbytes: int) -> None:
        """Refuse, before the driver sees it, an allocation the device cannot hold. A CPU
        device's memory is the host's: PoCL advertises most of the RAM and allocates
        lazily, so past an address-space or cgroup limit its allocation segfaults instead
        of failing; check the host's real headroom (``host_memory``) instead."""
        if nbytes > self.max_alloc:
            raise self._alloc_error(nbytes, "larger than the largest single buffer")
        if self.pool.active_bytes + nbytes > self.mem_size:
            self.pool.free_held()
            raise self._alloc_error(nbytes, "exceeds the device's memory")
        if self.is_cpu:
            room = self._host_room(nbytes)
            if nbytes + _HOST_MARGIN > room:
                self.pool.free_held()  # cached blocks are host memory too: retry once
                room = self._host_room(nbytes)
                if nbytes + _HOST_MARGIN > room:
                    raise self._alloc_error(nbytes, "exceeds the host memory this process "
                                            "can still get", available=room)

    @staticmethod
    def _host_room(nbytes: int) -> int:
        # RLIMIT_AS headroom costs ~5 us; /proc/meminfo ~100 us: only for big requests
        room = host_memory.address_space_headroom()
        if nbytes >= 1 << 28:
            room = min(room, host_memory.available_bytes())
        return room

    def _alloc_error(self, nbytes: int, err: Any, available: int | None = None) -> Exception:
        if nbytes > self.max_alloc:
            why = (f"{self.label}: the largest single buffer "
                   f"(CL_DEVICE_MAX_MEM_ALLOC_SIZE) is {_fmt_bytes(self.max_alloc)}; "
                   f"split the tensor or use another device")
        else:
            why = f"{self.label}: {err}"
        return out_of_memory(self.name, nbytes, allocated=int(self.pool.active_bytes),
                             reserved=int(self.pool.managed_bytes),
                             total=int(self.dev.global_mem_size), available=available,
                             why=why)

    def empty_cache(self) -> None:
        """Free pooled blocks no tensor uses (after a synchronize)."""
        self.queue.finish()
        self.pending.clear()
        self.pool.free_held()

    # ------------------------------------------------------------------- layouts
    def layout(self, key: tuple) -> Any:
        """A cached read-only buffer holding the int64 values ``key``."""
        buf = self.layouts.get(key)
        if buf is None:
            if len(self.layouts) > 1024:
                self.layouts.clear()
            host = np.asarray(key, dtype=np.int64)
            buf = cl.Buffer(self.ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                            hostbuf=host)
            self.layouts[key] = buf
        return buf

    # ----------------------------------------------------------------- splitting
    def split(self, n: int) -> tuple[tuple[int], int]:
        """(global size, elements per work-item) of an elementwise pass over n items; the
        local size is ``self.local``."""
        if self.is_cpu:
            if n <= self.min_chunk:
                return (1,), n
            groups = min(self.max_groups, n // self.min_chunk)
            chunk = -(-n // groups)
            chunk = (chunk + 15) & ~15  # chunk starts stay 64-byte aligned for floats
            return (-(-n // chunk),), chunk
        return (-(-n // 64) * 64,), 1

    def synchronize(self) -> None:
        try:
            self.queue.finish()
        except cl.Error as e:
            raise BackendError(f"{self.name} ({self.label}): waiting for the queue failed "
                               f"(a kernel or copy enqueued earlier failed): {e}") from None
        self.pending.clear()

    def supports(self, dtype: np.dtype) -> bool:
        ok = self._dtype_ok.get(dtype)
        if ok is None:
            ok = self._dtype_ok[dtype] = dtype_reason(self.dev, dtype) is None
        return ok

    def check_dtype(self, dtype: np.dtype) -> None:
        why = dtype_reason(self.dev, dtype)
        if why:
            raise DeviceDTypeError(f"{self.name} ({self.label}): {why}")


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n} B"
        n /= 1024
    return f"{n} B"  # pragma: no cover


#: bfloat16 (ml_dtypes, NumPy kind 'V'): its bits in a ushort, loaded into and stored from
#: float by every cast and elementwise kernel, so any device holds it
_BF16 = np.dtype(ml_dtypes.bfloat16)
_SUPPORTED_KINDS = frozenset("biufc")
_KNOWN = frozenset(np.dtype(d) for d in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128"))


def _emulate_fp16() -> bool:
    """``OMNITENSOR_OPENCL_FP16=emulate``: accept float16 on devices without cl_khr_fp16.
    Our kernels only ever load/store half (``vload_half``/``vstore_half_rte``, core OpenCL)
    and compute in float, so this works everywhere; it is off by default because such a
    device has no native half arithmetic, and it lets the float16 paths be tested on PoCL."""
    import os
    return os.environ.get("OMNITENSOR_OPENCL_FP16", "") == "emulate"


def dtype_reason(dev: Any, dtype: np.dtype) -> str | None:
    """None when ``dev`` computes ``dtype``, else why not (names the extension)."""
    dtype = np.dtype(dtype)
    if dtype == _BF16:
        return None
    if dtype.kind not in _SUPPORTED_KINDS or dtype.itemsize > 16 or \
            dtype.newbyteorder("=") not in _KNOWN:
        return f"OpenCL kernels cannot hold {dtype}"
    label = device_label(dev)
    if dtype == np.float16 and not has_ext(dev, "cl_khr_fp16") and not _emulate_fp16():
        return f"float16 needs cl_khr_fp16, which {label} lacks"
    if dtype in (np.float64, np.complex128) and not (has_ext(dev, "cl_khr_fp64")
                                                     or dev.double_fp_config):
        return f"{dtype} needs cl_khr_fp64, which {label} lacks"
    return None
