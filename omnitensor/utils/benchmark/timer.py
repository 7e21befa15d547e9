"""``Timer``: torch.utils.benchmark's timer (``timeit``, ``blocked_autorange``,
``adaptive_autorange``) over Python's ``timeit``.

The default clock synchronizes the accelerators before it reads the time: every device of
every loaded asynchronous backend (opencl, sycl, cuda) is drained, so a block's time covers
the device work its statements enqueued, as torch's timer synchronizes CUDA. ``num_threads``
sets omnitensor's cpu thread pool while the statement runs (default 1, as torch).
"""
from __future__ import annotations

import enum
import textwrap
import timeit
from typing import Any, Callable

import numpy as np

from ..._unsupported import not_supported
from ...backends import registry
from . import common

__all__ = ["Timer", "Language", "timer"]


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class _SynchronizingClock:
    """``timeit.default_timer`` after draining every device of the loaded asynchronous
    backends (the list is refreshed when a backend loads)."""

    def __init__(self) -> None:
        self._seen = -1
        self._devices: list[Any] = []

    def _refresh(self, backends: dict) -> None:
        from ...core.device import resolve_device
        devices = []
        for name, be in backends.items():
            if getattr(be, "asynchronous", False):
                devices += [resolve_device(f"{name}:{i}") for i in range(be.device_count())]
        self._devices, self._seen = devices, len(backends)

    def __call__(self) -> float:
        backends = registry.loaded_backends()
        if len(backends) != self._seen:
            self._refresh(backends)
        for dev in self._devices:
            dev.synchronize()
        return timeit.default_timer()


#: the default clock (torch's ``timer``): synchronizes the accelerators, then reads the time
timer: Callable[[], float] = _SynchronizingClock()


def _clean(code: str) -> str:
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()


class Timer:
    """Time ``stmt`` (a string of Python, run after ``setup``) with ``globals``.

    ``label``, ``sub_label``, ``description``, ``env`` name the measurement (``Compare``
    lays tables out by them); ``num_threads`` is the cpu thread pool size while it runs.
    ``timer`` is the clock (default: synchronize the accelerators, then
    ``timeit.default_timer``). ``torch`` is in the statement's globals, as in torch
    (omnitensor here)."""

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timer,
                 globals: dict[str, Any] | None = None,  # noqa: A002 - torch's name
                 label: str | None = None, sub_label: str | None = None,
                 description: str | None = None, env: str | None = None,
                 num_threads: int = 1, language: Language | str = Language.PYTHON) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language not in (Language.PYTHON, "py", "python"):
            not_supported(f"Timer(language={language!r})",
                          "omnitensor times Python statements only (no C++ timer)")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely "
                             f"this code can simply be moved to `setup`.")
        if not isinstance(num_threads, int) or num_threads < 1:
            raise ValueError(f"Timer(num_threads={num_threads!r}): expected an int >= 1")
        import omnitensor
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", omnitensor)
        stmt, setup = _clean(stmt), _clean(setup)
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                          label=label, sub_label=sub_label,
                                          description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> common.Measurement:
        """Run ``stmt`` ``number`` times (after a warm-up of ``number // 100``) as one
        measurement."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(max(int(number // 100), 2))
            return common.Measurement(number, [self._timeit(number)], self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], Any] | None = None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _estimate_block_size(self, min_run_time: float) -> int:
        """The block size at which the clock's own cost is under 0.01% of a block."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def _loop(self, number: int, stop: Callable[[list[float]], bool], min_run_time: float,
              max_run_time: float | None, callback: Callable | None) -> list[float]:
        total, can_stop, times = 0.0, False, []
        with common.set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                can_stop = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def blocked_autorange(self, callback: Callable[[int, float], Any] | None = None,
                          min_run_time: float = 0.2) -> common.Measurement:
        """Blocks of a size that amortizes the clock (and device synchronization), for at
        least ``min_run_time`` seconds; ``callback(number, seconds)`` after each block."""
        number = self._estimate_block_size(min_run_time)
        times = self._loop(number, lambda _t: True, min_run_time, None, callback)
        return common.Measurement(number, times, self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0,
                           callback: Callable[[int, float], Any] | None = None
                           ) -> common.Measurement:
        """Blocks until the IQR is under ``threshold`` of the median (with more than 3
        blocks and ``min_run_time`` spent), or ``max_run_time`` is spent."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop(times: list[float]) -> bool:
            return len(times) > 3 and common.Measurement(
                number, times, self._task_spec).meets_confidence(threshold)
        times = self._loop(number, stop, min_run_time, max_run_time, callback)
        return common.Measurement(number, times, self._task_spec)

    def collect_callgrind(self, *args: Any, **kwargs: Any) -> Any:
        not_supported("Timer.collect_callgrind", "instruction counts need valgrind's "
                      "callgrind, which omnitensor does not drive; use blocked_autorange")
