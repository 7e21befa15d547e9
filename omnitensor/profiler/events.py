"""Profiler events: ``FunctionEvent`` (one op or ``record_function`` range),
``FunctionEventAvg`` (``key_averages()`` rows) and ``EventList``, with torch's attribute
names. Times are microseconds (floats), memory is bytes, as in torch."""
from __future__ import annotations

from typing import Any, Iterable


class Interval:
    """``time_range`` of an event: ``start``/``end`` in microseconds from the profiler's
    start."""

    __slots__ = ("start", "end")

    def __init__(self, start: float, end: float) -> None:
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        return self.end - self.start


class FunctionEvent:
    """One recorded torch op (``kind`` "op"), ``nn.Module`` call ("module") or
    ``record_function`` range ("user").

    ``device_type`` is the device type string of the op (``"cpu"``, ``"opencl"``,
    ``"sycl"``, ``"cuda"``; equal to the ``DeviceType`` member of that device); ``device`` the device (``"opencl:0"``). ``spans`` are the
    device's timestamps of its own work, ``(kernel or primitive name, start_ns, end_ns)``;
    ``stack`` the Python stack that called it (``with_stack``, innermost first), ``flops``
    its own FLOPs (``with_flops``).
    """

    __slots__ = ("id", "name", "trace_name", "kind", "thread", "device", "device_type",
                 "device_index", "start_ns", "end_ns", "input_shapes", "cpu_parent",
                 "cpu_children", "spans", "kernels", "self_cpu_memory_usage",
                 "self_device_memory_usage", "cpu_memory_usage", "device_memory_usage",
                 "device_time_ns", "host_recorded", "count", "base_ns", "stack", "flops",
                 "_timings")

    def __init__(self, eid: int, name: str, kind: str, thread: int, device: str,
                 device_type: str = "cpu", device_index: int = 0) -> None:
        # kept short: one is made per recorded op; the rest is filled in by link()
        self.id = eid
        self.name = self.trace_name = name  # the trace keeps "ProfilerStep#3"
        self.kind = kind  # "op" or "user" (record_function)
        self.thread = thread
        self.device = device
        self.device_type = device_type
        self.device_index = device_index
        self.start_ns = self.end_ns = 0
        self.input_shapes: list = []
        self.cpu_parent: FunctionEvent | None = None
        self.self_cpu_memory_usage = self.self_device_memory_usage = 0
        self.cpu_memory_usage = self.device_memory_usage = self.device_time_ns = 0
        self.cpu_children: list[FunctionEvent] = []
        self.spans: Any = ()
        self.kernels: list[tuple[str | None, int, int]] = []  # spans not in any child
        self.host_recorded = True
        self.count = 1
        self.base_ns = 0  # the profiler's start, for time_range
        self.stack: list[str] = []
        self.flops = 0
        self._timings: list = []  # (device timer, handle, primitive) of its own work

    key = property(lambda self: self.name)
    is_user_annotation = property(lambda self: self.kind == "user")

    @property
    def time_range(self) -> Interval:
        return Interval((self.start_ns - self.base_ns) / 1e3, (self.end_ns - self.base_ns) / 1e3)

    @property
    def cpu_time_total(self) -> float:
        return (self.end_ns - self.start_ns) / 1e3 if self.host_recorded else 0.0

    @property
    def self_cpu_time_total(self) -> float:
        if not self.host_recorded:
            return 0.0
        # in integer ns, so that a range holding only children has exactly 0 left
        own = (self.end_ns - self.start_ns) - sum(c.end_ns - c.start_ns
                                                  for c in self.cpu_children)
        return max(0, own) / 1e3

    @property
    def device_time_total(self) -> float:
        return self.device_time_ns / 1e3

    @property
    def self_device_time_total(self) -> float:
        return sum(e - s for _n, s, e in self.spans) / 1e3  # its own work only

    # torch's CUDA-named aliases, so scripts written for CUDA read the device figures
    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)
    cuda_memory_usage = property(lambda self: self.device_memory_usage)
    self_cuda_memory_usage = property(lambda self: self.self_device_memory_usage)

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} device={self.device} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"device_time_total={self.device_time_total:.3f}us>")


