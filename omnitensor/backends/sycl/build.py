"""Building OpenCL C programs for a SYCL device with the GIL released.

Why: ``dpctl.program.create_program_from_source`` holds the GIL for the whole build, and
Intel's OpenCL CPU compiler takes ~0.2-0.9 s per op program (~90% of it in the backend's
LTO optimiser and code generator, measured: the OpenCL C front end alone takes 20-70 ms of
it). So a build on a background thread (compile's fused programs,
``backends/sycl/fused.py``) stopped every Python thread for that long: the second call of a
compiled MLP step, meant to replay unfused while the fused program builds, took 1.7-3.3 s
instead of ~10 ms (caught with gdb: the main thread in ``take_gil``, the build thread in
``libintelocl``'s ``OptimizerLTO::Optimize`` under ``create_program_from_source``).

:func:`build` calls the same C function dpctl calls (``DPCTLKernelBundle_CreateFromOCLSource``
in ``libDPCTLSyclInterface``) through ctypes, which releases the GIL for a foreign call, and
wraps the kernel bundle with dpctl's own exported C-API constructor (``SyclProgram_Make``,
which takes a copy of the reference: ours is deleted). A failed build is repeated through
dpctl's Python function, which raises its ``SyclProgramCompilationError``. Should this dpctl
lack either entry point, :func:`build` is dpctl's function (correct, only not concurrent).

Caching programs across processes is not possible here (dpctl cannot create a program from
a device binary), and SPIR-V would not help much: dpctl can build from SPIR-V, but the
front end it would skip is ~10% of a build.
"""
from __future__ import annotations

import ctypes
import os
from typing import Any, Callable

import dpctl
import dpctl.program as dpp
from dpctl.program import _program

from .. import driver_builds


def _native() -> Callable[[Any, str, str], Any] | None:
    """A GIL-releasing ``build(queue, source, options) -> SyclProgram``, or None."""
    try:
        lib = ctypes.CDLL(os.path.join(os.path.dirname(dpctl.__file__),
                                       "libDPCTLSyclInterface.so"))
        create = lib.DPCTLKernelBundle_CreateFromOCLSource
        delete = lib.DPCTLKernelBundle_Delete
        capsule = _program.__pyx_capi__["SyclProgram_Make"]
    except (OSError, AttributeError, KeyError):
        return None
    create.restype = ctypes.c_void_p
    create.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
    delete.restype = None
    delete.argtypes = [ctypes.c_void_p]
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    ptr = api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule))
    if not ptr:
        return None
    make = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p)(ptr)  # holds the GIL

    def build(queue: Any, source: str, options: str) -> Any:
        with driver_builds.building("SYCL"):
            ref = create(queue.sycl_context.addressof_ref(),
                         queue.sycl_device.addressof_ref(), source.encode(),
                         options.encode())
        if not ref:  # dpctl's function raises the compilation error (with its log)
            return dpp.create_program_from_source(queue, source, options)
        try:
            return make(ref)
        finally:
            delete(ref)
    return build


_BUILD = _native()


def build(queue: Any, source: str, options: str) -> Any:
    """``dpctl.program.create_program_from_source(queue, source, options)``, with the GIL
    released while the driver compiles when this dpctl allows (see the module doc)."""
    if _BUILD is None:
        return dpp.create_program_from_source(queue, source, options)
    return _BUILD(queue, source, options)


#: whether builds release the GIL in this process (``omnitensor info``, tests)
RELEASES_GIL = _BUILD is not None
