"""Compiled programs and kernels, cached in memory; across processes, the drivers' and
pyopencl's caches keep the builds.

Compiling is the dominant cost of an OpenCL backend on PoCL (a program build ~0.2 s, the
first launch of each kernel another ~0.1 s while PoCL generates its work-group function, and
~0.7 s once per process to load PoCL's builtin library). So:

* generators put many related kernels in one program (one build), and each program is
  built once per device and process (``DeviceState.programs``);
* ``cl.Kernel`` objects are created once and reused (``DeviceState.kernels``): creating
  them per call is slow and pyopencl warns about it;
* across processes, PoCL keeps its own kernel cache (``~/.cache/pocl/kcache``: program
  builds *and* compiled work-group functions), and so does NVIDIA's driver; for every
  other ICD (AMD, Intel) ``pyopencl.Program.build`` stores and reuses program binaries in
  its own cache (``PYOPENCL_NO_CACHE=1`` turns that off). An earlier hand-written binary
  cache duplicated pyopencl's, and on PoCL with ``POCL_KERNEL_CACHE=0`` asking for
  ``program.binaries`` compiled every kernel (a cold first op took 26 s instead of 3).

The runtime is the state's: ``state.build_program``, ``state.make_kernel`` and
``state.Error`` (PyOpenCL here; dpctl for the sycl backend's ``sycl/runtime.py``, which
drives these same modules on SYCL devices).
"""
from __future__ import annotations

from threading import get_ident
from typing import Any, Callable

from ...errors import BackendError


def build(state: Any, key: Any, make_source: Callable[[], str],
          options: tuple[str, ...] = ()) -> Any:
    """The built program ``key`` for this device, generating its source on first use."""
    prg = state.programs.get(key)
    if prg is not None:
        return prg
    try:
        prg = state.build_program(make_source(), options)
    except state.Error as e:
        raise BackendError(
            f"{state.name} ({state.label}): compiling OpenCL program {key!r} failed. "
            f"This is a bug in omnitensor's OpenCL backend or the driver; please "
            f"report it with this message.\n{_build_log(e)}") from None
    state.programs[key] = prg
    return prg


def _build_log(err: Exception) -> str:
    text = str(err)
    return text if len(text) < 6000 else text[:3000] + "\n...\n" + text[-3000:]


def kernel(state: Any, program_key: Any, name: str, make_source: Callable[[], str],
           options: tuple[str, ...] = (), init: Callable[[Any], None] | None = None) -> Any:
    """The cached ``cl.Kernel`` ``name`` of program ``program_key``; ``init(kernel)`` runs
    once when the kernel object is created (to give arguments a launch may leave unset a
    valid value)."""
    # one kernel object per thread: a cl.Kernel holds its arguments, and setting them then
    # enqueueing is not atomic, so two threads sharing one launched with each other's
    # arguments (wrong values, measured 29 of 900 ops from 6 threads)
    kkey = (program_key, name, get_ident())
    k = state.kernels.get(kkey)
    if k is None:
        prg = build(state, program_key, make_source, options)
        k = state.make_kernel(prg, name)
        if init is not None:
            init(k)
        state.kernels[kkey] = k
    return k
