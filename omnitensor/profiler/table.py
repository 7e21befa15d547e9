"""``key_averages().table()``: torch's text table (same columns, units and layout).

The device columns are named after the device type of the ops that had device time
(``Self OPENCL``, ``SYCL total``...; ``DEVICE`` when several types ran), torch's
``Self CUDA`` on CUDA."""
from __future__ import annotations

import math
from typing import Any

_SORT_KEYS = ("cpu_time", "device_time", "cpu_time_total", "device_time_total",
              "self_cpu_time_total", "self_device_time_total", "cpu_memory_usage",
              "device_memory_usage", "self_cpu_memory_usage", "self_device_memory_usage",
              "count", "flops")
_FLOP_UNITS = ("FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs")


def sort_attribute(sort_by: str) -> str:
    """The event attribute a torch sort key (``cuda_time_total``...) names."""
    attr = sort_by.replace("cuda", "device").replace("xpu", "device") \
        .replace("privateuse1", "device")
    if attr not in _SORT_KEYS:
        names = sorted(set(_SORT_KEYS) | {k.replace("device", "cuda") for k in _SORT_KEYS})
        raise ValueError(f"table(sort_by={sort_by!r}): unknown sort key; use one of "
                         f"{', '.join(names)}")
    return attr


def format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_memory(nbytes: float) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{int(nbytes)} B"


