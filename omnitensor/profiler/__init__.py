"""``omnitensor.profiler``: the profiler is not supported yet. ``profile(...)`` raises
``NotImplementedError``; ``record_function`` (a label that only matters to a running
profiler) is an inert context manager, as torch's is when no profiler runs."""
from __future__ import annotations

import enum
from typing import Any

from .._unsupported import not_supported, unsupported

__all__ = ["profile", "record_function", "ProfilerActivity", "schedule",
           "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 1
    XPU = 2
    MTIA = 3


class profile:  # noqa: N801 - torch's name
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        not_supported("omnitensor.profiler.profile",
                      "time regions with time.perf_counter() and omnitensor.synchronize()")


class record_function:  # noqa: N801
    """Labels a region for a profiler; with none running, nothing to record."""

    def __init__(self, name: str, args: Any = None) -> None:
        self.name = name

    def __enter__(self) -> "record_function":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __call__(self, fn: Any) -> Any:
        return fn


schedule = unsupported("omnitensor.profiler.schedule")
tensorboard_trace_handler = unsupported("omnitensor.profiler.tensorboard_trace_handler")
