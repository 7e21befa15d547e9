"""Fused kernels on ``sycl`` devices (the ``fused_kernels`` hook of the generated-kernel sycl
backend): the OpenCL launcher (``backends/opencl/fused.py``) on the sycl backend's device
state, so a fused group is the same OpenCL C (the :data:`~omnitensor.kernels.dialect.SYCL`
dialect), built by dpctl and submitted on the device's in-order queue over our USM blocks
(``backends/sycl/runtime.py``). GEMMs stay oneMKL calls (the backend's ``generated_gemm`` is
False), ordered with the fused kernels by the same in-order queue.

On the dpnp fallback (a device dpctl cannot build OpenCL C for) there is no fused kernel:
that backend has no ``fused_kernels`` hook and the compiled plan replays the primitives.
"""
from __future__ import annotations

from ...kernels.dialect import SYCL, Dialect
from ..opencl.fused import Kernel as _OpenCLKernel


class Kernel(_OpenCLKernel):
    """``kernel(*arrays) -> outputs`` for one fused group on the sycl backend's arrays."""

    dialect: Dialect = SYCL
    #: whether compile may build the fused program on a background thread while the first
    #: replays run unfused (``compiler.config.fuse_in_background``). Yes: the generated
    #: kernels of an unfused replay and the build do not serialise (they did on dpnp, which
    #: once measured an 8.4 s first replay), and Intel's OpenCL CPU compiler takes ~0.1-0.2 s
    #: per fused kernel, which a first call should not wait for.
    CONCURRENT_BUILD = True
