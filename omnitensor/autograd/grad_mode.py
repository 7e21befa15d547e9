"""torch's ``torch.autograd.grad_mode`` names; grad mode lives in ``omnitensor.core.grad_mode``
(every op reads it), this module is its public face."""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable

from ..core.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                              is_inference_mode_enabled, no_grad, set_grad_enabled)

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "set_multithreading_enabled",
           "is_multithreading_enabled"]

_threading = threading.local()


def is_multithreading_enabled() -> bool:
    """Whether backward may use device worker threads (this thread's setting)."""
    return getattr(_threading, "enabled", True)


class set_multithreading_enabled:  # torch's name
    """Allow (``mode=True``, the default) or forbid multithreaded backward, for this
    thread, as a call, a context manager (restoring on exit) or a decorator.

    omnitensor's engine always runs backward on the calling thread (its backends queue
    device work themselves), which is what ``mode=False`` asks for; ``True`` permits
    worker threads and changes no result."""

    def __init__(self, mode: bool) -> None:
        self.prev = is_multithreading_enabled()
        _threading.enabled = bool(mode)
        self.mode = bool(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _threading.enabled = self.prev

    def clone(self) -> "set_multithreading_enabled":
        """A new manager with the same mode."""
        return self.__class__(self.mode)

    def __call__(self, fn: Callable) -> Callable:
        _threading.enabled = self.prev  # decorating does not switch the mode now

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper
