"""``TaskSpec`` and ``Measurement``: what a :class:`~omnitensor.utils.benchmark.Timer`
measured, with torch's fields, statistics, warnings and text (``torch.utils.benchmark``).

Statistics are over the per-run times (``raw_times / number_per_run``): the median and the
quartiles by linear interpolation (torch's ``quantile``), the mean, and an estimate of the
significant figures from the spread of the inter-quartile points.
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import math
import textwrap
from typing import Any, Iterable, Iterator

import numpy as np

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig",
           "ordered_unique", "set_torch_threads"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns: below this the timer itself is the noise
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What was timed (everything of a Timer but its globals)."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (or the one-line statement), with the sub-label."""
        sub = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + sub
        if "\n" not in self.stmt:
            return self.stmt + sub
        head = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{head}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The task's part of a Measurement's text."""
        parts = [self.title, self.description or "", self.setup_str()]
        return "\n".join(p + "\n" if "\n" in p else p for p in parts if p)


_TASKSPEC_FIELDS = frozenset(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """The times of one statement: ``raw_times`` of blocks of ``number_per_run`` runs.

    ``times`` (seconds per run), ``median``, ``mean``, ``iqr``, ``significant_figures``,
    ``has_warnings`` (the IQR is over 10% of the median); the task's fields (``label``,
    ``stmt``, ``num_threads``...) read through. ``Measurement.merge`` pools replicates."""

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None  # the user's

    def __post_init__(self) -> None:
        self._sorted: tuple[float, ...] = ()
        self._warnings: tuple[str, ...] = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name: str) -> Any:
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute {name!r}")

    @property
    def times(self) -> list[float]:
        return [t / self.number_per_run for t in self.raw_times]

    def _stats(self) -> None:
        if self._sorted or not self.raw_times:
            return
        self._sorted = tuple(sorted(self.times))
        a = np.asarray(self._sorted, dtype=np.float64)
        self._median, self._p25, self._p75 = (float(v) for v in np.quantile(a, [.5, .25, .75]))
        self._mean = float(a.mean())
        for threshold, why in ((_IQR_GROSS_WARN_THRESHOLD,
                                "This suggests significant environmental influence."),
                               (_IQR_WARN_THRESHOLD, "This could indicate system fluctuation.")):
            if not self.meets_confidence(threshold):
                self._warnings = (f"  WARNING: Interquartile range is "
                                  f"{self.iqr / self.median * 100:.1f}% of the median "
                                  f"measurement.\n           {why}",)
                break

    @property
    def median(self) -> float:
        self._stats()
        return self._median

    @property
    def mean(self) -> float:
        self._stats()
        return self._mean

    @property
    def iqr(self) -> float:
        self._stats()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """Digits of the median the spread of the inter-quartile points supports (1..4)."""
        self._stats()
        n = len(self._sorted)
        middle = np.asarray(self._sorted[n // 4:math.ceil(3 * n / 4)], dtype=np.float64)
        ci = max(1.645 * float(middle.std()) / math.sqrt(len(middle)),
                 _MIN_CONFIDENCE_INTERVAL)
        digits = math.floor(math.log10(self._median / ci))
        return min(max(digits, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        self._stats()
        return bool(self._warnings)

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str:
        return "Unspecified env" if self.task_spec.env is None else self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        self._stats()
        n = len(self._sorted)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} "
                         f"to {self._p75 / scale:.2f})")
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {self.num_threads} "
                     f"thread{'s' if self.num_threads > 1 else ''}")
        lines.extend(self._warnings)
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements: Iterable["Measurement"]) -> list["Measurement"]:
        """Pool the replicates of each task into one Measurement of single runs (metadata
        is not carried over)."""
        groups: dict[TaskSpec, list[float]] = collections.defaultdict(list)
        for m in measurements:
            groups[m.task_spec].extend(m.times)
        return [Measurement(1, times, spec) for spec, times in groups.items()]


def select_unit(t: float) -> tuple[str, float]:
    """The unit (``ns``, ``us``, ``ms``, ``s``) that shows ``t`` seconds as 1..999."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(np.log10(np.float32(t)) // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def unit_to_english(u: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise ValueError(f"trim_sigfig: the number of significant figures must be an "
                         f"integer, got {n!r}")
    # in float32, as torch's own helper computes it, so tables print the same digits
    scale = 10.0 ** (int(np.ceil(np.log10(np.float32(abs(x))))) - n)
    return float(np.round(np.float32(x / scale)) * np.float32(scale))


def ordered_unique(elements: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n: int) -> Iterator[None]:
    """Run the block with ``n`` intra-op threads (omnitensor's cpu thread pool)."""
    import omnitensor
    prior = omnitensor.get_num_threads()
    try:
        omnitensor.set_num_threads(n)
        yield
    finally:
        omnitensor.set_num_threads(prior)
