"""Fused kernels on ``opencl`` devices: OpenCL C built and launched through the OpenCL
backend's own program cache and argument setters.

One program per kernel source (keyed by its hash, so identical groups share a build; PoCL
keeps built programs in its kernel cache across processes). Arguments: every array's
buffer, then each one's element offset, then (elementwise kernels) the chunk size that
``DeviceState.split`` picks, so a CPU device runs few long vectorizable loops.
"""
from __future__ import annotations

import hashlib
import struct
from typing import Any, Callable

import numpy as np

from ...backends.opencl import launch as cl_launch
from ...backends.opencl import program_cache
from ...backends.opencl.array import CLArray, new
from . import render
from .launcher import FusedLauncher
from .spec import KernelSpec

_LONG = struct.Struct("=q")


class Kernel(FusedLauncher):
    """``kernel(*arrays) -> outputs`` for one fused group on CLArrays (see cpu.Kernel)."""

    @staticmethod
    def build_all(specs: list[KernelSpec], device: Any) -> list[Any]:
        """Handles for the kernels of ``specs``, built as one program (one build per plan,
        cached by source in this process and by PoCL's kernel cache across processes)."""
        st = device.backend.state(device.index)
        src = render.c_program(specs, "opencl")
        key = ("fused", hashlib.sha1(src.encode()).hexdigest())
        return [(st, key, f"fused{i}", src) for i in range(len(specs))]

    def __init__(self, spec: KernelSpec, n_inputs: int, fresh: list[tuple[tuple, str, bool]],
                 out_args: list[int], inplace_args: list[int],
                 fallback: Callable[..., Any], device: Any, handle: Any = None) -> None:
        be = device.backend
        self.st = st = be.state(device.index)
        self.backend = be
        if handle is None:
            handle = self.build_all([spec], device)[0]
        _st, key, name, src = handle
        self.source = src
        self.k = program_cache.kernel(st, key, name, lambda: src, st.build_options)
        super().__init__(spec, n_inputs, fresh, out_args, inplace_args, fallback)
        self.reduce = spec.is_reduce
        n = render.work_items(spec) if spec.is_reduce else int(np.prod(spec.shape,
                                                                         dtype=np.int64))
        if self.reduce:
            if st.is_cpu:
                self.gsize, self.lsize = (n,), (1,)
            else:
                self.gsize, self.lsize = (-(-n // 64) * 64,), (64,)
            extra: tuple = ()
        else:
            self.gsize, chunk = st.split(n)
            self.lsize = st.local
            extra = (2 * spec.nargs, _LONG.pack(chunk))
        self.extra = extra
        self.last_offs: tuple | None = None

    def __call__(self, *arrays: Any) -> Any:
        for k in self.inplace_args:
            if not arrays[k].contig:
                return self.fallback(*arrays)
        arrs = list(arrays)
        for i in range(self.n_inputs):
            a = arrs[i]
            if not a.contig:
                arrs[i] = self.backend.contiguous(a)
        st = self.st
        arrs += self.fresh_outputs(lambda shape, dt: new(st, shape, dt))
        k = self.k
        mem: list[Any] = []
        for i, a in enumerate(arrs):
            mem += (i, a.data)
        cl_launch.set_mem(k, tuple(mem))
        offs = tuple(a.offset for a in arrs)
        if offs != self.last_offs:  # kernel arguments persist between launches
            n = self.nargs
            pairs: list[Any] = []
            for i, o in enumerate(offs):
                pairs += (n + i, _LONG.pack(o))
            cl_launch.set_bytes(k, tuple(pairs) + self.extra)
            self.last_offs = offs
        cl_launch.run(st.queue, k, self.gsize, self.lsize)
        return self.results(arrs)


__all__ = ["Kernel", "CLArray"]
