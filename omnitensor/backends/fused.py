"""What every device's fused-kernel launcher shares (cpu, opencl, sycl, cuda): the base of
the classes the backends' ``fused_kernels`` hook returns (``backends/base.py``).

A launcher is called as ``kernel(*arrays) -> outputs`` with the group's arguments (load
bases, then in-place buffers). It appends the group's fresh outputs, allocated once and
reused between calls when nothing outside the call can see them, runs the kernel, and
returns the outputs the plan reads. A strided in-place target runs the group's original
ops instead (``fallback``). Each device's module (``cpu/fused``, ``opencl/fused``, ``sycl/fused``, ``cuda/fused``)
adds only its compile and launch.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..kernels.fused_spec import KernelSpec


class FusedLauncher:
    """The argument layout and output buffers of one fused group."""

    def __init__(self, spec: KernelSpec, n_inputs: int, fresh: list[tuple[tuple, str, bool]],
                 out_args: list[int], inplace_args: list[int],
                 fallback: Callable[..., Any]) -> None:
        self.nargs = spec.nargs
        self.n_inputs = n_inputs
        self.fresh = [(tuple(s), np.dtype(dt), reuse) for s, dt, reuse in fresh]
        self.bufs: list[Any] = [None] * len(fresh)
        self.out_args = out_args
        self.inplace_args = inplace_args
        self.fallback = fallback

    def fresh_outputs(self, alloc: Callable[[tuple, np.dtype], Any]) -> list[Any]:
        """The group's fresh output arrays: kept ones reused, the others from ``alloc``."""
        out = []
        bufs = self.bufs
        for j, (shape, dt, reuse) in enumerate(self.fresh):
            buf = bufs[j]
            if buf is None:
                buf = alloc(shape, dt)
                if reuse:
                    bufs[j] = buf
            out.append(buf)
        return out

    def results(self, arrs: list[Any]) -> Any:
        """The arrays the plan reads after the launch (one, or a tuple)."""
        outs = [arrs[i] for i in self.out_args]
        return outs[0] if len(outs) == 1 else tuple(outs)
