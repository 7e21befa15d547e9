"""``torch.__config__``: how this build was made, as torch's ``show()`` and
``parallel_info()`` report it (libraries grep ``show()``'s build settings, e.g. for
``USE_MKL=OFF``). omnitensor is pure Python over NumPy and the device runtimes: none of
torch's compiled-in libraries (MKL, MKL-DNN, OpenMP) is linked, so those settings say
OFF; the devices are omnitensor's backends, loaded at run time."""
from __future__ import annotations

import numpy as np

__all__ = ["show", "parallel_info", "_cxx_flags"]


def show() -> str:
    """The build description (torch's layout: a list, then ``Build settings``)."""
    from . import version
    from .backends.cpu.threads import get_num_threads
    return (f"omnitensor built with:\n"
            f"  - torch API level {version.torch_api_version}\n"
            f"  - NumPy {np.__version__} (cpu kernels, {get_num_threads()} threads)\n"
            f"  - device backends: cpu, opencl, sycl, cuda (each when its runtime imports)\n"
            f"\n"
            f"  - Build settings: BUILD_TYPE=Release, USE_MKL=OFF, USE_MKLDNN=OFF, "
            f"USE_OPENMP=OFF\n")


def parallel_info() -> str:
    """The threading description (torch's ``ATen/Parallel`` block)."""
    from .backends.cpu.threads import get_num_threads
    from .torch_idioms import get_num_interop_threads
    return (f"ATen/Parallel:\n"
            f"\tat::get_num_threads() : {get_num_threads()}\n"
            f"\tat::get_num_interop_threads() : {get_num_interop_threads()}\n"
            f"omnitensor: NumPy's BLAS threads; no OpenMP, no MKL\n")


def _cxx_flags() -> str:
    """No C++ was compiled for omnitensor: no flags."""
    return ""
