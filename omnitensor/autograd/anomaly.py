"""``detect_anomaly``: record where each op was created and name the op whose backward
produced NaN (slow: one device sync per node; for debugging). ``check_nan=False`` keeps
the creation traces (shown when a backward fails) without the NaN check."""
from __future__ import annotations

from typing import Any

from ..core.grad_mode import _mode

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]


def _set(mode: bool, check_nan: bool) -> None:
    _mode.anomaly = bool(mode)
    _mode.anomaly_check_nan = bool(check_nan)


class detect_anomaly:
    """Context manager (and decorator) enabling anomaly detection."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        self._prev = (_mode.anomaly, _mode.anomaly_check_nan)
        _set(True, self.check_nan)

    def __exit__(self, *exc: Any) -> None:
        _set(*self._prev)

    def __call__(self, fn: Any) -> Any:
        import functools

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Turn anomaly detection on or off (``check_nan``: also check each backward's
    results for NaN), as a call or as a context manager that restores the previous
    setting on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (_mode.anomaly, _mode.anomaly_check_nan)
        _set(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _set(*self.prev)


def is_anomaly_enabled() -> bool:
    return _mode.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode checks backward results for NaN."""
    return _mode.anomaly and _mode.anomaly_check_nan
