"""The backend-level update path of the optimizers (torch's ``foreach=True`` idea).

An update is a handful of elementwise ops per parameter; through the Tensor API each costs
a few microseconds of dispatch (dtype rules, device checks, in-place bookkeeping), more
than the arithmetic for typical layer sizes. When a parameter, its gradient and its state
share one device and one floating dtype, nothing is left to decide, so the update calls
the backend primitives in place (``out=``), then bumps the parameter's version counter
as an in-place Tensor op would (autograd then still detects a stale saved tensor).
Optimizers take the Tensor-op path otherwise, or with ``foreach=False``.
"""
from __future__ import annotations

from typing import Any

from ..core.raw import mark_modified
from ..core.tensor import Tensor


def backend_for(p: Tensor, grad: Tensor) -> Any:
    """The backend when ``p`` and ``grad`` can be updated with raw primitives, else None."""
    if (p._dtype.kind != "f" or grad._dtype is not p._dtype or grad._device is not p._device
            or grad.shape != p.shape):
        return None
    return p._device.backend


def state_ok(p: Tensor, *state: Tensor) -> bool:
    """Whether state tensors match ``p``'s device, dtype and shape (a loaded state dict
    may hold other dtypes)."""
    return all(s._device is p._device and s._dtype is p._dtype and s.shape == p.shape
               for s in state)


def touched(*tensors: Tensor) -> None:
    """Record an in-place write (the version counter autograd checks)."""
    for t in tensors:
        mark_modified(t)
