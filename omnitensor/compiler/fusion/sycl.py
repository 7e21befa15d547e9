"""Fused kernels on ``sycl`` devices: the OpenCL C of :mod:`.render`, built by dpctl
(``dpctl.program.create_program_from_source``) and submitted on the device's queue over the
USM memory of dpnp arrays.

Ordering: dpnp orders its own kernels through ``dpctl.utils.SequentialOrderManager``; a
fused launch depends on the queue's submitted events and registers its own, so dpnp work
before and after it sees its writes. Programs are built once per (queue, source) in this
process (a build costs ~0.2-0.7 s on the Intel OpenCL CPU runtime, which caches nothing on
disk for us).
"""
from __future__ import annotations

import ctypes
import hashlib
from typing import Any, Callable

import numpy as np

from . import render
from .launcher import FusedLauncher
from .spec import KernelSpec

#: whether compile may build these kernels on a background thread while the first replays
#: run unfused (``compiler.config.fuse_in_background``): measured no here, the first
#: unfused replay then took 8.4 s instead of 0.01 s (the builds and the replay's dpnp
#: calls serialise on the runtime), so sycl builds before the first replay
CONCURRENT_BUILD = False

_PROGRAMS: dict[tuple, Any] = {}
_ZERO = ctypes.c_longlong(0)


def _kernel(queue: Any, source: str, name: str = "fused") -> Any:
    import dpctl.program as dpp
    key = (queue, hashlib.sha1(source.encode()).hexdigest())
    prog = _PROGRAMS.get(key)
    if prog is None:
        try:
            prog = dpp.create_program_from_source(queue, source, "")
        except dpp.SyclProgramCompilationError as e:
            from ...errors import BackendError
            raise BackendError(f"sycl: compiling a fused kernel failed ({e}); this is a bug "
                               f"in omnitensor's fusion, please report it.\n{source}") from None
        _PROGRAMS[key] = prog
    return prog.get_sycl_kernel(name)


class Kernel(FusedLauncher):
    """``kernel(*arrays) -> outputs`` for one fused group on dpnp arrays."""

    @staticmethod
    def build_all(specs: list[KernelSpec], device: Any) -> list[Any]:
        """Handles for the kernels of ``specs``, all in one program (one build per plan)."""
        src = render.c_program(specs, "sycl")
        return [(src, f"fused{i}") for i in range(len(specs))]

    def __init__(self, spec: KernelSpec, n_inputs: int, fresh: list[tuple[tuple, str, bool]],
                 out_args: list[int], inplace_args: list[int],
                 fallback: Callable[..., Any], device: Any, handle: Any = None) -> None:
        from dpctl.utils import SequentialOrderManager
        be = device.backend
        self.backend = be
        self.index = device.index
        self.queue = be._queues[device.index]
        self.order = SequentialOrderManager[self.queue]
        if handle is None:
            handle = self.build_all([spec], device)[0]
        self.source, name = handle
        self.k = _kernel(self.queue, self.source, name)
        super().__init__(spec, n_inputs, fresh, out_args, inplace_args, fallback)
        if spec.is_reduce:
            self.gsize = [render.work_items(spec)]
            self.extra: list[Any] = []
        else:
            n = int(np.prod(spec.shape, dtype=np.int64))
            chunk = 8192 if n > 8192 else n
            self.gsize = [-(-n // chunk)]
            self.extra = [ctypes.c_longlong(chunk)]

    def __call__(self, *arrays: Any) -> Any:
        for k in self.inplace_args:
            if not arrays[k].flags.c_contiguous:
                return self.fallback(*arrays)
        arrs = list(arrays)
        for i in range(self.n_inputs):
            if not arrs[i].flags.c_contiguous:
                arrs[i] = self.backend.contiguous(arrs[i])
        be, index = self.backend, self.index
        arrs += self.fresh_outputs(lambda shape, dt: be.empty(shape, dt, index))
        mem = []
        offs = []
        for a in arrs:
            u = a.get_array()
            mem.append(u.usm_data)
            o = u._element_offset
            offs.append(_ZERO if o == 0 else ctypes.c_longlong(o))
        order = self.order
        ev = self.queue.submit(self.k, mem + offs + self.extra, self.gsize, None,
                               order.submitted_events)
        order.add_event_pair(ev, ev)
        return self.results(arrs)
