"""Run a library routine on the device when the backend has it, else on the host.

Used by ``omnitensor.linalg`` and ``omnitensor.fft``: a backend exposes native routines as
``linalg_<name>`` / ``fft_<name>``; one without (OpenCL) gets NumPy's on the host, and the
routine is listed by :func:`host_fallbacks` (and by ``omnitensor info`` when it ran).
"""
from __future__ import annotations

from typing import Any

import numpy as np

_USED: dict[str, set[str]] = {}


def host_fallbacks(prefix: str | None = None) -> list[str]:
    """Routines that ran on the host this session (``prefix``: "linalg" or "fft")."""
    keys = [prefix] if prefix else sorted(_USED)
    return sorted(f"{k}.{n}" if prefix is None else n for k in keys for n in _USED.get(k, ()))


def _c_order(a: Any) -> np.ndarray:
    """C-contiguous, keeping 0-d arrays 0-d (np.ascontiguousarray makes them 1-d)."""
    a = np.asarray(a)
    return a if a.flags.c_contiguous else a.copy()


def run(prefix: str, name: str, device: Any, arrays: list, **kw: Any) -> Any:
    """``backend.<prefix>_<name>(*arrays, **kw)``, or ``numpy.<prefix>.<name>`` on host
    copies with the results copied back to ``device``. Returns backend arrays (a tuple for
    multi-output routines)."""
    be = device.backend
    fn = be.hook(f"{prefix}_{name}")
    if fn is not None:
        return fn(*arrays, **kw)
    _USED.setdefault(prefix, set()).add(name)
    host = [be.to_numpy(a) for a in arrays]
    out = getattr(getattr(np, prefix), name)(*host, **kw)
    if isinstance(out, tuple):
        return tuple(be.from_numpy(_c_order(o), device.index) for o in out)
    return be.from_numpy(_c_order(out), device.index)
