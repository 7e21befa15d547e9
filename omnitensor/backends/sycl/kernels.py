"""Generated kernels on SYCL devices: OpenCL C from :mod:`omnitensor.kernels`, built by dpctl.

``dpctl.program.create_program_from_source`` builds OpenCL C only on a device whose SYCL
backend is OpenCL (here Intel's OpenCL CPU runtime); a Level Zero device (Intel GPUs) takes
SPIR-V alone, so :func:`available` is False there and those devices keep dpnp's kernels.

:class:`Launcher` runs the same NumPy-exact elementwise kernels the OpenCL backend runs, on
contiguous dpnp arrays of one dtype (Python-scalar operands too), and keeps dpnp's ordering
rules: each launch depends on the queue's unfinished work (dpctl's
``SequentialOrderManager``, which dpnp's kernels register with) and registers its own
event there, so dpnp kernels that follow wait for it. The queue is out of order, so without
that a kernel could read an upload that has not landed yet. USM arguments are kept alive
until the kernel ran by a dpctl host task (``_submit_keep_args_alive``), as dpnp does
(``keep_alive = "events"`` instead holds them with the kernel's event and drops them once a
later launch sees it complete: no host task, but it measured no faster).

Measured (``benchmarks/sycl_generated_kernels.py``, Intel OpenCL CPU runtime, 2 busy
cores): the bare ``submit_async`` costs ~20-30 us, but a usable op (result allocation,
ordering, keep-alive) ~170-530 us against dpnp's ~110-150 us for an 8-element float32 add,
so eager sycl ops keep dpnp's kernels. Where a launch pays off is a compiled (fused) kernel,
one launch replacing several dpnp calls.

Programs are one per (op, dtype) (the Intel OpenCL CPU compiler takes ~13 s for a whole
family program of the OpenCL backend, ~0.5-1 s for one op), built on first use and cached
for the process.

``benchmarks/sycl_generated_kernels.py`` measures a launch through this path against dpnp's
own per-call cost.
"""
from __future__ import annotations

import collections
from typing import Any

import dpctl
import dpctl.program as dpp
import numpy as np
from dpctl.utils import SequentialOrderManager

from ...errors import BackendError
from ...kernels import ops
from ...kernels.ctype import BY_NP, CType
from ...kernels.dialect import SYCL
from ...kernels.elementwise import kernel_type, op_kernel_source, out_type, pack_params
from ...kernels.helpers import helpers

#: elements per work-item below which one work-item does everything (CPU devices)
_MIN_CHUNK = 8192
#: NumPy divides and takes square roots correctly rounded (OpenCL allows 2.5 ulp otherwise)
_OPTIONS = "-cl-fp32-correctly-rounded-divide-sqrt"


def available(queue: Any) -> bool:
    """Whether OpenCL C programs can be built for ``queue``'s device (OpenCL backend and
    dpctl's raw by-value kernel arguments, needed for the parameter struct)."""
    try:
        return (queue.sycl_device.backend == dpctl.backend_type.opencl
                and bool(dpctl.RawKernelArg.is_available()))
    except Exception:  # noqa: BLE001 - an old dpctl without these: not available
        return False


