"""Grad mode, in one place: the thread-local switches every op reads (is the graph
recorded? inference mode? anomaly detection?) and torch's public switches over them
(``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``), each a context
manager and a decorator. ``omnitensor.autograd`` and the top-level namespace re-export them.
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "set_grad_enabled_raw", "no_grad_ctx"]


class _GradMode(threading.local):
    """``enabled``: ops call ``record()`` (hot paths read only this); it is grad mode, or a
    forward-AD level being active, since tangents flow under ``no_grad`` too (torch).
    ``grad``: grad mode proper (``is_grad_enabled``), which decides whether ``record()``
    attaches the reverse graph. ``forward``: some forward-AD level is visible (levels at or
    above ``fw_ceiling`` are hidden while a tangent at that level is computed); inference
    mode and library-internal ``no_grad_ctx`` turn it off (``core/forward_ad.py``)."""

    def __init__(self) -> None:
        self.enabled = True
        self.grad = True
        self.inference = False
        self.anomaly = False
        self.anomaly_check_nan = True  # anomaly mode also checks backward for NaN
        self.forward = False
        self.fw_levels: tuple[int, ...] = ()
        self.fw_ceiling = 1 << 30

    def refresh_forward(self) -> None:
        """Recompute ``forward`` and ``enabled`` after a level, ceiling or mode change."""
        ceiling = self.fw_ceiling
        self.forward = not self.inference and any(lv < ceiling for lv in self.fw_levels)
        self.enabled = self.grad or self.forward


#: this thread's modes; hot paths (the elementwise dispatcher, the engine) read it directly
_mode = _GradMode()


def is_grad_enabled() -> bool:
    """Whether ops record the graph on this thread."""
    return _mode.grad


def set_grad_enabled_raw(flag: bool) -> bool:
    """Set grad mode; returns the previous value (used by the context managers below)."""
    prev = _mode.grad
    _mode.grad = flag = bool(flag)
    _mode.enabled = flag or _mode.forward
    return prev


def is_inference_mode_enabled() -> bool:
    return _mode.inference


class no_grad_ctx:
    """Internal, allocation-light ``no_grad`` for library code (the public,
    decorator-capable one is :class:`no_grad`)."""

    __slots__ = ("prev",)

    def __enter__(self) -> None:
        # library code records its own node around this block: nothing inside records,
        # neither the reverse graph nor forward-AD tangents
        m = _mode
        self.prev = (m.enabled, m.grad, m.forward)
        m.enabled = m.grad = m.forward = False

    def __exit__(self, *exc: Any) -> None:
        _mode.enabled, _mode.grad, _mode.forward = self.prev


class _GradModeContext:
    """Base: subclasses set ``_target`` (the grad mode inside the block)."""

    _target = True

    def __enter__(self) -> None:
        self._prev = set_grad_enabled_raw(self._target)

    def __exit__(self, *exc: Any) -> None:
        set_grad_enabled_raw(self._prev)

    def __call__(self, fn: Callable) -> Callable:
        cls = type(self)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with cls():
                return fn(*args, **kwargs)
        return wrapper


class _BareDecorator(_GradModeContext):
    """A switch that is also a decorator without parentheses (``@no_grad``), as in torch."""

    def __new__(cls, orig_func: Callable | None = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return super().__new__(cls)(orig_func)


class no_grad(_BareDecorator):
    """Disable graph recording: ``with no_grad():``, ``@no_grad()`` or ``@no_grad``."""

    _target = False


class enable_grad(_BareDecorator):
    """Enable graph recording inside a ``no_grad`` block (``@enable_grad`` too)."""

    _target = True


class set_grad_enabled(_GradModeContext):
    """``set_grad_enabled(False)`` as a call, a context manager or a decorator."""

    def __init__(self, mode: bool) -> None:
        self._target = bool(mode)
        self._prev = set_grad_enabled_raw(self._target)  # takes effect as a plain call too

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        set_grad_enabled_raw(self._prev)

    def __call__(self, fn: Callable) -> Callable:
        set_grad_enabled_raw(self._prev)
        target = self._target

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            prev = set_grad_enabled_raw(target)
            try:
                return fn(*args, **kwargs)
            finally:
                set_grad_enabled_raw(prev)
        return wrapper


class inference_mode(_GradModeContext):
    """Like ``no_grad``, for pure inference (``inference_mode(False)`` is a no-op);
    ``@inference_mode`` and ``@inference_mode()`` decorate too."""

    def __new__(cls, mode: Any = True) -> Any:
        self = super().__new__(cls)
        if callable(mode):  # used as a bare decorator: mode is the function
            self._enabled = True
            return self(mode)
        return self

    def __init__(self, mode: Any = True) -> None:
        self._enabled = bool(mode)

    def __call__(self, fn: Callable) -> Callable:
        enabled = self._enabled

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(enabled):
                return fn(*args, **kwargs)
        return wrapper

    def __enter__(self) -> None:
        self._prev_inf = _mode.inference
        if self._enabled:
            _mode.inference = True
            _mode.refresh_forward()  # no tangents in inference mode (torch)
            self._prev = set_grad_enabled_raw(False)
        else:
            self._prev = is_grad_enabled()

    def __exit__(self, *exc: Any) -> None:
        _mode.inference = self._prev_inf
        _mode.refresh_forward()
        set_grad_enabled_raw(self._prev)

