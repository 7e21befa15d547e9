"""Grad mode, in one place: the thread-local switches every op reads (is the graph
recorded? inference mode? anomaly detection?) and torch's public switches over them
(``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``), each a context
manager and a decorator. ``omnitensor.autograd`` and the top-level namespace re-export them.

Inference tensors (torch's rule): a tensor made inside ``inference_mode()`` is one
(``Tensor.is_inference()``, read on the storage owner, so a view of one is one and a view of
a normal tensor is not). Outside the mode torch's refusals hold: an in-place update
(checked where the version counter moves, ``Tensor._bump_version``: after the write, where
torch refuses before it; the trusted path's fused optimizer updates do not check),
``requires_grad_()``, and saving one for backward (checked in ``graph.record``). Unlike
torch, inference tensors keep a version counter.
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "set_grad_enabled_raw", "no_grad_ctx",
           "INFERENCE_ACTIVE", "INFERENCE_SEEN"]


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

#: one entry per ``inference_mode(True)`` block open on any thread: where tensors are made
#: (``tensor._make`` and its inlined copies) this list is tested first (one global read), so
#: this thread's ``_mode.inference`` is read only while some thread is in the mode
INFERENCE_ACTIVE: list[int] = []
#: non-empty once an inference tensor may exist: ``Tensor._bump_version`` checks its
#: operand's flag only then (torch refuses in-place updates of one outside the mode)
INFERENCE_SEEN: list[int] = []


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
    """Whether this thread is inside an ``inference_mode(True)`` block."""
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
    """Like ``no_grad``, for pure inference: tensors made inside are inference tensors
    (``Tensor.is_inference()``); ``inference_mode(False)`` turns the mode off and grad mode
    on, as torch's; ``@inference_mode`` and ``@inference_mode()`` decorate too."""

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
        # torch's guard sets both modes: inference_mode(False) turns inference mode off and
        # grad mode on, even inside no_grad or inference_mode()
        self._prev_inf = _mode.inference
        if self._enabled:
            INFERENCE_ACTIVE.append(1)
            if not INFERENCE_SEEN:
                INFERENCE_SEEN.append(1)
        _mode.inference = self._enabled
        _mode.refresh_forward()  # no tangents in inference mode (torch)
        self._prev = set_grad_enabled_raw(not self._enabled)

    def __exit__(self, *exc: Any) -> None:
        if self._enabled:
            INFERENCE_ACTIVE.pop()
        _mode.inference = self._prev_inf
        _mode.refresh_forward()
        set_grad_enabled_raw(self._prev)

