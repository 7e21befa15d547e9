"""``OpenCLBackend``: the backend contract (``backends/base.py``) on PyOpenCL.

Every primitive runs generated OpenCL kernels on the device's in-order queue and returns
without waiting (``asynchronous = True``); ``to_numpy`` and ``synchronize`` wait. Views are
metadata on a shared buffer (``array.py``). Kernel sources come from ``omnitensor.kernels``
(OpenCL C dialect); compiling, caching and launching each family live in their own modules:
``elementwise``/``ufunc`` (unary, binary, where, casts, copies), ``reduce`` (axis reductions,
argmax/argmin), ``scan`` (cumsum/cumprod, nonzero), ``sort`` (sort, argsort, searchsorted),
``indexing`` (gather/scatter, concat, pad), ``gemm`` (matmul) and ``random`` (Philox).
"""
from __future__ import annotations

import math
import threading
from typing import Any, Sequence

import functools
import ml_dtypes
import numpy as np
import pyopencl as cl

from ...kernels.primitives import names
from ..base import Backend
from . import array as A
from . import device as D
from . import elementwise as ew
from . import argreduce, dlpack, gemm, indexing, memory, random, reduce, scan, sort
from .array import CLArray, c_strides, new
from .ufunc import Binary, Unary


_BF16 = np.dtype(ml_dtypes.bfloat16)
_F32 = np.dtype(np.float32)


def _bfloat16_via_float32(method: Any) -> Any:
    """``method`` with bfloat16 operands widened to float32 and a float32 result rounded
    back. Casts, moves and elementwise kernels handle bfloat16 themselves (its CType loads
    and stores float); reductions, scans, sorts and GEMM would read its ushort bits as an
    integer. Core already computes bfloat16 in float32 before calling these
    (core/ops/storage_dtypes.py): this keeps every other caller right too."""
    @functools.wraps(method)
    def call(self: Any, x: Any, *args: Any) -> Any:
        if x.dtype != _BF16 and not (args and getattr(args[0], "dtype", None) == _BF16):
            return method(self, x, *args)
        wide = [ew.astype(a, _F32) if a.__class__ is CLArray and a.dtype == _BF16 else a
                for a in (x, *args)]
        r = method(self, *wide)
        return ew.astype(r, _BF16) if r.__class__ is CLArray and r.dtype == _F32 else r
    return call


