"""The ``sycl`` backend: dpctl for devices and queues, dpnp for arrays, kernels and oneMKL.

Everything that is the same for NumPy, CuPy and dpnp comes from
:class:`~omnitensor.backends.namespace_backend.NamespaceBackend` with ``xp = dpnp``; this
module holds what is SYCL-specific: finding devices (``sycl_env``), one queue per device,
dtype support from device aspects, a caching allocator for large results (``sycl_pool``)
and the few primitives dpnp lacks or gets wrong, filled on the device (``sycl_ops``):

=====================  ==============================================================
``scatter_nd`` (+=)    no ``add.at`` in dpnp: sort + segmented scan (``scatter_add``)
``searchsorted`` (N-D)  dpnp's is 1-D only: vectorised binary search over all rows
``floor_divide`` float  dpnp's ``floor(a / b)`` is off by one near integers: NumPy's
                       fmod-based formula
``erf``                lives in ``dpnp.scipy.special``; float16 comes back float32
``conj`` of bool       dpnp returns int8: a copy instead
``f(a, b, out=a)``     dpnp raises for maximum/minimum/atan2/hypot/logaddexp/copysign/
                       nextafter: routed around dpnp's in-place branch
``matmul``             oneMKL rejects stride-0 (broadcast) matrix axes: copied first
=====================  ==============================================================

No primitive copies data to the host (``host_fallback_ops`` is empty); ``scatter_nd``
with ``accumulate`` reads one scalar (the number of distinct indices) to size its result.

Why one queue per device: dpnp refuses to combine arrays that live on one device but carry
different ``SyclQueue`` objects (``ExecutionPlacementError``), so every array this backend
creates is allocated with ``sycl_queue=`` the device's queue. We use dpctl's cached default
queue of the device, the one dpnp itself uses for ``device=...``, so arrays a user made
with plain dpnp combine with ours.

Importing this module imports dpctl and dpnp; ``import omnitensor`` never does (the
registry imports it on first use of a ``sycl`` device).
"""
from __future__ import annotations

import inspect
import math

from typing import Any

import numpy as np

from ...errors import DeviceDTypeError
from .devices import DISCOVERY_ERROR as _DISCOVERY_ERROR, ENV as _ENV, discover  # dpctl
from .devices import enum_name as _enum_name

try:
    import dpnp
except ImportError as e:  # the registry turns this into "pip install 'omnitensor[sycl]'"
    raise ImportError(f"the sycl backend needs dpctl and dpnp: {e}") from e
import dpctl  # imported by .devices after the ICD setup

from . import ops as sycl_ops, pool as sycl_pool, sync  # need dpnp imported above
from ..base import BINARY, PREDICATES, UNARY
from ..namespace_backend import NamespaceBackend

_FP64 = frozenset((np.dtype(np.float64), np.dtype(np.complex128)))
_FP16 = frozenset((np.dtype(np.float16),))
#: Level Zero preferred where a device is listed twice (dpnp's kernels run on either)
_DEVICES = discover(prefer_opencl=False)



def _real_rsqrt_only(fn: Any) -> Any:
    """dpnp's ``rsqrt`` has real loops only: complex operands take 1 / sqrt(x)."""
    if fn is None:
        return None

    def rsqrt(x: Any, out: Any = None) -> Any:
        if x.dtype.kind != "c":
            return fn(x) if out is None else fn(x, out=out)
        r = dpnp.reciprocal(dpnp.sqrt(x))
        if out is None:
            return r
        out[...] = r
        return out
    return rsqrt


_rsqrt = _real_rsqrt_only(getattr(dpnp, "rsqrt", None))


#: Backend API methods that call no dpnp code (identity, capability, bookkeeping), or that
#: wait for the queue (``synchronize``: others may submit meanwhile)
_NO_DPNP = frozenset((
    "device_count", "device_index", "device_info", "device_timer", "dtype_unsupported_reason",
    "hook", "memory_stats", "supports_dtype", "synchronize", "unavailable_reason", "version",
    "wide_accumulation", "accepts_dlpack_device"))


