"""Make a backend's operations run on their operands' device.

CuPy launches every kernel, and allocates every result, on the *current* device, not on
the device of the arrays it is given; an op on ``cuda:1`` tensors while device 0 is
current would compute on GPU 0 (or fail without peer access) while core labels the
result ``cuda:1``. :func:`guard_backend` wraps a backend's primitives, hooks and device
waits (the kinds ``base.py`` declares; ``interpose.py``'s interposer placed in place, under
the :class:`_Guard` policy) so that each runs with its first array operand's device
current. It is applied only on machines with
several devices: with one device every array is on the current one, and the wrapper's
~0.3 us per call would be pure overhead.
"""
from __future__ import annotations

from typing import Any, Callable, ContextManager

from .base import HOOK, HOST_READ, OP, SYNC
from .interpose import Interposer, Policy


def first_device(args: tuple, array_type: type, device_of: Callable[[Any], Any]) -> Any:
    """The device of the first array in ``args`` (looking one level into lists and
    tuples, for ``concat``-like calls), or None."""
    for a in args:
        if isinstance(a, array_type):
            return device_of(a)
        if isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, array_type):
                    return device_of(b)
    return None


def guarded(fn: Callable, array_type: type, device_of: Callable[[Any], Any],
            current: Callable[[], Any], use: Callable[[Any], ContextManager]) -> Callable:
    """``fn`` run with its first array operand's device current (``use(device)``)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        dev = first_device(args, array_type, device_of)
        if dev is None or dev == current():
            return fn(*args, **kwargs)
        with use(dev):
            return fn(*args, **kwargs)
    call.__name__ = getattr(fn, "__name__", "op")
    call.__doc__ = getattr(fn, "__doc__", None)
    call.__wrapped__ = fn  # type: ignore[attr-defined]
    return call


class _Guard(Policy):
    """Runs each primitive, host read, hook and device wait with its first array
    operand's device current (queries and data need no device)."""

    kinds = frozenset((OP, HOST_READ, HOOK, SYNC))

    def __init__(self, array_type: type, device_of: Callable[[Any], Any],
                 current: Callable[[], Any], use: Callable[[Any], ContextManager]) -> None:
        self.how = (array_type, device_of, current, use)

    def wrap(self, name: str, kind: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        return guarded(fn, *self.how)


def guard_backend(backend: Any, array_type: type, device_of: Callable[[Any], Any],
                  current: Callable[[], Any], use: Callable[[Any], ContextManager]) -> int:
    """Wrap the primitives, host reads, hooks and device waits of ``backend`` (an
    instance) with :func:`guarded`, in place; returns how many were wrapped."""
    n, _restore = Interposer(backend, _Guard(array_type, device_of, current, use)).install()
    return n
