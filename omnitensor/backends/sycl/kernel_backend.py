"""The ``sycl`` backend on generated kernels: the OpenCL backend's kernels, launched through
dpctl on each device's in-order queue, with oneMKL (through dpnp) for large GEMMs.

Every primitive the OpenCL backend implements (elementwise with broadcasting, strides and
casts, reductions, scans, gather/scatter, sort, random, copies and fills) runs here as the
same code on a :class:`~omnitensor.backends.sycl.runtime.SyclState` instead of a PyOpenCL
device: one implementation, two runtimes. What is SYCL's own: devices and their aspects,
the USM pool, oneMKL for the GEMMs it does faster than the generated one, linalg and FFT
(``library.py``), DLPack as kDLOneAPI, device timers.

Why not dpnp for every op (the fallback, ``backend.py``): dpnp's Python around each kernel
costs ~65-110 us per call on this CPU (8-element add), the submission itself ~10-20 us.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import envvars
from .devices import DISCOVERY_ERROR, ENV, discover  # dpctl, after the ICD setup

import dpctl
import dpnp

from ..base import FFT, LINALG
from ..opencl import gemm as cl_gemm
from ..opencl.array import CLArray, new
from ..opencl.backend import OpenCLBackend
from . import library, runtime

_DEVICES = discover(prefer_opencl=True)

#: multiply-adds from which a float matmul goes to oneMKL instead of the generated GEMM.
#: Measured in a stream of kernels (``benchmarks/sycl_backend.py --rows crossover``; Intel
#: OpenCL CPU runtime): alone, oneMKL already wins at 64x256x256 (4M), but on a CPU device
#: its GEMM is a SYCL host task, so the call waits for the queued kernels and the kernels
#: after it wait for the host task; between kernels the two cross over near 8M (an eager MLP
#: step with 64x256x256 products: 5.0x eager cpu's time through oneMKL, 3.2x without)
ONEMKL_MIN_MACS = 1 << 23


def _pool_limit(dev: Any) -> int:
    return envvars.byte_count("OMNITENSOR_SYCL_POOL_LIMIT",
                              min(int(dev.global_mem_size) // 8, 4 << 30))


class SyclBackend(OpenCLBackend):
    """Device type ``sycl``: every SYCL device dpctl can build OpenCL C for (CPUs through
    Intel's OpenCL runtime, Intel GPUs through their OpenCL entry)."""

    name = "sycl"
    generated_gemm = False  # oneMKL serves the large products: fusion keeps them apart
    host_fallback_ops: tuple[str, ...] = ()

    def __init__(self) -> None:
        super().__init__()
        self._devices = list(_DEVICES)
        for name in LINALG:
            fn = getattr(dpnp.linalg, name, None)
            if fn is not None:
                setattr(self, "linalg_" + name, self._library(fn, drain=True))
        for name in FFT:
            fn = getattr(dpnp.fft, name, None)
            if fn is not None:
                setattr(self, "fft_" + name, self._library(fn, drain=True))

    def _library(self, fn: Any, drain: bool) -> Any:
        """A hook running dpnp's ``fn`` on views of our arrays (oneMKL LAPACK/FFT submit
        host tasks and wait for them holding the GIL: drain the queue first, which waits
        with the GIL released; see sync.py)."""
        def call(x: Any, *rest: Any, **kw: Any) -> Any:
            st = x.state
            if drain:
                st.queue.wait()
            return library.call(fn, st, x, *rest, **kw)
        call.__name__ = getattr(fn, "__name__", "call")
        return call

    # ------------------------------------------------------------ identity, capability
    def fused_kernels(self) -> Any:
        """The launcher of ``omnitensor.compile``'s fused kernels: the OpenCL one on this
        backend's state, built by dpctl (the hook's contract is in backends/base.py)."""
        from .fused import Kernel
        return Kernel

    def unavailable_reason(self) -> str | None:
        if self._devices:
            return None
        why = "dpctl lists no SYCL device"
        if DISCOVERY_ERROR:
            why += f" (device enumeration failed: {DISCOVERY_ERROR})"
        return f"{why}. {ENV.describe()}"

    def version(self) -> str:
        parts = [f"dpctl {dpctl.__version__}", f"dpnp {dpnp.__version__}"]
        try:
            from importlib import metadata
            parts.append(f"intel-opencl-rt {metadata.version('intel-opencl-rt')}")
        except Exception:  # noqa: BLE001 - optional component
            pass
        return ", ".join(parts) + "; generated kernels"

    def device_count(self) -> int:
        return len(self._devices)

    def device_info(self, index: int) -> dict[str, Any]:
        d = self._devices[index]
        fp16, fp64 = bool(d.has_aspect_fp16), bool(d.has_aspect_fp64)
        notes = [f"{d.vendor}, driver {d.driver_version}, SYCL filter {d.filter_string}",
                 "ops: omnitensor's generated OpenCL C kernels through dpctl; large "
                 "matmuls, linalg and FFT: oneMKL through dpnp"]
        if not fp64:
            notes.append("no fp64 aspect: float64/complex128 unavailable")
        if not fp16:
            notes.append("no fp16 aspect: float16 unavailable")
        return {"name": d.name, "vendor": d.vendor, "driver": d.driver_version,
                "memory": int(d.global_mem_size), "compute_units": int(d.max_compute_units),
                "fp16": fp16, "fp64": fp64,
                "platform": f"SYCL {d.backend.name} {d.device_type.name}",
                "filter": d.filter_string, "notes": notes}

    def supports_dtype(self, dtype: np.dtype, index: int) -> bool:
        return runtime.dtype_reason(self._devices[index], np.dtype(dtype)) is None

    def dtype_unsupported_reason(self, dtype: np.dtype, index: int) -> str | None:
        return runtime.dtype_reason(self._devices[index], np.dtype(dtype))

    def wide_accumulation(self, x: Any) -> bool:
        return bool(x.state.fp64)

    def state(self, index: int) -> runtime.SyclState:
        st = self._states.get(index)
        if st is None:
            with self._lock:
                st = self._states.get(index)
                if st is None:
                    dev = self._devices[index]
                    st = self._states[index] = runtime.SyclState(index, dev,
                                                                 _pool_limit(dev))
        return st  # type: ignore[return-value]

    @property
    def _queues(self) -> list[Any]:
        """The devices' in-order queues (a dpnp array made with ``sycl_queue=`` one of these
        is ordered with omnitensor's work on that device)."""
        return [self.state(i).queue for i in range(len(self._devices))]

    def memory_stats(self, index: int) -> dict[str, int]:
        """The pool's bytes (``OpenCLBackend.memory_stats``), its idle cache and cap."""
        stats = super().memory_stats(index)
        pool = self.state(index).pool
        stats["pool_cached_bytes"] = int(pool.held_bytes)
        stats["pool_limit_bytes"] = int(pool.limit)
        return stats

    def device_timer(self, index: int) -> Any:
        """SYCL event profiling around each primitive (``sycl/profiling.py``)."""
        from .profiling import SyclDeviceTimer
        return SyclDeviceTimer(self.state(index).queue)

    # --------------------------------------------------------------------- memory
    def host_view(self, x: Any) -> None:
        return None  # device USM: read through a copy (to_numpy waits for the queue)

    def transfer_from(self, x, src, index):
        """sycl -> sycl within one SYCL context: a device-side USM copy in queue order
        (another queue's work is waited for first); other sources: the base class."""
        if src is self:
            dst = self.state(index)
            if x.state.ctx == dst.ctx:
                from ..opencl import memory
                return memory.copy_to_device(x, dst)
            return None
        return super().transfer_from(x, src, index)

    # -------------------------------------------------------------- linear algebra
    def matmul(self, a, b):
        """oneMKL for large float products (one dpnp call into a pooled result), the
        generated GEMM for small ones and for integers (oneMKL has no integer GEMM)."""
        if a.dtype.kind in "fc" and a.ndim >= 2 and b.ndim >= 2 and \
                a.shape[:-2] == b.shape[:-2] and \
                a.shape[-2] * a.shape[-1] * b.shape[-1] >= ONEMKL_MIN_MACS and \
                a.dtype != np.float16 and not _broadcast_matrix(a) and \
                not _broadcast_matrix(b):
            out = new(a.state, a.shape[:-1] + b.shape[-1:], a.dtype)
            return library.matmul_into(a, b, out)
        return cl_gemm.matmul(a, b)

    # ----------------------------------------------------------------------- DLPack
    def dlpack_device(self, x):
        return library.as_usm(x).__dlpack_device__()

    def dlpack_export(self, x, *, copy=None, dl_device=None, max_version=None):
        """A kDLOneAPI capsule sharing x's USM memory (dpctl's export), or a host copy
        when ``dl_device=(1, 0)`` is asked for."""
        x.state.queue.wait()  # the consumer may read on another queue
        kw: dict[str, Any] = {"copy": copy, "dl_device": dl_device}
        if max_version is not None:
            kw["max_version"] = max_version
        return library.as_usm(x).__dlpack__(**kw)

    def accepts_dlpack_device(self, dl_device_type: int) -> bool:
        return dl_device_type == 14  # kDLOneAPI

    def from_dlpack(self, obj: Any) -> tuple[Any, int]:
        """(array over the producer's USM memory, device index); a producer on another
        queue is waited for first (its work is outside our queue's order)."""
        u = dpnp.from_dlpack(obj).get_array()
        dev = u.sycl_device
        index = next((i for i, d in enumerate(self._devices) if d == dev), None)
        if index is None:
            raise ValueError(f"the array lives on SYCL device {dev.name!r} "
                             f"({dev.filter_string}), which omnitensor does not list")
        st = self.state(index)
        if u.sycl_queue != st.queue:
            u.sycl_queue.wait()
            if u.sycl_context != st.ctx:
                raise ValueError(f"the array lives in another SYCL context of {dev.name!r}; "
                                 f"copy it through the host")
        return library.adopt(u, st), index


def _broadcast_matrix(x: CLArray) -> bool:
    """oneMKL rejects stride-0 (broadcast) matrix axes."""
    st, sh = x.strides, x.shape
    return any(st[i] == 0 and sh[i] > 1 for i in (-1, -2))


__all__ = ["SyclBackend"]
