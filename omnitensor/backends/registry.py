"""The lazy backend registry: device type -> backend adapter, imported on first use.

Nothing here imports a vendor library. ``get_backend("opencl")`` imports
``omnitensor.backends.opencl`` (which imports PyOpenCL) the first time a tensor or a device
query needs it; an import failure or an empty device list becomes a
:class:`BackendUnavailableError` whose message names the pip extra or what to check.
"""
from __future__ import annotations

import importlib
import threading
from typing import TYPE_CHECKING, Callable

from ..errors import BackendUnavailableError

from .base import BackendSpec

if TYPE_CHECKING:  # pragma: no cover
    from .base import Backend

#: device type -> its declaration (import target, pip extra, packages, default collective
#: transport); a new backend is one entry here and one adapter module
BACKENDS: dict[str, BackendSpec] = {s.device_type: s for s in (
    BackendSpec("cpu", "omnitensor.backends.cpu.backend:NumpyBackend", extra="",
                packages=("numpy",), transport="mpi", host=True),
    BackendSpec("opencl", "omnitensor.backends.opencl:OpenCLBackend", extra="opencl",
                packages=("pyopencl", "pocl-binary-distribution"), transport="mpi"),
    BackendSpec("sycl", "omnitensor.backends.sycl:SyclBackend", extra="sycl",
                packages=("dpctl", "dpnp", "intel-opencl-rt"), transport="mpi"),
    BackendSpec("cuda", "omnitensor.backends.cuda.backend:CupyBackend", extra="cuda",
                packages=("cupy-cuda12x", "cupy-cuda13x", "cupy", "cupy-rocm-6-0"),
                transport="nccl"),
)}

_loaded: dict[str, "Backend"] = {}
_failed: dict[str, str] = {}
_lock = threading.Lock()
_load_listeners: list[Callable[[str, "Backend"], None]] = []


def device_types() -> tuple[str, ...]:
    """Every device type omnitensor knows, installed or not."""
    return tuple(BACKENDS)


def spec(device_type: str) -> BackendSpec:
    """The declaration of ``device_type`` (imports nothing); KeyError when unknown."""
    return BACKENDS[device_type]


def register(backend_spec: BackendSpec) -> None:
    """Add (or replace) a backend declaration; it is imported on first use."""
    with _lock:
        BACKENDS[backend_spec.device_type] = backend_spec
        _failed.pop(backend_spec.device_type, None)
        _loaded.pop(backend_spec.device_type, None)


def get_backend(device_type: str) -> "Backend":
    """The backend object for ``device_type``; raises BackendUnavailableError with an
    actionable message when it cannot be used on this machine."""
    be = _loaded.get(device_type)
    if be is not None:
        return be
    with _lock:
        be = _loaded.get(device_type)
        if be is not None:
            return be
        if device_type not in BACKENDS:
            raise BackendUnavailableError(
                f"unknown device type {device_type!r}; known types: {', '.join(BACKENDS)}")
        if device_type in _failed:
            raise BackendUnavailableError(_failed[device_type])
        bspec = BACKENDS[device_type]
        extra = bspec.extra
        module_name, cls_name = bspec.target.split(":")
        try:
            module = importlib.import_module(module_name)
            be = getattr(module, cls_name)()
            be.spec = bspec
        except BackendUnavailableError as e:
            _failed[device_type] = str(e)
            raise
        except ImportError as e:
            msg = (f"the {device_type} backend is not installed ({e}). "
                   f"Install it with: pip install 'omnitensor[{extra}]'")
            _failed[device_type] = msg
            raise BackendUnavailableError(msg) from None
        except Exception as e:  # noqa: BLE001 - a broken driver stack must not crash import
            msg = (f"the {device_type} backend failed to initialise: {type(e).__name__}: {e}")
            _failed[device_type] = msg
            raise BackendUnavailableError(msg) from None
        reason = be.unavailable_reason()
        if reason:
            msg = f"the {device_type} backend found no usable device: {reason}"
            _failed[device_type] = msg
            raise BackendUnavailableError(msg)
        _loaded[device_type] = be
    for listener in tuple(_load_listeners):  # outside the lock: a listener may query us
        listener(device_type, be)
    return be


def add_load_listener(fn: Callable[[str, "Backend"], None]) -> None:
    """Call ``fn(device_type, backend)`` each time a backend loads from now on (the
    profiler instruments a backend that first loads while it records)."""
    _load_listeners.append(fn)


def remove_load_listener(fn: Callable[[str, "Backend"], None]) -> None:
    """Undo :func:`add_load_listener` (no error when ``fn`` is not listening)."""
    if fn in _load_listeners:
        _load_listeners.remove(fn)


def try_backend(device_type: str) -> tuple["Backend | None", str | None]:
    """(backend, None) when usable, else (None, why)."""
    try:
        return get_backend(device_type), None
    except BackendUnavailableError as e:
        return None, str(e)


def loaded_backends() -> dict[str, "Backend"]:
    """Backends imported so far (never triggers an import)."""
    return dict(_loaded)
