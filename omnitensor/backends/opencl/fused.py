"""Fused kernels on ``opencl`` devices (the ``fused_kernels`` hook of the OpenCL backend):
OpenCL C built and launched through the backend's own program cache and argument setters.

One program per kernel source (keyed by its hash, so identical groups share a build; PoCL
keeps built programs in its kernel cache across processes). Arguments: every array's
buffer, then each one's element offset, then (elementwise kernels) the chunk size that
``DeviceState.split`` picks, so a CPU device runs few long vectorizable loops.

A GEMM kernel (a matmul with its epilogue) takes the product kernel's own parameters first
(``kernels.gemm``), then the arrays and offsets; it is sized and its operands packed by the
OpenCL backend's matmul helpers (``backends/opencl/gemm.py``), so it tiles, packs and sums
exactly as the eager matmul does.
"""
from __future__ import annotations

import hashlib
import struct
from typing import Any, Callable

import numpy as np

from ...kernels import fused as render
from ...kernels.ctype import BY_NP
from ...kernels.dialect import OPENCL_C, Dialect
from ...kernels.fused_spec import KernelSpec
from ...kernels.gemm import n_params
from ..fused import FusedLauncher
from . import gemm as cl_gemm
from . import launch as cl_launch
from . import program_cache
from .array import CLArray, new

_LONG = struct.Struct("=q")
#: id(kernel) -> (id(launcher), offsets...) of the arguments last set on that kernel
_LAST_SET: dict[int, tuple] = {}


class Kernel(FusedLauncher):
    """``kernel(*arrays) -> outputs`` for one fused group on CLArrays (see
    ``backends/cpu/fused.Kernel``)."""

    #: the dialect its programs are rendered in
    dialect: Dialect = OPENCL_C

    @classmethod
    def build_all(cls, specs: list[KernelSpec], device: Any) -> list[Any]:
        """Handles for the kernels of ``specs``, built as one program (one build per plan,
        cached by source in this process and by PoCL's kernel cache across processes)."""
        st = device.backend.state(device.index)
        src = render.c_program(specs, cls.dialect)
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
        self.gemm = spec.gemm
        self.first = 0  # the index of a0 among the kernel's parameters
        if self.gemm is not None:
            self._gemm_setup(spec)
            return
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
        f = self.first
        mem: list[Any] = list(self.gemm_mem(arrs)) if self.gemm is not None else []
        for i, a in enumerate(arrs):
            mem += (f + i, a.data)
        cl_launch.set_mem(k, tuple(mem))
        offs = (id(self),) + tuple(a.offset for a in arrs)
        # arguments persist on the kernel, which launchers of identical source share (one
        # program per source): skip setting them only when this launcher set these last
        if _LAST_SET.get(id(k)) != offs or self.gemm is not None:
            n = f + self.nargs
            pairs: list[Any] = []
            for i, o in enumerate(offs[1:]):
                pairs += (n + i, _LONG.pack(o))
            cl_launch.set_bytes(k, tuple(pairs) + self.extra)
            _LAST_SET[id(k)] = offs
        if self.gemm is not None:
            cl_launch.run_items(st, k, self.gsize[0])
        else:
            cl_launch.run(st.queue, k, self.gsize, self.lsize)
        return self.results(arrs)

    # ------------------------------------------------------------------- GEMM kernels
    def _gemm_setup(self, spec: KernelSpec) -> None:
        mm = self.gemm
        assert mm is not None
        st = self.st
        self.t = BY_NP[np.dtype(mm.dtype)]
        self.mnk = (spec.shape[0], spec.shape[1], mm.k)
        self.fast = render.uses_fast_gemm(spec, self.dialect)
        if self.fast:
            cl_gemm.pack_kernels(st, self.t)  # built while planning, not at the first launch
        self.first = n_params(self.fast, with_c=False)
        self.lay = cl_gemm.batch_layout(st, (), (), ())
        groups, tpw, tm, tn, total = cl_gemm.grid(st, self.t, self.fast, 1, spec.shape[0],
                                                  spec.shape[1])
        self.gsize = (groups,)  # run_items picks the local size
        m, n, kd = self.mnk
        sizes = (m, n, kd, tm, tn, tpw, total)
        p = _LONG.pack
        if self.fast:  # Ap, Bp, M, N, Kd, tm, tn, tpw, total
            self.extra = tuple(x for j, v in enumerate(sizes) for x in (2 + j, p(v)))
        else:  # A, aoff, sam, sak, B, boff, sbk, sbn, M, N, Kd, tm, tn, tpw, total, L
            self.extra = (2, p(mm.a_strides[0]), 3, p(mm.a_strides[1]), 6, p(mm.b_strides[0]),
                          7, p(mm.b_strides[1])) + tuple(
                              x for j, v in enumerate(sizes) for x in (8 + j, p(v)))
        self.panels: tuple[Any, Any] | None = None

    def gemm_mem(self, arrs: list[Any]) -> tuple:
        """The product kernel's own memory arguments (packing the operands first for the
        register-blocked kernel) and, for the generic one, the operands' offsets."""
        mm = self.gemm
        assert mm is not None
        a, b = arrs[mm.a_arg], arrs[mm.b_arg]
        if not self.fast:
            cl_launch.set_bytes(self.k, (1, _LONG.pack(a.offset), 5, _LONG.pack(b.offset)))
            return (0, a.data, 4, b.data, 15, self.lay)
        m, n, kd = self.mnk
        self.panels = cl_gemm.pack(self.st, self.t, (a.data, a.offset, *mm.a_strides),
                                   (b.data, b.offset, *mm.b_strides), 1, m, n, kd, self.lay,
                                   self.panels)  # reused: only this launch reads them
        return (0, self.panels[0].data, 1, self.panels[1].data)


__all__ = ["Kernel", "CLArray"]
