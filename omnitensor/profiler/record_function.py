"""``record_function``: a labelled range in the profile (context manager or decorator).
With no profiler recording it costs one global read."""
from __future__ import annotations

import functools
from typing import Any, Callable

from . import session


class record_function:  # torch's name
    """Label a region: ``with record_function("forward"): ...`` or
    ``@record_function("step")``. The range appears in ``key_averages()`` (its times
    include the ops inside) and in the trace as a ``user_annotation``."""

    def __init__(self, name: str, args: str | None = None) -> None:
        if not isinstance(name, str):
            raise TypeError(f"record_function: name must be a str, got {type(name).__name__}")
        self.name = name
        self.args = args
        self._event: Any = None
        self._session: Any = None

    def __enter__(self) -> "record_function":
        s = session.active
        if s is not None and s.recording:
            self._session = s
            self._event = s.push_user(self.name)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._event is not None:
            self._session.pop_user(self._event)
            self._event = self._session = None

    def __call__(self, fn: Callable) -> Callable:
        name = self.name

        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with record_function(name):
                return fn(*args, **kwargs)
        return wrapped