def _flops_scale(smallest: int) -> tuple[float, str]:
    """torch's unit for the FLOPs column: the one that shows the smallest count >= 1."""
    step = max(0, min(int(math.log10(smallest) // 3), len(_FLOP_UNITS) - 1))
    return 10.0 ** (-3 * step), _FLOP_UNITS[step]


def _trim_path(path: str, width: int) -> str:
    if len(path) > width:
        path = path[len(path) - width:]
        if len(path) > 3:
            path = "..." + path[3:]
    return path


def _percent(part: float, whole: float) -> str:
    return f"{(part / whole if whole else 0.0) * 100:.2f}%"


def build_table(events: Any, *, sort_by: str | None, row_limit: int,
                max_name_column_width: int, max_shapes_column_width: int,
                header: str | None, top_level_events_only: bool) -> str:
    """The table of ``events`` (torch's ``EventList.table`` arguments)."""
    if len(events) == 0:
        return ""
    rows = list(events)
    if top_level_events_only:
        rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
    if sort_by is not None:
        attr = sort_attribute(sort_by)
        rows.sort(key=lambda e: getattr(e, attr), reverse=True)
    if row_limit is not None and row_limit > 0:
        rows = rows[:row_limit]
    if not rows:
        return ""
    cols = _Columns(events, rows, max_name_column_width, max_shapes_column_width)
    sep = "".join("-" * w + "  " for w in cols.widths)
    out = []
    if header is not None:
        out += ["=" * (len(sep) - 2), header]
    if top_level_events_only:
        out += ["=" * (len(sep) - 2), "This report only display top-level ops statistics"]
    out += [sep, cols.line(cols.headers), sep]
    for e in rows:
        out.append(cols.line(cols.cells(e)))
        if cols.has_stack:  # the further frames on lines of their own, then a blank line
            blank = [""] * (len(cols.headers) - 1)
            out += [cols.line(blank + [_trim_path(f, cols.src_w)]) for f in e.stack[1:]]
            out.append(cols.line(blank + [""]))
    out.append(sep)
    out.append(f"Self CPU time total: {format_time(cols.total_self_cpu)}")
    if cols.has_dev:
        out.append(f"Self {cols.dev} time total: {format_time(cols.total_self_dev)}")
    return "\n".join(out) + "\n"


class _Columns:
    """Which columns the table has (device time, memory, shapes, FLOPs, source), their
    headers and widths, and the cells of one event's row."""

    def __init__(self, events: Any, rows: list, max_name_w: int, max_shapes_w: int) -> None:
        self.total_self_cpu = sum(e.self_cpu_time_total for e in events)
        self.total_self_dev = sum(e.self_device_time_total for e in events
                                  if not e.is_user_annotation)
        self.has_dev = any(e.self_device_time_total > 0 for e in events)
        self.has_mem = bool(events.meta.get("profile_memory"))
        self.has_dev_mem = any(e.self_device_memory_usage > 0 for e in events)
        self.has_shapes = any(e.input_shapes for e in rows)
        kinds = sorted({e.device_type for e in events if e.self_device_time_total > 0})
        self.dev = dev = kinds[0].upper() if len(kinds) == 1 else "DEVICE"
        name_w = max(len(e.key) for e in rows) + 4
        self.name_w = min(name_w, max_name_w) if max_name_w else name_w
        shapes_w = max(len(str(e.input_shapes)) for e in rows) + 4
        self.shapes_w = min(shapes_w, max_shapes_w) if max_shapes_w else shapes_w
        headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                   "CPU time avg"]
        if self.has_dev:
            headers += [f"Self {dev}", f"Self {dev} %", f"{dev} total", f"{dev} time avg"]
        if self.has_mem:
            headers += ["CPU Mem", "Self CPU Mem"]
            if self.has_dev_mem:
                headers += [f"{dev} Mem", f"Self {dev} Mem"]
        headers.append("# of Calls")
        widths = [self.name_w] + [12] * (len(headers) - 1)
        if self.has_shapes:
            headers.append("Input Shapes")
            widths.append(self.shapes_w)
        raw_flops = [e.flops for e in events if e.flops > 0]
        self.has_flops = bool(raw_flops)
        if raw_flops:
            self.flops_scale, flops_unit = _flops_scale(min(raw_flops))
            headers.append(f"Total {flops_unit}")
            widths.append(12)
        self.has_stack = any(e.stack for e in rows)
        self.src_w = min(75, max((len(f) for e in rows for f in e.stack), default=0) + 4)
        if self.has_stack:
            headers.append("Source Location")
            widths.append(self.src_w)
        self.headers, self.widths = headers, widths

    def line(self, cells: list[str]) -> str:
        last = len(self.headers) - 1 if self.has_stack else -1  # source: left-aligned
        return "".join(f"{c:<{w}}  " if i == last else f"{c:>{w}}  "
                       for i, (c, w) in enumerate(zip(cells, self.widths)))

    def cells(self, e: Any) -> list[str]:
        name_w, shapes_w = self.name_w, self.shapes_w
        name = e.key if len(e.key) < name_w - 3 else e.key[:name_w - 6] + "..."
        cells = [name, _percent(e.self_cpu_time_total, self.total_self_cpu),
                 format_time(e.self_cpu_time_total),
                 _percent(e.cpu_time_total, self.total_self_cpu), format_time(e.cpu_time_total),
                 format_time(e.cpu_time_total / max(1, e.count))]
        if self.has_dev:
            cells += [format_time(e.self_device_time_total),
                      _percent(e.self_device_time_total, self.total_self_dev),
                      format_time(e.device_time_total),
                      format_time(e.device_time_total / max(1, e.count))]
        if self.has_mem:
            cells += [format_memory(e.cpu_memory_usage), format_memory(e.self_cpu_memory_usage)]
            if self.has_dev_mem:
                cells += [format_memory(e.device_memory_usage),
                          format_memory(e.self_device_memory_usage)]
        cells.append(str(e.count))
        if self.has_shapes:
            shapes = str(e.input_shapes)
            cells.append(shapes if len(shapes) < shapes_w - 3 else shapes[:shapes_w - 6] + "...")
        if self.has_flops:
            cells.append(f"{e.flops * self.flops_scale:8.3f}" if e.flops > 0 else "--")
        if self.has_stack:
            cells.append(_trim_path(e.stack[0], self.src_w) if e.stack else "")
        return cells
