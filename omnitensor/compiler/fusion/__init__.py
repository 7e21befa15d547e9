"""Fusion: elementwise chains, and reductions with their prologues and epilogues, as one
kernel each (``omnitensor.compiler.fusion``).

:func:`plan` groups a captured :class:`~omnitensor.compiler.ir.Graph`'s nodes
(:mod:`.planner`) into :class:`~omnitensor.kernels.fused_spec.KernelSpec` s, which the
device backend's ``fused_kernels`` hook renders (``omnitensor.kernels.fused``: numba Python
on ``cpu``, OpenCL C on ``opencl`` and, through dpctl, ``sycl``, CUDA C on ``cuda``) and
launches; :func:`fusion_pass` is the replay planner pass that puts one launch in place of
each group; :func:`gemm_epilogue_pass` adds, where the device's matmul is omnitensor's
generated GEMM (opencl), each matmul with its elementwise epilogue as one launch. Importing
this package registers ``gemm_epilogue_pass`` with
:func:`omnitensor.compiler.replay.register_planner`; ``OMNITENSOR_FUSION=0`` disables it.
Library matmuls (BLAS, oneMKL, cuBLAS) and every other primitive stay library calls.
"""
from __future__ import annotations

from ...kernels.fused_spec import KernelSpec
from ..replay import PLANNERS, register_planner
from .passes import fusion_pass, gemm_epilogue_pass
from .planner import plan

__all__ = ["fusion_pass", "gemm_epilogue_pass", "plan", "KernelSpec"]

if gemm_epilogue_pass not in PLANNERS:
    register_planner(gemm_epilogue_pass)
