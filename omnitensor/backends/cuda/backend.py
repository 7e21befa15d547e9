"""The ``cuda`` backend: CuPy on NVIDIA GPUs, and CuPy's ROCm build on AMD GPUs (HIP).

It shares the array-namespace adapter with NumPy and dpnp; what is CUDA-specific here is
devices (``cupy.cuda.Device``), streams (each device's current CuPy stream; ops are
asynchronous, host reads synchronize), the memory pool, dtype support and a few fast
paths (cuBLAS matmul through ``cupy.matmul``, fused elementwise kernels).
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..namespace_backend import NamespaceBackend, library_spmm

try:
    import cupy
    import cupyx
except ImportError as e:  # the registry turns this into "pip install 'omnitensor[cuda]'"
    raise ImportError(f"CuPy is not importable ({e})") from None

# DLPack device types CuPy accepts: kDLCUDA, kDLCUDAManaged, kDLROCM
_DLPACK_DEVICES = (2, 13, 10)
# dtypes cupyx.scatter_add handles with hardware atomics
_ATOMIC_DTYPES = tuple(np.dtype(d) for d in ("int32", "uint32", "uint64", "float32", "float64"))


class CupyBackend(NamespaceBackend):
    """Device type ``cuda``: ``cuda:0..N`` are CuPy's devices in CUDA's order
    (``CUDA_VISIBLE_DEVICES`` / ``HIP_VISIBLE_DEVICES`` apply)."""

    name = "cuda"
    xp = cupy
    asynchronous = True
    widens_bfloat16 = True  # CuPy has no bfloat16 dtype: held as float32 on bfloat16's grid

    def __init__(self) -> None:
        self._why: str | None
        try:
            self._count = cupy.cuda.runtime.getDeviceCount()
        except Exception as e:  # noqa: BLE001 - no driver, no device
            self._count = 0
            self._why = f"CuPy is installed but CUDA reports no device ({type(e).__name__}: {e})"
        else:
            self._why = None if self._count else "CuPy is installed but finds no GPU"
        super().__init__()
        try:
            from cupyx.scipy.special import erf, erfc
            self.erf, self.erfc = erf, erfc
        except ImportError:  # pragma: no cover - cupyx ships with cupy
            pass
        try:  # page-locked host arrays for Tensor.pin_memory (untested here: no GPU)
            import cupyx
            self.pinned_empty = cupyx.empty_pinned
        except ImportError:  # pragma: no cover - cupyx ships with cupy
            pass
        try:  # sparse @ dense through cuSPARSE (the spmm hook)
            from cupyx.scipy import sparse
            self.spmm = functools.partial(library_spmm, sparse, cupy)
        except ImportError:  # pragma: no cover - cupyx ships with cupy
            pass
        self._sigmoid_kernel = None
        if self._count > 1:  # CuPy computes on the current device: follow the operands'
            from ..device_guard import guard_backend
            guard_backend(self, cupy.ndarray, lambda a: a.device.id,
                          cupy.cuda.runtime.getDevice, cupy.cuda.Device)

    # ------------------------------------------------------------------ identity
    def unavailable_reason(self) -> str | None:
        if self._why:
            return (f"{self._why}. Check `nvidia-smi` (or `rocm-smi` for CuPy's ROCm build), "
                    f"the driver version against the CuPy wheel (cupy-cuda12x needs a CUDA 12 "
                    f"driver; use cupy-cuda13x for CUDA 13) and CUDA_VISIBLE_DEVICES.")
        return None

    @property
    def is_rocm(self) -> bool:
        return bool(getattr(cupy.cuda.runtime, "is_hip", False))

    def version(self) -> str:
        rt = cupy.cuda.runtime.runtimeGetVersion()
        kind = "ROCm/HIP" if self.is_rocm else "CUDA"
        return f"cupy {cupy.__version__}, {kind} runtime {rt}"

    def device_count(self) -> int:
        return self._count

    def device_info(self, index: int) -> dict[str, Any]:
        p = cupy.cuda.runtime.getDeviceProperties(index)
        name = p.get("name", b"")
        name = name.decode() if isinstance(name, bytes) else str(name)
        notes = ["ROCm build of CuPy (HIP)"] if self.is_rocm else []
        return {"name": name, "memory": int(p.get("totalGlobalMem", 0)),
                "compute_units": int(p.get("multiProcessorCount", 0)), "fp16": True,
                "fp64": True, "platform": "ROCm" if self.is_rocm else "CUDA",
                "compute_capability": f"{p.get('major', '?')}.{p.get('minor', '?')}",
                "notes": notes}

    def synchronize(self, index: int) -> None:
        with cupy.cuda.Device(index):
            cupy.cuda.get_current_stream().synchronize()

    def fused_kernels(self) -> Any:
        """The launcher of ``omnitensor.compile``'s fused kernels: CUDA C through NVRTC
        (the hook's contract is in backends/base.py)."""
        from .fused import Kernel
        return Kernel

    def device_timer(self, index: int) -> Any:
        """The profiler's device timer: CUDA events on the device's current stream (the
        hook's contract is in backends/base.py; the mechanism in cuda/profiling.py)."""
        from .profiling import CudaDeviceTimer
        return CudaDeviceTimer(index)

    def device_index(self, x: Any) -> int:
        return x.device.id

    # -------------------------------------------------------------------- memory
    def empty(self, shape, dtype, index):
        with cupy.cuda.Device(index):
            return cupy.empty(shape, dtype=dtype)

    def full(self, shape, value, dtype, index):
        with cupy.cuda.Device(index):
            return cupy.full(shape, value, dtype=dtype)

    def arange(self, start, step, n, dtype, index):
        with cupy.cuda.Device(index):
            return super().arange(start, step, n, dtype, index)

    def from_numpy(self, array, index):
        with cupy.cuda.Device(index):
            return cupy.asarray(array)

    def to_numpy(self, x):
        return cupy.asnumpy(x)  # waits for the stream

    def transfer_from(self, x, src, index):
        """cuda -> cuda: a device-to-device copy (``cuda:0 -> cuda:1`` is a peer copy,
        CUDA's ``cudaMemcpyAsync`` with unified addressing; it goes through PCIe/NVLink,
        never a NumPy array); other sources: the base class (one copy from host memory)
        or None."""
        if src is not self:
            return super().transfer_from(x, src, index)
        here = x.device.id
        if here == index:
            with cupy.cuda.Device(index):
                return x.copy()  # same device and stream: ordered after x's producers
        with cupy.cuda.Device(here):
            xc = cupy.ascontiguousarray(x)
        self.synchronize(here)  # x's producers ran on the source device's stream
        with cupy.cuda.Device(index):
            y = cupy.empty(x.shape, dtype=x.dtype)
            if y.nbytes:
                y.data.copy_from_device(xc.data, y.nbytes)  # on the current stream
                # the source block may return to device `here`'s pool as soon as we
                # return and be rewritten by its stream: let the copy finish first
                cupy.cuda.get_current_stream().synchronize()
        return y

    def assign_from_host(self, dst, host):
        if dst.flags.c_contiguous:
            with cupy.cuda.Device(dst.device.id):
                dst.set(host)  # one host -> device copy on the current stream
                # the caller may reuse host at once: wait for the (async) copy to read it
                cupy.cuda.get_current_stream().synchronize()
            return
        super().assign_from_host(dst, host)

    def reshape(self, x, shape, copy=None):
        if copy:
            return cupy.reshape(x, shape).copy()
        if copy is False:
            y = x.view()
            try:
                y.shape = shape
            except AttributeError:
                raise ValueError(f"cannot reshape {x.shape} to {shape} without a copy") \
                    from None
            return y
        return cupy.reshape(x, shape)

    def random_bits(self, shape, key, counter, index):
        with cupy.cuda.Device(index):
            return super().random_bits(shape, key, counter, index)

    # ------------------------------------------------------------------ indexing
    def scatter_nd(self, x, indices, values, accumulate):
        idx = tuple(indices)
        if not accumulate:
            x[idx] = values
            return
        if x.dtype in _ATOMIC_DTYPES:
            cupyx.scatter_add(x, idx, values)
            return
        # no atomic add for this dtype: sort by position, sum each run once, add once
        idx = cupy.broadcast_arrays(*idx)
        flat = cupy.ravel_multi_index(tuple(i.ravel() for i in idx), x.shape)
        if flat.size == 0:
            return
        wide = np.complex128 if x.dtype.kind == "c" else (
            np.float64 if x.dtype.kind == "f" else np.int64)
        vals = cupy.broadcast_to(cupy.asarray(values), idx[0].shape).ravel().astype(wide)
        order = cupy.argsort(flat)
        fs, vs = flat[order], vals[order]
        ends = cupy.concatenate([fs[1:] != fs[:-1], cupy.ones(1, bool)])
        totals = cupy.cumsum(vs)[ends]
        sums = cupy.concatenate([totals[:1], totals[1:] - totals[:-1]])
        x[cupy.unravel_index(fs[ends], x.shape)] += sums.astype(x.dtype)

    # ---------------------------------------------------------------- fast paths
    def sigmoid(self, x):
        """Fused ``1 / (1 + exp(-x))`` (one kernel instead of four)."""
        if self._sigmoid_kernel is None:
            self._sigmoid_kernel = cupy.ElementwiseKernel(
                "T x", "T y", "y = T(1) / (T(1) + exp(-x))", "omnitensor_sigmoid")
        return self._sigmoid_kernel(x)

    def accepts_dlpack_device(self, dl_device_type: int) -> bool:
        return dl_device_type in _DLPACK_DEVICES

    def from_dlpack(self, obj: Any) -> tuple[Any, int]:
        arr = cupy.from_dlpack(obj)
        return arr, arr.device.id

    # ------------------------------------------------------------------- stats
    def memory_allocated(self, index: int) -> int:
        with cupy.cuda.Device(index):
            return int(cupy.get_default_memory_pool().used_bytes())

    def memory_reserved(self, index: int) -> int:
        with cupy.cuda.Device(index):
            return int(cupy.get_default_memory_pool().total_bytes())

    def memory_stats(self, index: int) -> dict[str, int]:
        """CuPy's pool on device ``index``: used and total bytes (it tracks no peak)."""
        return {"allocated_bytes": self.memory_allocated(index),
                "reserved_bytes": self.memory_reserved(index)}

    def empty_cache(self, index: int | None = None) -> None:
        """Free the idle blocks of CuPy's pools (its pools serve every device)."""
        cupy.get_default_memory_pool().free_all_blocks()
        cupy.get_default_pinned_memory_pool().free_all_blocks()
