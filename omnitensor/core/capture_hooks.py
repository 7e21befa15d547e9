"""The hooks through which a capture sees what core and the libraries do.

A capture (``omnitensor.compile``, ``omnitensor.jit.trace``, ``omnitensor.onnx.export``; the
recorder lives in ``omnitensor.compiler``) records the backend primitives a call runs. Two
things it cannot see from the primitives alone come through here:

* **Composite regions.** A composite written once from primitives (``linear``, ``conv2d``,
  ``lstm``, ``layer_norm`` ...) is decorated with :func:`composite`. Under a capture the call
  becomes a *region* of the captured graph: its name, its tensor inputs and outputs and its
  other arguments as attributes, with the primitives it ran nested inside. Fusion and replay
  ignore regions (they see the primitives); exporters map a region to one node of their format
  (ONNX ``Conv``, ``LSTM``) where one exists, and fall back to its primitives otherwise.
* **The running recorder** (:func:`active`), for code that must tell a capture something
  (a host read that is a graph break, a random draw whose counter must advance on replay).

When nothing captures, each hook costs one read of a module global: the hot path stays flat.
Only one capture runs at a time in a process (the recorder swaps the captured device's
backend, which is process-wide).
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Protocol, TypeVar

__all__ = ["Recorder", "active", "set_active", "composite", "check", "host_compute",
           "random_draw"]

F = TypeVar("F", bound=Callable[..., Any])


class Recorder(Protocol):
    """What core and the libraries may call on the running capture."""

    def region(self, name: str, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        """Run ``fn(*args, **kwargs)`` as the composite region ``name`` and return its
        result."""

    def check(self, flag: Any, what: str, error: type[Exception] = RuntimeError) -> bool:
        """``bool(flag.item())`` for a validation (a 0-d bool tensor that must be True),
        recorded as a check the replay repeats instead of a graph break (raising ``error``,
        the exception eager code raises there)."""

    def host_compute(self, what: str) -> None:
        """Core is about to compute on the host, out of the backend's sight: a break."""

    def random_draw(self, generator: Any) -> None:
        """The next ``random_bits`` call draws from ``generator``."""


_active: Recorder | None = None


def active() -> Recorder | None:
    """The running capture's recorder, or None when nothing captures."""
    return _active


def set_active(recorder: Recorder | None) -> Recorder | None:
    """Install ``recorder`` (None to stop capturing); returns the previous one, so a
    capture can restore it."""
    global _active
    previous = _active
    _active = recorder
    return previous


def check(flag: Any, what: str, error: type[Exception] = RuntimeError) -> bool:
    """``bool(flag.item())``: a validation read (``flag`` a 0-d bool tensor that is True
    for valid input; a failing replay raises ``error(what)``: pass the exception the caller
    raises when this returns False, so compiled code raises what eager code does). Under a
    capture it is a ``check`` node, not a graph break."""
    recorder = _active
    if recorder is None:
        return bool(flag.item())
    return recorder.check(flag, what, error)


def host_compute(what: str) -> None:
    """Tell a running capture that core computes ``what`` on the host (a graph break)."""
    recorder = _active
    if recorder is not None:
        recorder.host_compute(what)


def random_draw(generator: Any) -> None:
    """Tell a running capture which generator the next ``random_bits`` draws from."""
    recorder = _active
    if recorder is not None:
        recorder.random_draw(generator)


def composite(name: str) -> Callable[[F], F]:
    """Mark ``fn`` as the composite op ``name`` (torch's op name: ``"linear"``,
    ``"conv2d"``, ``"lstm"``): a region under a capture, a plain call otherwise."""
    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            recorder = _active
            if recorder is None:
                return fn(*args, **kwargs)
            return recorder.region(name, fn, args, kwargs)
        wrapper.__composite__ = name  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]
    return decorate
