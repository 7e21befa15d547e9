"""Kernel source generation for every C-like backend: pure functions from descriptions
(op, dtype, layout facts) to program text.

One generator, several dialects (:mod:`.dialect`: one class per language, overriding what
differs): OpenCL C (the OpenCL backend), SYCL (the same OpenCL C on SYCL devices with an
OpenCL backend, through dpctl), CUDA C (CuPy's ``RawModule``) and, for the op table's
per-element API only, Python for numba (:mod:`.numba_dialect`, ``cpu``'s fused kernels).
Nothing here compiles or launches: runtimes in ``omnitensor.backends`` do, and own the caches.
This package imports only NumPy and the standard library (a layer between ``backends``
and ``envvars``).

Modules: :mod:`.primitives` (the primitive table: one row per elementwise primitive, which
the rest of omnitensor reads), :mod:`.ctype` (dtype -> C type facts), :mod:`.helpers`
(NumPy-exact helper functions per type), :mod:`.ops` (the elementwise op table's C
templates), :mod:`.scalar` (that table as an API for fused kernels; :mod:`.exprs` its C
answers), :mod:`.elementwise`, :mod:`.reduce`, :mod:`.argreduce`, :mod:`.scan`, :mod:`.sort`,
:mod:`.gemm`, :mod:`.indexing` and :mod:`.random` (the kernel families).
"""
from __future__ import annotations

from .dialect import (CUDA_C, DIALECTS, OPENCL_C, SYCL, CudaC, Dialect, Language, OpenCLC,
                      SyclC)

__all__ = ["Language", "Dialect", "OpenCLC", "SyclC", "CudaC", "OPENCL_C", "CUDA_C", "SYCL",
           "DIALECTS"]