def _dpnp_entry_points(be: Any) -> list[str]:
    """The names of ``be``'s public callables that may call into dpnp: all of them (the
    primitives, reductions, host reads, hooks, ``linalg_*``/``fft_*`` routines and any
    attribute added later) less ``_NO_DPNP``. Counted from ``be`` itself rather than from a
    list, because a missed one races (``sync.DPNP_LOCK``): the reductions, absent from
    ``dir(Backend)``, still hung 1 run in 44 of ``tests/backends/test_threads_upload.py``."""
    return sorted(n for n in dir(be)
                  if not n.startswith("_") and n not in _NO_DPNP
                  and callable(getattr(be, n, None)) and not isinstance(
                      inspect.getattr_static(type(be), n, None), (property, staticmethod, type)))


class SyclBackend(NamespaceBackend):
    """Device type ``sycl``: every SYCL device dpctl sees (Intel GPUs through Level Zero,
    CPUs through Intel's OpenCL runtime, ...), dpnp arrays, asynchronous queues."""

    name = "sycl"
    asynchronous = True
    xp = dpnp
    widens_bfloat16 = True  # dpnp has no bfloat16: held as float32 on bfloat16's grid
    #: ops that copy data to the host to compute (shown by ``omnitensor info``): none; the
    #: gaps dpnp leaves are filled by device composites in ``sycl_ops``
    host_fallback_ops: tuple[str, ...] = ()

    def __init__(self) -> None:
        super().__init__()
        self._devices = list(_DEVICES)
        self._queues = [dpctl.get_device_cached_queue(d) for d in self._devices]
        self._kw = [{"sycl_queue": q} for q in self._queues]
        self._fp64 = [bool(d.has_aspect_fp64) for d in self._devices]
        self._fp16 = [bool(d.has_aspect_fp16) for d in self._devices]
        # dtypes some device lacks: only these need a check on the hot path
        self._risky = frozenset((_FP64 if not all(self._fp64) else frozenset())
                                | (_FP16 if not all(self._fp16) else frozenset()))
        self.erf = sycl_ops.erf  # dpnp keeps erf/erfc in dpnp.scipy.special
        self.erfc = sycl_ops.erfc
        if _rsqrt is not None:
            self.rsqrt = _rsqrt  # optional fast path core looks up
        # oneMKL VM waits for earlier kernels holding the GIL, a deadlock (sync.py): which
        # elementwise ops may reach it, judged on dpnp's own functions before wrapping
        onemkl_ops = [n for n in UNARY + BINARY + ("rsqrt",)
                      if getattr(self, n, None) is not None
                      and sync.may_call_onemkl(getattr(self, n))]
        for name in BINARY:
            fn = getattr(self, name, None)
            if getattr(fn, "binary_inplace_fn_", True) is None:
                setattr(self, name, sycl_ops.out_may_alias_x1(fn))
        for name in BINARY:  # integer array with a Python int: dpnp leaks (sycl_ops)
            fn = getattr(self, name, None)
            if fn is not None:
                setattr(self, name, sycl_ops.int_scalar_as_array(fn))
        self._pools = [sycl_pool.DevicePool(q, sycl_pool.default_limit(d.global_mem_size))
                       for q, d in zip(self._queues, self._devices)]
        for i, p in enumerate(self._pools):
            p.name = f"sycl:{i}"
        self._pooling = any(p.limit > 0 for p in self._pools)
        if self._pooling:  # elementwise results of >= 256 KiB reuse cached allocations
            for name in UNARY + ("rsqrt",):
                fn = self.__dict__.get(name)  # bound dpnp functions, not our methods
                if fn is not None:
                    setattr(self, name, sycl_pool.pooled_unary(fn, self._pool_of, name,
                                                               name in PREDICATES))
            for name in BINARY:
                fn = self.__dict__.get(name)
                if fn is not None:
                    setattr(self, name, sycl_pool.pooled_binary(fn, self._pool_of, name,
                                                                name in PREDICATES))
        for name in onemkl_ops:
            setattr(self, name, sync.waits_outside_gil(getattr(self, name)))
        for name in list(self.__dict__):  # oneMKL LAPACK/FFT run host tasks and wait too
            if name.startswith(("linalg_", "fft_")):
                setattr(self, name, sync.one_at_a_time(sync.drains_first(self.__dict__[name])))
        for name in _dpnp_entry_points(self):  # one thread inside dpnp at a time (sync.py)
            setattr(self, name, sync.serialized(getattr(self, name)))

    # ------------------------------------------------------------ identity, capability
    def unavailable_reason(self) -> str | None:
        if self._devices:
            return None
        why = "dpctl lists no SYCL device"
        if _DISCOVERY_ERROR:
            why += f" (device enumeration failed: {_DISCOVERY_ERROR})"
        return f"{why}. {_ENV.describe()}"

    def version(self) -> str:
        parts = [f"dpctl {dpctl.__version__}", f"dpnp {dpnp.__version__}"]
        try:
            from importlib import metadata
            parts.append(f"intel-opencl-rt {metadata.version('intel-opencl-rt')}")
        except Exception:  # noqa: BLE001 - optional component
            pass
        return ", ".join(parts)

    def device_count(self) -> int:
        return len(self._devices)

    def device_info(self, index: int) -> dict[str, Any]:
        d = self._devices[index]
        info = {
            "name": d.name,
            "vendor": d.vendor,
            "driver": d.driver_version,
            "memory": int(d.global_mem_size),
            "compute_units": int(d.max_compute_units),
            "fp16": self._fp16[index],
            "fp64": self._fp64[index],
            "platform": f"SYCL {_enum_name(d.backend)} {_enum_name(d.device_type)}",
            "filter": d.filter_string,
        }
        notes = [f"{d.vendor}, driver {d.driver_version}, SYCL filter {d.filter_string}"]
        if not self._fp64[index]:
            notes.append("no fp64 aspect: float64/complex128 unavailable")
        if not self._fp16[index]:
            notes.append("no fp16 aspect: float16 unavailable")
        notes.append("bfloat16 held widened to float32 (dpnp has no bfloat16)")
        info["notes"] = notes
        return info

    def wide_accumulation(self, x: Any) -> bool:
        """float64 accumulators only where the device has the fp64 aspect (Arc GPUs lack
        it)."""
        return bool(x.sycl_device.has_aspect_fp64)

    def supports_dtype(self, dtype: np.dtype, index: int) -> bool:
        dtype = np.dtype(dtype)
        if dtype in _FP64:
            return self._fp64[index]
        if dtype in _FP16:
            return self._fp16[index]
        return True

    def dtype_unsupported_reason(self, dtype: np.dtype, index: int) -> str | None:
        if self.supports_dtype(dtype, index):
            return None
        aspect = "fp64" if np.dtype(dtype) in _FP64 else "fp16"
        return (f"the SYCL device {self._devices[index].name!r} lacks the {aspect} aspect "
                f"(has_aspect_{aspect} is False), so it cannot compute {np.dtype(dtype)}")

    def _check_dtype(self, dtype: Any, index: int) -> None:
        """Raise our error before dpnp's (``double type is not supported on this
        device``), which names neither the device nor the fix."""
        dtype = np.dtype(dtype)
        if dtype in self._risky and not self.supports_dtype(dtype, index):
            name = self._devices[index].name
            raise DeviceDTypeError(
                f"sycl:{index} ({name}) cannot hold {dtype}: "
                f"{self.dtype_unsupported_reason(dtype, index)}. Use float32 (or complex64) "
                f"on this device, or another device.")

    def synchronize(self, index: int) -> None:
        self._queues[index].wait()

    def device_timer(self, index: int) -> Any:
        """The profiler's device timer: SYCL event profiling (the hook's contract is in
        backends/base.py; the mechanism in sycl/profiling.py)."""
        from .profiling import SyclDeviceTimer
        return SyclDeviceTimer(self._queues[index])

    def device_index(self, x: Any) -> int:
        q = x.sycl_queue
        for i, own in enumerate(self._queues):
            if q is own or q == own:
                return i
        dev = q.sycl_device
        for i, d in enumerate(self._devices):
            if d == dev:
                return i
        raise ValueError(f"the array lives on SYCL device {dev.name!r} "
                         f"({dev.filter_string}), which omnitensor does not list")

    def _device_kw(self, index: int) -> dict[str, Any]:
        return self._kw[index]

    # ---------------------------------------------------------------------- memory
    def _pool_of(self, x: Any) -> sycl_pool.DevicePool:
        pools = self._pools
        return pools[0] if len(pools) == 1 else pools[self.device_index(x)]

    def _big(self, shape: tuple[int, ...], dtype: Any) -> bool:
        """Whether a result of this size should come from the memory pool."""
        if not self._pooling:
            return False
        n = np.dtype(dtype).itemsize
        for s in shape:
            n *= s
        return n >= sycl_pool.MIN_BYTES

    def memory_stats(self, index: int) -> dict[str, int]:
        """Idle bytes cached by the device's memory pool and its cap; bytes the pool lends
        to live arrays (``allocated_bytes``: results under 256 KiB come from dpnp and are
        not counted) and those plus the cache (``reserved_bytes``)."""
        p = self._pools[index]
        return {"pool_cached_bytes": p.cached, "pool_limit_bytes": p.limit,
                "allocated_bytes": p.leased, "reserved_bytes": p.leased + p.cached,
                "peak_allocated_bytes": p.peak_leased, "peak_reserved_bytes": p.peak_reserved}

    def reset_peak_memory_stats(self, index: int) -> None:
        p = self._pools[index]
        p.peak_leased, p.peak_reserved = p.leased, p.leased + p.cached

    def empty_cache(self, index: int | None = None) -> None:
        """Return the idle cached allocations of one device (all when None) to the
        driver (torch.cuda.empty_cache)."""
        for i, p in enumerate(self._pools):
            if index is None or i == index:
                p.empty_cache()

    def empty(self, shape, dtype, index):
        if self._risky:
            self._check_dtype(dtype, index)
        if self._big(shape, dtype):
            return self._pools[index].empty(shape, dtype)
        return dpnp.empty(shape, dtype=dtype, sycl_queue=self._queues[index])

    def full(self, shape, value, dtype, index):
        if self._risky:
            self._check_dtype(dtype, index)
        if self._big(shape, dtype):
            return sycl_pool.fill(self._pools[index], shape, value, dtype)
        return dpnp.full(shape, value, dtype=dtype, sycl_queue=self._queues[index])

    def arange(self, start, step, n, dtype, index):
        if self._risky:
            self._check_dtype(dtype, index)
        return super().arange(start, step, n, dtype, index)

    def from_numpy(self, array, index):
        if self._risky:
            self._check_dtype(array.dtype, index)
        if self._big(array.shape, array.dtype):  # warm pages: twice as fast for 16 MB
            return sycl_pool.copy_into(self._pools[index], array, array.dtype)
        return dpnp.asarray(array, sycl_queue=self._queues[index])

    def to_numpy(self, x):
        return dpnp.asnumpy(x)  # waits for the kernels that produce x

    def transfer_from(self, x, src, index):
        """sycl -> sycl (another device, or an array on a foreign queue): USM copied by
        dpctl, device to device when the queues share a context (through the host
        otherwise, dpctl's choice); other sources: the base class (one copy from host
        memory) or None."""
        if src is not self:
            return super().transfer_from(x, src, index)
        dst_q = self._queues[index]
        if x.sycl_queue != dst_q:
            x.sycl_queue.wait()  # asynchronous: x's producers ran on another queue
            if x.sycl_queue.sycl_context == dst_q.sycl_context:
                x = x.to_device(dst_q)  # same memory, now on the destination queue
            else:
                return dpnp.array(x, sycl_queue=dst_q, copy=True, order="C")
        return self.copy(x)

    def astype(self, x, dtype):
        if self._risky:
            self._check_dtype(dtype, self.device_index(x))
        if self._big(x.shape, dtype):
            return sycl_pool.copy_into(self._pool_of(x), x, dtype)
        return x.astype(dtype)

    def copy(self, x):
        if self._big(x.shape, x.dtype):
            return sycl_pool.copy_into(self._pool_of(x), x, x.dtype)
        return dpnp.copy(x, order="C")

    def contiguous(self, x):
        return x if x.flags.c_contiguous else self.copy(x)

    def where(self, cond, a, b):
        x = a if isinstance(a, dpnp.ndarray) else b
        if (a is not x or b is not x) and min(cond.strides, default=0) < 0:
            # dpnp 0.20 mixes up where(cond, array, scalar) when cond and the array are
            # both negatively strided (flipped views): a C-ordered condition is correct
            cond = dpnp.ascontiguousarray(cond)
        if isinstance(x, dpnp.ndarray) and self._big(cond.shape, x.dtype):
            return dpnp.where(cond, a, b, out=self._pool_of(cond).empty(cond.shape, x.dtype))
        return dpnp.where(cond, a, b)

    def matmul(self, a, b):
        with sync.ONEMKL_LOCK:  # threads take turns inside oneMKL (sync.py)
            return self._matmul(a, b)

    def _matmul(self, a, b):
        # dpnp hands stride-0 (broadcast) matrix axes to oneMKL, which rejects them
        # (gemv: "Illegal value supplied for parameter incx"; gemm: "not c-contiguous
        # nor f-contiguous"): materialise those operands first
        if sycl_ops.broadcast_matrix(a):
            a = self.copy(a)
        if sycl_ops.broadcast_matrix(b):
            b = self.copy(b)
        if a.dtype == np.float16 and (a.ndim == 1 or b.ndim == 1 or a.shape[-2] == 1
                                      or b.shape[-1] == 1):
            # oneMKL has no float16 gemv ("No gemv implementation is available..."):
            # accumulate in float32 (as torch's CPU half matmul does), round once
            return dpnp.matmul(a.astype(np.float32), b.astype(np.float32)).astype(np.float16)
        if self._big(a.shape[:-1] + b.shape[-1:], a.dtype) and a.ndim >= 2 and \
                a.shape[:-2] == b.shape[:-2]:
            out = self._pool_of(a).empty(a.shape[:-1] + b.shape[-1:], a.dtype)
            return dpnp.matmul(a, b, out=out)
        return dpnp.matmul(a, b)

    def _first_nan_wins(self, r, x, axis, keepdims):
        """A NaN is the extreme (torch), the first one along the axis; dpnp's tree
        reduction may answer a later NaN."""
        if x.dtype.kind != "f" or x.size == 0:
            return r
        nan = dpnp.isnan(x)
        first = dpnp.argmax(nan, axis=axis, keepdims=keepdims).astype(np.int64, copy=False)
        return dpnp.where(dpnp.any(nan, axis=axis, keepdims=keepdims), first, r)

    def bitwise_right_shift(self, a, b, out=None):
        """NumPy's rule for counts outside [0, bits) of a signed type: the sign fills the
        result (-1 or 0); dpnp gives 0 for negative operands."""
        r = dpnp.right_shift(a, b, out=out)
        x = a if isinstance(a, dpnp.ndarray) else b
        if x.dtype.kind != "i" or not isinstance(b, dpnp.ndarray) and 0 <= b < 8 * x.dtype.itemsize:
            return r
        bits = 8 * x.dtype.itemsize
        wide = (b < 0) | (b >= bits)
        fill = dpnp.where(a < 0, -1, 0).astype(x.dtype) if isinstance(a, dpnp.ndarray) \
            else (-1 if a < 0 else 0)
        return dpnp.where(wide, fill, r, out=r)

    def floor_divide(self, a, b, out=None):
        x = a if isinstance(a, dpnp.ndarray) else b
        if x.dtype.kind != "f":
            return dpnp.floor_divide(a, b, out=out)
        r = sycl_ops.floor_divide_float(a, b)  # dpnp's floor(a / b) is off by one
        if out is None:
            return r
        out[...] = r
        return out

    def conj(self, x, out=None):
        """dpnp's conj turns bool into int8; conj of a real array is a copy of it."""
        if x.dtype.kind == "c":
            return dpnp.conj(x, out=out)
        if out is None:
            return dpnp.copy(x)
        if out is not x:
            out[...] = x
        return out

    # ----------------------------------------------------------------- reductions
    def argmax(self, x, axis, keepdims):
        r = dpnp.argmax(x, axis=axis, keepdims=keepdims)  # already int64: no copy
        return self._first_nan_wins(r, x, axis, keepdims)

    def argmin(self, x, axis, keepdims):
        return self._first_nan_wins(dpnp.argmin(x, axis=axis, keepdims=keepdims), x, axis,
                                    keepdims)

    # ------------------------------------------------------------------- indexing
    def scatter_nd(self, x, indices, values, accumulate):
        if accumulate:  # dpnp has no add.at: sort + segmented sum on the device
            sycl_ops.scatter_add(x, tuple(indices), values, x.sycl_queue)
        else:
            x[tuple(indices)] = values

    def nonzero(self, x):
        return tuple(dpnp.nonzero(x))  # int64 already

    # -------------------------------------------------------------------- sorting
    # dpnp sorts natively in both directions: stable descending keeps equal elements in
    # order and puts NaN first, as the flip-based generic version does, in one kernel
    def sort(self, x, axis, descending, stable):
        return dpnp.sort(x, axis=axis, descending=descending, stable=stable or None)

    def argsort(self, x, axis, descending, stable):
        return dpnp.argsort(x, axis=axis, descending=descending, stable=stable or None)

    def searchsorted(self, sorted_x, values, side):
        if sorted_x.ndim == 1:
            return dpnp.searchsorted(sorted_x, values, side=side)
        return sycl_ops.searchsorted_batched(sorted_x, values, side, sorted_x.sycl_queue)

    # ------------------------------------------------------------------- DLPack
    def acosh(self, x, out=None):
        """dpnp's complex acosh gives NaN+NaNj for +0+NaNj; the standard (C99) says
        NaN+(pi/2)j."""
        r = dpnp.arccosh(x)
        if x.dtype.kind == "c":
            hit = dpnp.logical_and(dpnp.real(x) == 0, dpnp.isnan(dpnp.imag(x)))
            r = dpnp.where(hit, dpnp.asarray(complex(math.nan, math.pi / 2), dtype=x.dtype,
                                             sycl_queue=x.sycl_queue), r)
        if out is None:
            return r
        out[...] = r
        return out

    def index_advanced(self, x, key):
        """dpnp indexes natively only when the advanced entries are adjacent; other keys
        take core's gather_nd path."""
        _check_adjacent_advanced(key)
        return x[key]

    def index_put_advanced(self, x, key, values):
        _check_adjacent_advanced(key)
        x[key] = values

    def accepts_dlpack_device(self, dl_device_type: int) -> bool:
        return dl_device_type == 14  # kDLOneAPI

    def from_dlpack(self, x: Any) -> tuple[Any, int]:
        """(array on our queue, device index) for a DLPack producer on a SYCL device;
        re-associating it with our queue is free on the same device."""
        arr = dpnp.from_dlpack(x)
        index = self.device_index(arr)
        q = self._queues[index]
        if arr.sycl_queue is not q:
            arr = arr.to_device(q)
        return arr, index


def _check_adjacent_advanced(key: tuple) -> None:
    """NotImplementedError unless the array entries of ``key`` form one contiguous run
    (dpnp rejects advanced indices separated by slices)."""
    pos = [i for i, k in enumerate(key) if not (k is None or isinstance(k, (int, slice)))]
    if pos and pos[-1] - pos[0] + 1 != len(pos):
        raise NotImplementedError("non-adjacent advanced indices")
