"""Fusion: elementwise chains, and reductions with their prologues and epilogues, as one
kernel each (``omnitensor.compiler.fusion``).

:func:`plan` groups a captured :class:`~omnitensor.compiler.ir.Graph`'s nodes
(:mod:`.planner`), :mod:`.render` turns each group's :class:`~.spec.KernelSpec` into numba
Python (``cpu``) or OpenCL C (``opencl``, and ``sycl`` through dpctl; CUDA C is rendered
too), and :func:`fusion_pass` is the replay planner pass that puts one launch in place of
each group; :func:`gemm_epilogue_pass` adds, where the device's matmul is omnitensor's
generated GEMM (opencl), each matmul with its elementwise epilogue as one launch. Importing
this package registers ``gemm_epilogue_pass`` with
:func:`omnitensor.compiler.replay.register_planner`; ``OMNITENSOR_FUSION=0`` disables it.
Library matmuls (BLAS, oneMKL, cuBLAS) and every other primitive stay library calls.
"""
from __future__ import annotations

from ..replay import PLANNERS, register_planner
from .passes import fusion_pass, gemm_epilogue_pass
from .planner import plan
from .spec import KernelSpec

__all__ = ["fusion_pass", "gemm_epilogue_pass", "plan", "KernelSpec"]

if gemm_epilogue_pass not in PLANNERS:
    register_planner(gemm_epilogue_pass)
