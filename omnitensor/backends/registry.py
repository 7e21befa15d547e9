"""The lazy backend registry: device type -> backend adapter, imported on first use.

Nothing here imports a vendor library. ``get_backend("opencl")`` imports
``omnitensor.backends.opencl`` (which imports PyOpenCL) the first time a tensor or a device
query needs it; an import failure or an empty device list becomes a
:class:`BackendUnavailableError` whose message names the pip extra or what to check.
"""
from __future__ import annotations

import importlib
import threading
from typing import TYPE_CHECKING

from ..errors import BackendUnavailableError

if TYPE_CHECKING:  # pragma: no cover
    from .base import Backend

#: device type -> (import path "module:Class", pip extra that installs it)
BACKENDS: dict[str, tuple[str, str]] = {
    "cpu": ("omnitensor.backends.numpy_backend:NumpyBackend", ""),
    "opencl": ("omnitensor.backends.opencl:OpenCLBackend", "opencl"),
    "sycl": ("omnitensor.backends.sycl:SyclBackend", "sycl"),
    "cuda": ("omnitensor.backends.cupy_backend:CupyBackend", "cuda"),
}

_loaded: dict[str, "Backend"] = {}
_failed: dict[str, str] = {}
_lock = threading.Lock()


def device_types() -> tuple[str, ...]:
    """Every device type omnitensor knows, installed or not."""
    return tuple(BACKENDS)


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
        path, extra = BACKENDS[device_type]
        module_name, cls_name = path.split(":")
        try:
            module = importlib.import_module(module_name)
            be = getattr(module, cls_name)()
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
        return be


def try_backend(device_type: str) -> tuple["Backend | None", str | None]:
    """(backend, None) when usable, else (None, why)."""
    try:
        return get_backend(device_type), None
    except BackendUnavailableError as e:
        return None, str(e)


def loaded_backends() -> dict[str, "Backend"]:
    """Backends imported so far (never triggers an import)."""
    return dict(_loaded)
