"""The recording session: where op events come from.

**The hook point is the backend-call boundary.** Core reaches a device only through its
backend object's primitives (``backend.matmul``, ``backend.add``, ``backend.to_numpy``...),
for every op, on every backend, on the checked and the trusted path alike. While a profiler
is set up, each loaded backend *instance* gets a timing wrapper over each of its public
primitives (the pattern ``backends/device_guard.py`` uses for multi-GPU CuPy); when it
stops, the instance attributes are removed again. With no profiler, nothing was
installed, so the hot path pays nothing at all: no flag read, no extra frame. A backend
that first loads while a profiler is set up is instrumented as it loads (the registry's
load listeners).

Events are named by the primitive (the Array API names of ``backends/base.py``:
``matmul``, ``add``, ``maximum``, ``sum``...). A primitive that a backend implements by
calling another of its own primitives shows the inner call nested under it, with self
times telling them apart (as ``aten::linear`` holds ``aten::addmm`` in torch).

Device time: the first primitive recorded on an accelerator asks its backend for a
``device_timer`` (an optional hook, ``backends/base.py``), which brackets each primitive on
the device's own clock; the timers are closed (devices drained, queues restored) when
recording stops, and the spans are read then.
"""
from __future__ import annotations

import itertools
import threading
import time
from typing import Any

import numpy as np

from ..backends import registry
from .events import FunctionEvent

#: Backend methods that are queries or plumbing, not device work: never wrapped.
_NOT_OPS = frozenset((
    "hook", "native_routines", "version", "device_count", "device_info", "supports_dtype",
    "dtype_unsupported_reason", "unavailable_reason", "memory_stats",
    "reset_peak_memory_stats", "device_index", "dlpack_device", "accepts_dlpack_device",
    "strides", "device_timer", "state", "empty_cache", "host_view", "pip_extra",
    "packages", "collective_transport", "xp",
))
#: Primitives that return views (``backends/base.py``): they allocate nothing.
_VIEWS = frozenset(("reshape", "permute", "broadcast_to", "index", "flip", "diagonal"))

_now = time.perf_counter_ns
_tid = threading.get_native_id
_HOST = ("cpu", None, "cpu", 0)  # where record_function ranges are

#: The session set up now (installed wrappers read it); at most one at a time.
active: "Session | None" = None


def _shape_of(a: Any) -> list:
    shape = getattr(a, "shape", None)
    if shape is not None and hasattr(a, "dtype"):
        return list(shape)
    return []


def _nbytes(out: Any) -> tuple[int, int]:
    """(host bytes, device bytes) of the arrays ``out`` holds."""
    if isinstance(out, (tuple, list)):
        host = dev = 0
        for o in out:
            h, d = _nbytes(o)
            host += h
            dev += d
        return host, dev
    if not hasattr(out, "shape") or not hasattr(out, "dtype"):
        return 0, 0
    n = getattr(out, "nbytes", None)
    if n is None:
        n = int(np.prod(out.shape)) * np.dtype(out.dtype).itemsize
    return (int(n), 0) if isinstance(out, np.ndarray) else (0, int(n))


