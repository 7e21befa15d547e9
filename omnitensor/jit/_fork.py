"""``torch.jit.fork`` / ``torch.jit.wait`` (and torch's top-level ``torch.fork`` /
``torch.wait``): TorchScript's task parallelism, in eager mode.

In eager Python, torch's ``fork`` runs ``func(*args, **kwargs)`` at once, on the calling
thread, and returns a completed Future holding its result (an exception propagates from
``fork`` itself, as torch's does); ``wait`` returns the Future's value. Traced code records
the work in the order it ran, so a fork is one more call there too.
"""
from __future__ import annotations

from typing import Any, Callable

from ..futures import Future

__all__ = ["fork", "wait"]


def fork(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
    """Run ``func(*args, **kwargs)`` and return a completed :class:`Future` of its result."""
    if not callable(func):
        raise TypeError(f"fork: expected a callable, got {type(func).__name__}")
    fut: Future = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait(future: Future) -> Any:
    """The value of a Future made by :func:`fork` (blocking until it completes)."""
    if not isinstance(future, Future):
        raise TypeError(f"wait: expected a Future, got {type(future).__name__}")
    return future.wait()
