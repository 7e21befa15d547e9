"""Fused kernels on ``cuda`` devices (the ``fused_kernels`` hook of the CuPy backend): the
CUDA C dialect of :mod:`omnitensor.kernels.fused` through CuPy's
``RawKernel`` (NVRTC), built with ``--fmad=false`` so ``a * b + c`` rounds like NumPy.

Written against CuPy's documented API but NOT run here (no GPU in this project's CI): the
pass only uses it when a ``cuda`` device is the graph's device, and any failure to build
makes ``omnitensor.compile`` replay unfused with a warning.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...kernels import fused as render
from ...kernels.dialect import CUDA_C, Dialect
from ...kernels.fused_spec import KernelSpec
from ..fused import FusedLauncher

_BLOCK = 256


class Kernel(FusedLauncher):
    """``kernel(*arrays) -> outputs`` for one fused group on CuPy arrays."""

    dialect: Dialect = CUDA_C

    def __init__(self, spec: KernelSpec, n_inputs: int, fresh: list[tuple[tuple, str, bool]],
                 out_args: list[int], inplace_args: list[int],
                 fallback: Callable[..., Any], device: Any) -> None:
        import cupy
        self.cupy = cupy
        self.source = render.c_source(spec, "fused", self.dialect)
        self.k = cupy.RawKernel(self.source, "fused", options=self.dialect.compile_options)
        super().__init__(spec, n_inputs, fresh, out_args, inplace_args, fallback)
        self.index = device.index
        if spec.is_reduce:
            n = render.work_items(spec)
            self.extra: tuple = ()
        else:
            n = int(np.prod(spec.shape, dtype=np.int64))
            self.extra = (np.int64(1),)  # one element per thread
        self.grid = (max(1, -(-n // _BLOCK)),)

    def __call__(self, *arrays: Any) -> Any:
        cp = self.cupy
        for k in self.inplace_args:
            if not arrays[k].flags.c_contiguous:
                return self.fallback(*arrays)
        arrs = [a if a.flags.c_contiguous else cp.ascontiguousarray(a)
                for a in arrays[:self.n_inputs]] + list(arrays[self.n_inputs:])
        with cp.cuda.Device(self.index):
            arrs += self.fresh_outputs(cp.empty)
            offs = tuple(np.int64(0) for _ in arrs)  # CuPy arrays pass their data pointer
            self.k(self.grid, (_BLOCK,), tuple(arrs) + offs + self.extra)
        return self.results(arrs)