class Session:
    """One profiler's recording: installed wrappers, open timers and the events."""

    def __init__(self, *, record_cpu: bool, device_time: bool, record_shapes: bool,
                 profile_memory: bool) -> None:
        self.record_cpu = record_cpu
        self.device_time = device_time
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.recording = False
        self.events: list[FunctionEvent] = []
        self.t0_ns = _now()
        self.wall0_ns = time.time_ns()
        self._local = threading.local()
        self._installed: list[tuple[Any, str, Any]] = []  # (backend, name, previous)
        self._timers: dict[tuple[int, int], Any] = {}
        self._counts: dict[int, int] = {}
        self._ids = itertools.count()  # next() is atomic under the GIL
        # (backend id, index) -> (device, timer, device type, index)
        self._where: dict[tuple[int, int], tuple[str, Any, str, int]] = {}
        self.devices: dict[str, str] = {}  # device string -> label for the trace

    # ------------------------------------------------------------ instrumentation
    def install(self) -> None:
        """Wrap every loaded backend; become the active session."""
        global active
        if active is not None:
            raise RuntimeError("another omnitensor.profiler.profile is already running; "
                               "stop it before starting a new one")
        active = self
        for be in registry.loaded_backends().values():
            self._wrap_backend(be)
        registry.add_load_listener(self._on_load)

    def _on_load(self, _device_type: str, be: Any) -> None:
        self._wrap_backend(be)

    def _wrap_backend(self, be: Any) -> None:
        cls = type(be)
        for name in dir(be):
            if name.startswith("_") or name in _NOT_OPS:
                continue
            if isinstance(getattr(cls, name, None), property):
                continue
            fn = getattr(be, name)
            if fn is None or not callable(fn) or isinstance(fn, type):
                continue
            self._installed.append((be, name, be.__dict__.get(name, _ABSENT)))
            setattr(be, name, self._wrapper(be, name, fn))

    def _wrapper(self, be: Any, name: str, fn: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            s = active
            if s is None or not s.recording:
                return fn(*args, **kwargs)
            return s.run_op(be, name, fn, args, kwargs)
        call.__name__ = name
        call.__wrapped__ = fn  # type: ignore[attr-defined]
        return call

    def uninstall(self) -> None:
        """Remove the wrappers (restoring what each instance had), close the device
        timers (draining each device) and read every event's device spans."""
        global active
        self.recording = False
        registry.remove_load_listener(self._on_load)
        for be, name, prev in reversed(self._installed):
            if prev is _ABSENT:
                be.__dict__.pop(name, None)
            else:
                setattr(be, name, prev)
        self._installed.clear()
        if active is self:
            active = None
        for timer in self._timers.values():
            if timer is not None:
                timer.close()
        for ev in self.events:
            if ev._timer is not None:
                ev.spans = ev._timer.spans(ev._handle)
                ev._timer = ev._handle = None
        self._timers.clear()

    # ----------------------------------------------------------------- recording
    def _stack(self) -> list:
        st = getattr(self._local, "stack", None)
        if st is None:
            st = self._local.stack = []
        return st

    def _new_event(self, name: str, kind: str, where: tuple, stack: list) -> FunctionEvent:
        ev = FunctionEvent(next(self._ids), name, kind, _tid(), where[0], where[2], where[3])
        ev.cpu_parent = stack[-1] if stack else None
        return ev

    def _device_index(self, be: Any, args: tuple, kwargs: dict) -> int:
        n = self._counts.get(id(be))
        if n is None:
            n = self._counts[id(be)] = be.device_count()
        if n <= 1:
            return 0
        for a in args:
            if hasattr(a, "shape") and hasattr(a, "dtype"):
                try:
                    return int(be.device_index(a))
                except Exception:  # noqa: BLE001 - a host array passed to an upload
                    break
        idx = kwargs.get("index")
        if isinstance(idx, int):
            return idx
        ints = [a for a in args if isinstance(a, int) and not isinstance(a, bool)]
        return ints[-1] if ints else 0

    def _timer(self, be: Any, index: int, device: str) -> Any:
        key = (id(be), index)
        if key in self._timers:
            return self._timers[key]
        timer = None
        make = be.hook("device_timer")
        if make is not None:
            timer = make(index)
            info = {}
            try:
                info = be.device_info(index)
            except Exception:  # noqa: BLE001 - a label only
                pass
            self.devices[device] = str(info.get("name", device))
        self._timers[key] = timer
        return timer

    def run_op(self, be: Any, name: str, fn: Any, args: tuple, kwargs: dict) -> Any:
        """Run one primitive, timed on the host and (where it has one) the device."""
        index = self._device_index(be, args, kwargs)
        where = self._where.get((id(be), index))
        if where is None:
            spec = be.spec
            device = spec.device_name(index) if spec is not None else f"{be.name}:{index}"
            timer = self._timer(be, index, device) if self.device_time else None
            where = self._where[(id(be), index)] = (device, timer, be.name, index)
        timer = where[1]
        stack = self._stack()
        ev = self._new_event(name, "op", where, stack)
        if self.record_shapes:
            ev.input_shapes = [_shape_of(a) for a in args]
        token = timer.begin() if timer is not None else None
        stack.append(ev)
        ev.start_ns = _now()
        try:
            out = fn(*args, **kwargs)
        finally:
            ev.end_ns = _now()
            if stack and stack[-1] is ev:
                stack.pop()
            if timer is not None:
                ev._timer = timer
                ev._handle = timer.end(token)
            self.events.append(ev)
        if self.profile_memory and name not in _VIEWS and out is not kwargs.get("out"):
            ev.self_cpu_memory_usage, ev.self_device_memory_usage = _nbytes(out)
        return out

    def push_user(self, name: str) -> FunctionEvent:
        """Open a ``record_function`` range on this thread."""
        stack = self._stack()
        ev = self._new_event(name, "user", _HOST, stack)
        stack.append(ev)
        ev.start_ns = _now()
        return ev

    def pop_user(self, ev: FunctionEvent) -> None:
        ev.end_ns = _now()
        stack = self._stack()
        if ev in stack:  # ranges closed out of order: drop it wherever it is
            stack.remove(ev)
        self.events.append(ev)


_ABSENT = object()