class FunctionEventAvg:
    """A ``key_averages()`` row: the events of one key (and input shapes, when grouped
    by them) summed; ``cpu_time``/``device_time`` are the averages per call."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_device_memory_usage = 0
        self.input_shapes: list | None = None
        self.stack: list[str] = []
        self.flops = 0
        self.device_type = "cpu"
        self.is_user_annotation = False

    def add(self, other: "FunctionEvent | FunctionEventAvg") -> "FunctionEventAvg":
        if self.key is None:
            self.key = other.key
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.device_type = other.device_type
            self.is_user_annotation = other.is_user_annotation
        elif other.key != self.key:
            raise ValueError(f"cannot average events of keys {self.key!r} and {other.key!r}")
        self.count += other.count
        for attr in ("cpu_time_total", "self_cpu_time_total", "device_time_total",
                     "self_device_time_total", "cpu_memory_usage", "self_cpu_memory_usage",
                     "device_memory_usage", "self_device_memory_usage", "flops"):
            setattr(self, attr, getattr(self, attr) + getattr(other, attr))
        return self

    cpu_time = property(lambda self: self.cpu_time_total / max(1, self.count))
    device_time = property(lambda self: self.device_time_total / max(1, self.count))
    cuda_time = device_time
    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)
    cuda_memory_usage = property(lambda self: self.device_memory_usage)
    self_cuda_memory_usage = property(lambda self: self.self_device_memory_usage)

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us "
                f"device_time_total={self.device_time_total:.3f}us>")


class EventList(list):
    """A list of events (``prof.events()``) or of averages (``key_averages()``)."""

    def __init__(self, items: Iterable = (), meta: dict | None = None) -> None:
        super().__init__(items)
        self.meta = meta or {}

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_input_shapes: bool | None = None) -> "EventList":
        """One :class:`FunctionEventAvg` per key (and per input shapes with
        ``group_by_input_shape``, per the innermost ``group_by_stack_n`` stack entries), in
        first-seen order. (``group_by_input_shapes`` is torch's EventList spelling.)"""
        if group_by_input_shapes is not None:
            group_by_input_shape = group_by_input_shapes
        n = int(group_by_stack_n)
        rows: dict[Any, FunctionEventAvg] = {}
        for ev in self:
            k: Any = ev.key
            if group_by_input_shape:
                k = (k, str(ev.input_shapes))
            if n > 0:
                k = (k, tuple(ev.stack[:n]))
            row = rows.get(k)
            if row is None:
                row = rows[k] = FunctionEventAvg()
            row.add(ev)
            row.stack = list(ev.stack[:n])  # torch keeps the grouped entries only
        meta = dict(self.meta, group_by_stack_n=n)
        return EventList(rows.values(), meta)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write one ``frame;frame;...;frame value`` line per event with a stack (outermost
        frame first; spaces and semicolons in frames become ``_``): the input of
        flamegraph.pl and speedscope, as torch writes it."""
        from .table import sort_attribute
        attr = sort_attribute(metric)
        table = str.maketrans(" ;\t\n", "____")
        with open(path, "w") as f:
            for ev in self:
                value = int(getattr(ev, attr))
                if ev.stack and value > 0:
                    frames = ";".join(e.translate(table) for e in reversed(ev.stack))
                    f.write(f"{frames} {value}\n")

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg()
        total.key = "Total"
        for ev in self:
            total.count += ev.count
            for attr in ("cpu_time_total", "self_cpu_time_total", "device_time_total",
                         "self_device_time_total"):
                setattr(total, attr, getattr(total, attr) + getattr(ev, attr))
        return total

    @property
    def self_cpu_time_total(self) -> float:
        return sum(ev.self_cpu_time_total for ev in self)

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80,
              header: str | None = None, top_level_events_only: bool = False,
              **_ignored: Any) -> str:
        """torch's table: one row per entry, sorted by ``sort_by`` (descending)."""
        from .table import build_table
        return build_table(self, sort_by=sort_by, row_limit=row_limit,
                           max_name_column_width=max_name_column_width,
                           max_shapes_column_width=max_shapes_column_width, header=header,
                           top_level_events_only=top_level_events_only)

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as Chrome trace-event JSON (``.gz``: gzip-compressed)."""
        from .trace import write_trace
        write_trace(self, path)


def link(events: list[FunctionEvent], base_ns: int, host_recorded: bool) -> list:
    """Fill in children, device totals, kernels and memory totals. ``events`` are in
    completion order (a child completes before its parent on its thread)."""
    present = {id(ev) for ev in events}
    for ev in events:
        ev.base_ns = base_ns
        if ev.kind == "user" and ev.name.startswith("ProfilerStep#"):
            ev.name = "ProfilerStep*"  # torch's key for every step
        p = ev.cpu_parent
        if p is not None and id(p) not in present:
            ev.cpu_parent = p = None
        if p is not None:
            p.cpu_children.append(ev)
    for ev in events:  # children first: their totals are final when a parent is reached
        ev.kernels = list(ev.spans)
        ev.device_time_ns = sum(e - s for _n, s, e in ev.spans) + sum(
            c.device_time_ns for c in ev.cpu_children)
        ev.cpu_memory_usage = ev.self_cpu_memory_usage + sum(
            c.cpu_memory_usage for c in ev.cpu_children)
        ev.device_memory_usage = ev.self_device_memory_usage + sum(
            c.device_memory_usage for c in ev.cpu_children)
    if host_recorded:
        return events
    # device activity only: the events that ran device work, without host times
    out = [ev for ev in events if ev.spans]
    for ev in out:
        ev.host_recorded = False
        ev.cpu_children = [c for c in ev.cpu_children if c.spans]
    return out
