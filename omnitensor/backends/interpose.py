"""The one interposer between core and a backend: capture, deferral, timing, device guard.

Core reaches a device only through its backend object's attributes, so everything that
must see device work stands there: the compile recorder (``compiler/capture.py``), a
segmented replay's deferral (``compiler/deferral.py``), the profiler
(``profiler/session.py``) and the multi-GPU device guard (``device_guard.py``). Each is a
:class:`Policy`, and :class:`Interposer` alone decides, from the kind
``backends/base.py`` declares for each attribute (:func:`~omnitensor.backends.base.
attribute_kind`), what reaches the policy: plain data and undeclared-to-the-policy kinds
pass through untouched; a callable of no declared kind is an error, never a silent miss.

An interposer is placed one of two ways:

* as a **stand-in** (``device.backend = Interposer(real, policy)``): only calls through
  that device see the policy, and each device may have its own (capture labels ops by
  device); the wrappers are made on first use and cached on the stand-in;
* **in place** (:meth:`Interposer.install`): the wrappers are set on the backend instance
  itself, so every holder of the instance sees them (the profiler times a backend loaded
  while it records; the guard covers the backend's calls of its own primitives); the
  returned function removes them again. Installing nothing costs nothing: the hot path
  of an uninstrumented backend has no extra frame or flag read.
"""
from __future__ import annotations

from typing import Any, Callable

from .base import HOOK, HOOK_LOOKUP, attribute_kind

__all__ = ["Policy", "Interposer"]

_ABSENT = object()


class Policy:
    """What an interposer does with a backend's callables: those of a kind in ``kinds``
    (``base.OP``, ``base.HOST_READ``...) reach :meth:`wrap`; the others run as they are."""

    kinds: frozenset[str] = frozenset()

    def wrap(self, name: str, kind: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """The callable that stands for the backend's ``name`` (of ``kind``)."""
        raise NotImplementedError

    def hook(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any] | None:
        """What ``backend.hook(name)`` answers for the implemented hook ``fn`` (None: the
        caller runs its composite instead)."""
        return self.wrap(name, HOOK, fn)


def _undeclared(real: Any, name: str) -> TypeError:
    return TypeError(
        f"backend attribute {type(real).__name__}.{name} has no declared kind: add it to "
        f"ATTRIBUTE_KINDS in omnitensor/backends/base.py (undeclared, it would run unseen "
        f"by compile, the profiler and the device guard)")


class Interposer:
    """Stands for one backend instance, applying ``policy`` to its attributes."""

    def __init__(self, real: Any, policy: Policy) -> None:
        d = self.__dict__
        d["_real"], d["_policy"] = real, policy

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._real, name)
        w = self.interpose(name, attr)
        if w is not attr:
            self.__dict__[name] = w
        return w

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._real, name, value)

    def interpose(self, name: str, attr: Any) -> Any:
        """What the backend's attribute ``name`` (its value ``attr``) becomes."""
        if not callable(attr) or isinstance(attr, type):
            return attr
        kind = attribute_kind(name)
        if kind is None:
            raise _undeclared(self._real, name)
        if kind == HOOK_LOOKUP:
            return self._lookup(attr)
        policy = self._policy
        if kind not in policy.kinds:
            return attr
        return policy.wrap(name, kind, attr)

    def _lookup(self, lookup: Callable[..., Any]) -> Callable[..., Any]:
        """``backend.hook`` under the policy (a hook found is wrapped by its kind)."""
        policy = self._policy

        def hook(name: str) -> Any:
            fn = lookup(name)
            if fn is None or attribute_kind(name) not in policy.kinds:
                return fn
            return policy.hook(name, fn)
        hook.__name__ = "hook"
        return hook

    def install(self) -> tuple[int, Callable[[], None]]:
        """Set the policy's wrappers on the backend instance itself; return how many and
        the function that restores what the instance had. ``hook`` is left alone: the
        base class's lookup reads the instance's (now wrapped) hooks."""
        real = self._real
        cls = type(real)
        installed: list[tuple[str, Any]] = []
        for name in dir(real):
            if name.startswith("_") or attribute_kind(name) == HOOK_LOOKUP \
                    or isinstance(getattr(cls, name, None), property):
                continue
            attr = getattr(real, name)
            w = self.interpose(name, attr)
            if w is not attr:
                installed.append((name, real.__dict__.get(name, _ABSENT)))
                setattr(real, name, w)

        def restore() -> None:
            for name, prev in reversed(installed):
                if prev is _ABSENT:
                    real.__dict__.pop(name, None)
                else:
                    setattr(real, name, prev)
            installed.clear()
        return len(installed), restore
