"""``Compare``: many Measurements as tables, laid out as torch's ``Compare`` lays them out.

One table per ``label``; a row per (``num_threads``, ``env``, ``sub_label`` or statement),
grouped by thread count under a ``N threads:`` rule; a column per ``description``; cells are
medians in one unit per table. ``trim_significant_figures()`` rounds each cell to the digits
its spread supports, ``colorize()`` marks the best cell of each column (or row) and the bad
ones, ``highlight_warnings()`` adds ``(! XX%)`` where the IQR is large.
"""
from __future__ import annotations

import enum
from typing import Any

import numpy as np

from . import common

__all__ = ["Colorize", "Compare"]

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _leading_digits(x: float) -> int:
    return int(np.ceil(np.log10(np.float32(x))))  # float32, as torch's table computes it


class _Column:
    """The number format of one column (shared by its cells, over all row groups)."""

    def __init__(self, cells: list[Any], scale: float, trim: bool, warnings: bool) -> None:
        found = [m for m in cells if m is not None]
        self.trim = trim
        self.warnings = warnings and any(m.has_warnings for m in found)
        digits = [_leading_digits(m.median / scale) for m in found]
        unit_digits = max(digits)
        decimals = min(max(m.significant_figures - d, 0) for d, m in zip(digits, found)) \
            if trim else 1
        self.width = unit_digits + decimals + (1 if decimals else 0)
        self.decimals = decimals

    def cell(self, m: Any, scale: float) -> str:
        if m is None:
            return " " * len(self._fmt(1.0, None))
        value = m.median / scale
        if self.trim:
            value = common.trim_sigfig(value, m.significant_figures)
        return self._fmt(value, m.iqr / m.median if m.has_warnings else None)

    def _fmt(self, value: float, spread: float | None) -> str:
        text = f"{value:>{self.width}.{self.decimals}f}"
        if self.warnings:
            text += f"{f' (! {spread * 100:.0f}%)' if spread is not None else '':>7}"
        return text


def _color(text: str, value: float, best: float) -> str:
    if value <= best * 1.01 or value <= best + 100e-9:
        return BEST + BOLD + text + TERMINATE * 2
    if value <= best * 1.1:
        return GOOD + BOLD + text + TERMINATE * 2
    if value >= best * 5:
        return VERY_BAD + BOLD + text + TERMINATE * 2
    if value >= best * 2:
        return BAD + text + TERMINATE * 2
    return text


def _table(results: list[Any], colorize: Colorize, trim: bool, warnings: bool) -> str:
    unit, scale = common.select_unit(min(r.median for r in results))

    def row_key(m: Any) -> tuple:
        return m.num_threads, m.env, m.as_row_name
    rows = common.ordered_unique(row_key(m) for m in results)
    rows.sort(key=lambda k: k[:2])  # a stable sort: statements keep their order
    cols = common.ordered_unique(m.description for m in results)
    grid: list[list[Any]] = [[None] * len(cols) for _ in rows]
    for m in results:
        grid[rows.index(row_key(m))][cols.index(m.description)] = m
    columns = [_Column([row[j] for row in grid], scale, trim, warnings)
               for j in range(len(cols))]

    envs = {m.env for m in results}
    show_env = len(envs) > 1
    env_width = max(len(e) for e in envs) if show_env else 0
    text_rows = [[""] + [str(c) if c is not None else "" for c in cols]]
    prev_env: Any = ""
    prev_threads = -1
    rules: list[int | None] = []  # the thread count opening each row's group
    for (threads, env, name), row in zip(rows, grid):
        new_group = threads != prev_threads
        if new_group:
            prev_threads, prev_env = threads, ""
        env_txt = f"({env})" if show_env and env != prev_env else ""
        prev_env = env
        text_rows.append(["  " + env_txt.ljust(env_width + 4) + name]
                         + [col.cell(m, scale) for m, col in zip(row, columns)])
        rules.append(threads if new_group else None)
    widths = [max(len(r[i]) for r in text_rows) for i in range(len(text_rows[0]))]
    header = "  |  ".join(c.center(w) for c, w in zip(text_rows[0], widths))
    out = [header]
    groups = [[i for i, k in enumerate(rows) if k[0] == t] for t in
              common.ordered_unique(k[0] for k in rows)]
    for i, (cells, row) in enumerate(zip(text_rows[1:], grid)):
        if rules[i] is not None:
            out.append(f"{rules[i]} threads: ".ljust(len(header), "-"))
        best = _best(colorize, row, grid, next(g for g in groups if i in g), len(cols))
        line = [cells[0].ljust(widths[0])]
        for j, (cell, w) in enumerate(zip(cells[1:], widths[1:])):
            cell = cell.center(w)
            if colorize is not Colorize.NONE and row[j] is not None and best[j] is not None:
                cell = _color(cell, row[j].median, best[j])
            line.append(cell)
        out.append("  |  ".join(line))
    label = results[0].label
    title = f"[{(' ' + (label or '') + ' ').center(len(header) - 2, '-')}]"
    note = ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
            if warnings and any(m.has_warnings for m in results) else "")
    return (f"{title}\n" + "\n".join(out) + "\n\n"
            f"Times are in {common.unit_to_english(unit)}s ({unit}).\n{note}")


def _best(colorize: Colorize, row: list, grid: list, group: list[int], ncols: int) -> list:
    if colorize is Colorize.ROWWISE:
        best = min(m.median for m in row if m is not None)
        return [best] * ncols
    if colorize is Colorize.COLUMNWISE:
        out = []
        for j in range(ncols):
            found = [grid[i][j].median for i in group if grid[i][j] is not None]
            out.append(min(found) if found else None)
        return out
    return [None] * ncols


class Compare:
    """Tables of many :class:`~omnitensor.utils.benchmark.Measurement` (``print()`` or
    ``str()``); replicates of one task are merged first."""

    def __init__(self, results: list[Any]) -> None:
        self._results: list[Any] = []
        self.extend_results(results)
        self._trim = False
        self._colorize = Colorize.NONE
        self._warnings = False

    def extend_results(self, results: list[Any]) -> None:
        """Add more Measurements."""
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} "
                                 f"instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Round each cell to the significant figures its measurement supports."""
        self._trim = True

    def colorize(self, rowwise: bool = False) -> None:
        """Color the cells against the best of their column (or row, ``rowwise``)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Mark cells whose IQR is large: ``(! XX%)``."""
        self._warnings = True

    def _render(self) -> list[str]:
        by_label: dict[Any, list[Any]] = {}
        for m in common.Measurement.merge(self._results):
            by_label.setdefault(m.label, []).append(m)
        return [_table(group, self._colorize, self._trim, self._warnings)
                for group in by_label.values()]

    def __str__(self) -> str:
        return "\n".join(self._render())

    def print(self) -> None:  # torch's name
        """Print the tables."""
        print(str(self))

