"""``omnitensor.utils.cpp_extension``: torch's C++/CUDA extension builder, which omnitensor
cannot provide.

Such an extension is compiled against torch's C++ library (ATen, ``torch/extension.h``)
and its tensors; omnitensor has no C++ tensor ABI for it to link against. So this module
imports (``setup.py`` files and libraries import it at the top) and every builder raises,
saying what to do instead: write the op with omnitensor ops (``autograd.Function`` for a
custom backward), or run the kernel through the backend's own runtime (PyOpenCL, dpctl,
CuPy's ``RawKernel``) on the tensor's DLPack view.
"""
from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["load", "load_inline", "CppExtension", "CUDAExtension", "SyclExtension",
           "BuildExtension", "include_paths", "library_paths", "CUDA_HOME", "ROCM_HOME",
           "SYCL_HOME", "verify_ninja_availability", "is_ninja_available"]

#: no CUDA/ROCm/SYCL toolkit is used by omnitensor's extension support (there is none)
CUDA_HOME: str | None = None
ROCM_HOME: str | None = None
SYCL_HOME: str | None = None

_WHY = ("torch C++/CUDA extensions are not supported by omnitensor: they are compiled "
        "against torch's C++ library (ATen, torch/extension.h), which omnitensor does not "
        "have. Write the op with omnitensor ops (omnitensor.autograd.Function for a custom "
        "backward), or launch your kernel with the device's runtime (PyOpenCL, dpctl, "
        "CuPy RawKernel) on the tensor's DLPack view")


def _refuse(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise NotImplementedError(_WHY)


load = load_inline = CppExtension = CUDAExtension = SyclExtension = _refuse
include_paths = library_paths = verify_ninja_availability = _refuse


class BuildExtension:
    """setuptools' ``build_ext`` for torch extensions: refused when used (see the module
    docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _refuse()

    @classmethod
    def with_options(cls, **options: Any) -> type:
        return cls


def is_ninja_available() -> bool:
    """Whether ninja is installed (torch's helper; answered truthfully)."""
    import shutil
    return shutil.which("ninja") is not None
