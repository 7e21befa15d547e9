"""``detect_anomaly``: record where each op was created and name the op whose backward
produced NaN (slow: one device sync per node; for debugging)."""
from __future__ import annotations

from typing import Any

from ..core.grad_mode import _mode

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled"]


class detect_anomaly:
    """Context manager (and decorator) enabling anomaly detection."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        self._prev = _mode.anomaly
        _mode.anomaly = self.check_nan

    def __exit__(self, *exc: Any) -> None:
        _mode.anomaly = self._prev

    def __call__(self, fn: Any) -> Any:
        import functools

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


def set_detect_anomaly(mode: bool) -> None:
    _mode.anomaly = bool(mode)


def is_anomaly_enabled() -> bool:
    return _mode.anomaly
