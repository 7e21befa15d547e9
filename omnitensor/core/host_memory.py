"""Bytes held by live cpu tensors, for ``omnitensor.memory`` on the ``cpu`` device.

NumPy allocates from the C heap with no pool to ask, and counting every allocation on the
op path would cost each op; so the figure is computed when asked: the live cpu tensors are
found through the garbage collector's object list and each distinct buffer is counted once
(views share their base's bytes, as in torch's caching allocator, where a view adds
nothing). The walk is O(live objects): a diagnostic, not something to call every step of a
tight loop.
"""
from __future__ import annotations

import gc

import numpy as np

from .tensor import Tensor

__all__ = ["live_cpu_tensor_bytes"]


def _root_buffer(a: np.ndarray) -> np.ndarray:
    """The array owning ``a``'s memory (the end of its chain of NumPy bases)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def live_cpu_tensor_bytes() -> int:
    """Bytes of the distinct host buffers that live cpu tensors hold."""
    seen: dict[int, int] = {}
    for obj in gc.get_objects():
        # type(), not isinstance: isinstance reads obj.__class__, which lazy module proxies
        # answer through __getattr__ (importing or warning)
        if not issubclass(type(obj), Tensor):
            continue
        data = getattr(obj, "_data", None)
        if not isinstance(data, np.ndarray) or obj._device.type != "cpu":
            continue
        root = _root_buffer(data)
        seen[id(root)] = root.nbytes
    return sum(seen.values())
