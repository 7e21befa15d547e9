"""Kernel source generation for every C-like backend: pure functions from descriptions
(op, dtype, layout facts) to program text.

One generator, several dialects (:mod:`.dialect`): OpenCL C (the OpenCL backend, and SYCL
devices with an OpenCL backend through dpctl) and CUDA C (CuPy's ``RawModule``). Nothing
here compiles or launches: runtimes in ``omnitensor.backends`` do, and own the caches.
This package imports only NumPy and the standard library (a layer between ``backends``
and ``envvars``).

Modules: :mod:`.ctype` (dtype -> C type facts), :mod:`.helpers` (NumPy-exact helper
functions per type), :mod:`.ops` (the elementwise op table), :mod:`.scalar` (that table as
an API for fused kernels, also rendered as Python for numba), :mod:`.elementwise`,
:mod:`.reduce`, :mod:`.argreduce`, :mod:`.scan`, :mod:`.sort`, :mod:`.gemm`,
:mod:`.indexing` and :mod:`.random` (the kernel families).
"""
from __future__ import annotations

from .dialect import CUDA_C, DIALECTS, OPENCL_C, SYCL, Dialect

__all__ = ["Dialect", "OPENCL_C", "CUDA_C", "SYCL", "DIALECTS"]