class OpenCLBackend(Backend):
    """Device type ``opencl``: every OpenCL device of every platform, in the order of
    ``pyopencl.get_platforms()`` and then ``platform.get_devices()``."""

    name = "opencl"
    asynchronous = True
    generated_gemm = True  # matmul is kernels/gemm.py's: compiled replays fuse epilogues in

    def __init__(self) -> None:
        self._states: dict[int, D.DeviceState] = {}
        self._lock = threading.Lock()
        for nm in names(1):  # the primitives and the sigmoid/rsqrt hooks: the op table's rows
            setattr(self, nm, Unary(nm))
        for nm in names(2):
            setattr(self, nm, Binary(nm))

    # --------------------------------------------------------- identity, capability
    def unavailable_reason(self) -> str | None:
        if D.cl_devices():
            return None
        skipped = D.skipped_devices()
        if skipped:
            return "no usable OpenCL device: " + "; ".join(skipped)
        why = D.enumeration_error() or "the OpenCL ICD loader found platforms without devices"
        return (f"no OpenCL device found ({why}). Check that an OpenCL driver (ICD) is "
                f"installed and registered (`clinfo` lists it; /etc/OpenCL/vendors/*.icd), "
                f"or install the portable CPU driver: pip install pocl-binary-distribution")

    def version(self) -> str:
        plats = [f"{p.name.strip()} {p.version.strip()}" for p in D.platforms()]
        plats += [f"left out: {s}" for s in D.skipped_devices()]
        return f"pyopencl {cl.VERSION_TEXT}" + (f"; {'; '.join(plats)}" if plats else "")

    def device_count(self) -> int:
        return len(D.cl_devices())

    def device_info(self, index: int) -> dict[str, Any]:
        dev = D.cl_devices()[index]
        info = {
            "name": dev.name.strip(),
            "platform": dev.platform.name.strip(),
            "vendor": dev.vendor.strip(),
            "compute_units": int(dev.max_compute_units),
            "memory": int(dev.global_mem_size),
            "max_alloc": int(dev.max_mem_alloc_size),
            "fp64": D.has_ext(dev, "cl_khr_fp64") or bool(dev.double_fp_config),
            "fp16": D.has_ext(dev, "cl_khr_fp16"),
            "driver": dev.driver_version.strip(),
            "opencl": dev.version.strip(),
            "type": cl.device_type.to_string(dev.type),  # type: ignore[operator]  # stubs: a class
        }
        if not info["fp16"]:
            if D.dtype_reason(dev, np.dtype("float16")) is None:
                info["notes"] = ("no cl_khr_fp16: float16 emulated (OMNITENSOR_OPENCL_FP16="
                                 "emulate: stored as half, computed in float)")
            else:
                info["notes"] = ("no cl_khr_fp16: float16 tensors are not supported "
                                 "(OMNITENSOR_OPENCL_FP16=emulate stores them as half and "
                                 "computes in float)")
        return info

    def supports_dtype(self, dtype: np.dtype, index: int) -> bool:
        return D.dtype_reason(D.cl_devices()[index], np.dtype(dtype)) is None

    def dtype_unsupported_reason(self, dtype: np.dtype, index: int) -> str | None:
        return D.dtype_reason(D.cl_devices()[index], np.dtype(dtype))

    def state(self, index: int) -> D.DeviceState:
        """The lazily created per-device state (context, queue, pool, caches)."""
        st = self._states.get(index)
        if st is None:
            with self._lock:
                st = self._states.get(index)
                if st is None:
                    st = self._states[index] = D.DeviceState(index, D.cl_devices()[index])
        return st

    def synchronize(self, index: int) -> None:
        st = self._states.get(index)
        if st is not None:
            st.synchronize()

    def fused_kernels(self) -> Any:
        """The launcher of ``omnitensor.compile``'s fused kernels: OpenCL C through this
        backend's program cache (the hook's contract is in backends/base.py)."""
        from .fused import Kernel
        return Kernel

    def device_timer(self, index: int) -> Any:
        """The profiler's device timer: kernels' OpenCL profiling events (the hook's
        contract is in backends/base.py; the mechanism in opencl/profiling.py)."""
        from .profiling import OpenCLDeviceTimer
        return OpenCLDeviceTimer(self.state(index))

    def device_index(self, x: Any) -> int:
        return x.state.index

    def empty_cache(self, index: int | None = None) -> None:
        """Return pooled device memory no tensor uses to the driver."""
        for i, st in list(self._states.items()):
            if index is None or i == index:
                st.empty_cache()

    def memory_stats(self, index: int) -> dict[str, int]:
        """Bytes of the device's pool: held by tensors (``allocated_bytes``) and managed in
        all, cached blocks included (``reserved_bytes``), torch's two numbers."""
        st = self._states.get(index)
        if st is None:
            return {"allocated_bytes": 0, "reserved_bytes": 0, "peak_allocated_bytes": 0,
                    "peak_reserved_bytes": 0}
        return {"allocated_bytes": int(st.pool.active_bytes),
                "reserved_bytes": int(st.pool.managed_bytes),
                "peak_allocated_bytes": int(st.peak_active),
                "peak_reserved_bytes": int(st.peak_managed)}

    def reset_peak_memory_stats(self, index: int) -> None:
        st = self._states.get(index)
        if st is not None:
            st.peak_active = int(st.pool.active_bytes)
            st.peak_managed = int(st.pool.managed_bytes)

    # ----------------------------------------------------------------------- memory
    def empty(self, shape, dtype, index):
        st = self.state(index)
        st.check_dtype(np.dtype(dtype))
        return new(st, tuple(shape), np.dtype(dtype))

    def full(self, shape, value, dtype, index):
        return memory.full(self.state(index), tuple(shape), value, np.dtype(dtype))

    def arange(self, start, step, n, dtype, index):
        return memory.arange(self.state(index), start, step, int(n), np.dtype(dtype))

    def from_numpy(self, array, index):
        return memory.from_numpy(self.state(index), array)

    def to_numpy(self, x):
        return memory.to_numpy(x)

    def astype(self, x, dtype):
        return ew.astype(x, np.dtype(dtype))

    def copy(self, x):
        return ew.copy(x)

    def contiguous(self, x):
        return x if x.contig else ew.copy(x)

    def strides(self, x):
        return x.strides

    def memory_span(self, x):
        # views share their buffer object; distinct buffers never share memory
        if not x.size:
            return (0, 0, 0)
        lo = hi = x.offset
        for n, st in zip(x.shape, x.strides):
            if st < 0:
                lo += (n - 1) * st
            else:
                hi += (n - 1) * st
        item = x.dtype.itemsize
        return (int(x.data.int_ptr), lo * item, (hi + 1) * item)

    def assign(self, dst, src):
        if dst.size:
            ew.copy_into(dst, src)

    # ------------------------------------------------------------------ elementwise
    def where(self, cond, a, b):
        arr = a if a.__class__ is CLArray else b if b.__class__ is CLArray else None
        dtype = arr.dtype  # core passes at least one array operand (the contract)
        return ew.where(cond, a, b, dtype, cond.shape)

    # ------------------------------------------------------------------- reductions
    def sum(self, x, axes, keepdims):
        return reduce.reduce("sum", x, axes, keepdims)

    def prod(self, x, axes, keepdims):
        return reduce.reduce("prod", x, axes, keepdims)

    def max(self, x, axes, keepdims):
        return reduce.reduce("max", x, axes, keepdims)

    def min(self, x, axes, keepdims):
        return reduce.reduce("min", x, axes, keepdims)

    def any(self, x, axes, keepdims):
        return reduce.reduce("any", x, axes, keepdims)

    def all(self, x, axes, keepdims):
        return reduce.reduce("all", x, axes, keepdims)

    def argmax(self, x, axis, keepdims):
        return argreduce.argreduce("argmax", x, axis, keepdims)

    def argmin(self, x, axis, keepdims):
        return argreduce.argreduce("argmin", x, axis, keepdims)

    def cumsum(self, x, axis):
        return scan.cumulative("sum", x, axis)

    def cumprod(self, x, axis):
        return scan.cumulative("prod", x, axis)

    # --------------------------------------------------------------------- movement
    def reshape(self, x, shape, copy=None):
        shape = tuple(shape)
        # the contract passes a resolved shape (core expands -1); a bad one would otherwise
        # only fail later, inside a kernel launch, far from the cause
        if math.prod(shape) != x.size or any(n < 0 for n in shape):
            raise ValueError(f"reshape: the OpenCL backend needs a resolved shape of "
                             f"{x.size} elements for an array of shape {x.shape}, got "
                             f"{shape} (core resolves -1 before calling the backend)")
        if copy:
            y = ew.copy(x)
            return A.view(y, shape, c_strides(shape), 0)
        st = c_strides(shape) if x.contig else A.reshape_strides(x.shape, x.strides, shape)
        if st is None:
            if copy is False:
                raise ValueError(f"cannot reshape a view of shape {x.shape} with strides "
                                 f"{x.strides} to {shape} without copying (copy=False)")
            y = ew.copy(x)
            return A.view(y, shape, c_strides(shape), 0)
        return A.view(x, shape, st, x.offset)

    def assign_from_host(self, dst, host):
        """A blocking write of host memory straight into a contiguous dst's buffer;
        strided views go through a device copy (the base class's path)."""
        if dst.contig:
            memory.write_into(dst, host)
        else:
            super().assign_from_host(dst, host)

    def permute(self, x, axes):
        return A.permute(x, tuple(axes))

    def broadcast_to(self, x, shape):
        return A.broadcast_to(x, tuple(shape))

    def index(self, x, key):
        return A.index(x, key)

    def flip(self, x, axes):
        return A.flip(x, tuple(axes))

    def concat(self, xs: Sequence[Any], axis: int):
        return indexing.concat(list(xs), axis)

    def pad(self, x, widths, value):
        return indexing.pad(x, widths, value)

    def diagonal(self, x, offset, axis1, axis2):
        return A.diagonal(x, offset, axis1, axis2)

    def as_strided(self, base, shape, strides, offset):
        return A.view(base, tuple(shape), tuple(strides), base.offset + offset)

    # --------------------------------------------------------------------- indexing
    def gather_nd(self, x, indices):
        if not indices:  # a 0-d x: no index arrays (the kernels take at least one)
            return ew.copy(x)
        return indexing.gather_nd(x, tuple(indices))

    def scatter_nd(self, x, indices, values, accumulate):
        if accumulate and x.dtype == _BF16:  # add in float32 (the kernels add bits)
            wide = ew.astype(x, _F32)
            vals = ew.astype(values, _F32) if values.__class__ is CLArray else values
            self.scatter_nd(wide, indices, vals, accumulate)
            ew.copy_into(x, ew.astype(wide, _BF16))
            return
        if not indices:  # a 0-d x: x = values, or x += values
            if accumulate:
                self.add(x, values, out=x)
            else:
                self.assign(x, values)
            return
        indexing.scatter_nd(x, tuple(indices), values, bool(accumulate))

    def nonzero(self, x):
        return scan.nonzero(x)

    # ---------------------------------------------------------------------- sorting
    def sort(self, x, axis, descending, stable):
        return sort.sort(x, axis, descending, values=True)

    def argsort(self, x, axis, descending, stable):
        return sort.sort(x, axis, descending, values=False)

    def searchsorted(self, sorted_x, values, side):
        return sort.searchsorted(sorted_x, values, side)

    # --------------------------------------------------------------- linear algebra
    def matmul(self, a, b):
        return gemm.matmul(a, b)

    # ----------------------------------------------------------------------- random
    def random_bits(self, shape, key, counter, index):
        return random.random_bits(self.state(index), tuple(shape), key, counter)

    # ----------------------------------------------------------------- device copies
    def host_view(self, x):
        """The mapped buffer (no copy) on a host-memory device (PoCL's CPU device...);
        None on a device with its own memory."""
        return dlpack.host_view(x) if dlpack.host_memory(x.state) else None

    def transfer_from(self, x, src, index):
        """opencl -> opencl within one context: a device-side buffer copy; a source in
        host memory (NumPy, a host-memory OpenCL device): one copy from the mapped memory
        (the base class); anything else: None (core copies through the host)."""
        if src is self:
            dst = self.state(index)
            if x.state.ctx == dst.ctx:
                return memory.copy_to_device(x, dst)
        return super().transfer_from(x, src, index)

    # ----------------------------------------------------------------------- DLPack
    def dlpack_device(self, x):
        """(kDLCPU, 0) on a host-memory device (PoCL), else (kDLOpenCL, index)."""
        return dlpack.device(x)

    def dlpack_export(self, x, *, copy=None, dl_device=None, max_version=None):
        """Zero-copy capsule of the mapped buffer on a host-memory device; a host copy
        otherwise, when ``dl_device=(1, 0)`` and a copy is allowed (see ``dlpack.py``)."""
        return dlpack.export(x, copy=copy, dl_device=dl_device, max_version=max_version)


for _name in ("sum", "prod", "max", "min", "any", "all", "argmax", "argmin", "cumsum",
              "cumprod", "sort", "argsort", "searchsorted", "matmul"):
    setattr(OpenCLBackend, _name, _bfloat16_via_float32(getattr(OpenCLBackend, _name)))