class Launcher:
    """Builds, caches and launches generated elementwise kernels on one SYCL queue."""

    def __init__(self, queue: Any) -> None:
        self.queue = queue
        self.order = SequentialOrderManager[queue]
        self.programs: dict[tuple[str, str], Any] = {}
        self.kernels: dict[tuple[str, str, str], Any] = {}
        dev = queue.sycl_device
        self.is_cpu = bool(dev.is_cpu)
        self.max_groups = 16 * int(dev.max_compute_units)
        self.keep_alive = "host_task"  # dpnp's way; or "events", or "" (nothing: unsafe)
        self.pending: collections.deque = collections.deque()
        self._done = dpctl.event_status_type.complete

    # --------------------------------------------------------------------- build
    def kernel(self, op: str, t: CType, variant: str = "") -> Any:
        """The kernel ``ew_<op>_<key><variant>`` (one program per op and dtype)."""
        k = self.kernels.get((op, t.key, variant))
        if k is None:
            k = self.kernels[(op, t.key, variant)] = self._program(op, t).get_sycl_kernel(
                f"ew_{op}_{t.key}{variant}")
        return k

    def _program(self, op: str, t: CType) -> Any:
        key = (op, t.key)
        prg = self.programs.get(key)
        if prg is None:
            src = op_kernel_source(op, t, SYCL)
            if src is None:
                raise KeyError(f"{op} is not computed for {t.np}")
            try:
                prg = dpp.create_program_from_source(self.queue,
                                                     SYCL.prelude + helpers(t, SYCL) + src,
                                                     _OPTIONS)
            except Exception as e:  # noqa: BLE001 - dpctl raises its own types
                raise BackendError(f"building the generated OpenCL C kernel {op} "
                                   f"({t.np}) for {self.queue.sycl_device.name} "
                                   f"failed: {e}") from None
            self.programs[key] = prg
        return prg

    def split(self, n: int) -> tuple[int, int]:
        """(work-items, elements per work-item) of a pass over ``n`` elements."""
        if not self.is_cpu:
            return -(-n // 64) * 64, 1
        if n <= _MIN_CHUNK:
            return 1, n
        groups = min(self.max_groups, n // _MIN_CHUNK)
        chunk = (-(-n // groups) + 15) & ~15
        return -(-n // chunk), chunk

    def submit(self, k: Any, usm: list, params: bytes, items: int) -> None:
        """Enqueue ``k(usm..., params)`` after the queue's unfinished work."""
        order = self.order
        lsize = [1] if self.is_cpu else [64]
        ev = self.queue.submit_async(k, [*usm, dpctl.RawKernelArg(params)], [items], lsize,
                                     order.submitted_events)
        ht = ev
        if self.keep_alive == "events":
            pending = self.pending
            pending.append((ev, usm))
            done = self._done
            while pending and pending[0][0].execution_status == done:
                pending.popleft()
            if len(pending) > 4096:  # nothing completed for a long while: wait for one
                pending.popleft()[0].wait()
        elif self.keep_alive == "host_task":
            ht = self.queue._submit_keep_args_alive(usm, [ev])
        order.add_event_pair(ht, ev)

    # ------------------------------------------------------------------- launches
    def elementwise(self, op: str, operands: tuple, ref: Any, out: Any) -> Any:
        """``out = op(operands)`` for contiguous dpnp arrays of ``ref``'s dtype and shape or
        Python scalars; ``out`` a fresh contiguous array of the result dtype."""
        t = BY_NP[ref.dtype]
        kt = kernel_type(op, t)
        n = ref.size
        if n == 0:
            return out
        mode = 0
        usm = [out.get_array().usm_data]
        offs = []
        scal = []
        for i, x in enumerate(operands):
            if isinstance(x, (int, float, bool, complex, np.generic)):
                mode |= 1 << i
                usm.append(usm[0])  # never dereferenced: the scalar is hoisted
                offs.append(0)
                scal.append(t.pack(x))
            else:
                arr = x.get_array()
                usm.append(arr.usm_data)
                offs.append(arr._element_offset)
                scal.append(t.zero)
        usm.append(usm[1])  # the layout pointer (unused by contiguous variants)
        items, chunk = self.split(n)
        variant = "" if mode == 0 else f"_m{mode}"
        oo = out.get_array()._element_offset
        self.submit(self.kernel(op, kt, variant), usm,
                    pack_params(oo, offs, n, chunk, mode, scal), items)
        return out

    def result_dtype(self, op: str, dtype: np.dtype) -> np.dtype:
        res = out_type(op, BY_NP[dtype]).np
        assert res is not None
        return res

    def unary(self, op: str, x: Any) -> Any:
        import dpnp
        out = dpnp.empty(x.shape, dtype=self.result_dtype(op, x.dtype), sycl_queue=self.queue)
        return self.elementwise(op, (x,), x, out)

    def binary(self, op: str, a: Any, b: Any) -> Any:
        import dpnp
        ref = b if isinstance(a, (int, float, bool, complex)) else a
        out = dpnp.empty(ref.shape, dtype=self.result_dtype(op, ref.dtype),
                         sycl_queue=self.queue)
        return self.elementwise(op, (a, b), ref, out)


def computes(op: str, dtype: np.dtype) -> bool:
    """Whether a generated kernel exists for ``op`` on ``dtype``."""
    t = BY_NP.get(dtype)
    if t is None or op not in ops.FAMILY:
        return False
    return op_kernel_source(op, t, SYCL) is not None
