"""The recording session: where op events come from.

**The hook point is the backend-call boundary.** Core reaches a device only through its
backend object's primitives (``backend.matmul``, ``backend.add``, ``backend.to_numpy``...),
for every op, on every backend, on the checked and the trusted path alike. While a profiler
is set up, each loaded backend *instance* gets a timing wrapper over each of its public
primitives, device waits and hooks (``backends/interpose.py``'s interposer placed in
place, under the :class:`_Timing` policy; which attributes those are is declared once, in
``backends/base.py``); when it stops, the instance attributes are removed again. With no profiler, nothing was
installed, so the hot path pays nothing at all: no flag read, no extra frame. A backend
that first loads while a profiler is set up is instrumented as it loads (the registry's
load listeners).

Events are named by **torch op** (``torch_ops.py``): while a session is installed the
torch-facing entry points (Tensor methods and operators, the namespace functions,
``nn.functional``...) open an event named as torch names it (``aten::linear``,
``aten::add_``), and the primitives that op runs are its own work: their host time is its
self time, their device time, allocations and FLOPs are its own. A primitive run outside
any torch-level call (an optimizer's fused update, a backward formula written with core
functions) is an event of its own, named by torch's name of the primitive
(``aten::mul``). With ``with_modules``, each ``nn.Module`` call is an event
``nn.Module: Linear_0`` holding its ops; with ``with_stack``, each op keeps the Python stack
that called it; with ``with_flops``, matmuls (which every linear and convolution layer
runs) count ``2*M*N*K`` FLOPs.

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
from ..backends.base import HOOK, HOST_READ, OP, SYNC
from ..backends.interpose import Interposer, Policy
from . import flops as _flops
from . import torch_ops
from .events import FunctionEvent

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


def _first_device(args: tuple) -> Any:
    for a in args:
        dev = getattr(a, "_device", None)
        if dev is not None:
            return dev
    return None


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
                 profile_memory: bool, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False) -> None:
        self.record_cpu = record_cpu
        self.device_time = device_time
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.wants_modules = with_modules  # the torch_ops listener's flag
        self._module_names: dict[int, str] = {}
        self._module_counts: dict[str, int] = {}
        self.recording = False
        self.events: list[FunctionEvent] = []
        self.t0_ns = _now()
        self.wall0_ns = time.time_ns()
        self._local = threading.local()
        self._installed: list[Any] = []  # each backend's restore function
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
        torch_ops.add_listener(self)

    def _on_load(self, _device_type: str, be: Any) -> None:
        self._wrap_backend(be)

    def _wrap_backend(self, be: Any) -> None:
        _n, restore = Interposer(be, _Timing(be)).install()
        self._installed.append(restore)

    def uninstall(self) -> None:
        """Remove the wrappers (restoring what each instance had), close the device
        timers (draining each device) and read every event's device spans."""
        global active
        self.recording = False
        torch_ops.remove_listener(self)
        registry.remove_load_listener(self._on_load)
        for restore in reversed(self._installed):
            restore()
        self._installed.clear()
        if active is self:
            active = None
        for timer in self._timers.values():
            if timer is not None:
                timer.close()
        for ev in self.events:
            if ev._timings:
                ev.spans = tuple((kname or prim, start, end)
                                 for timer, handle, prim in ev._timings
                                 for kname, start, end in timer.spans(handle))
                ev._timings = []
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

    def _where_of(self, be: Any, args: tuple, kwargs: dict) -> tuple:
        index = self._device_index(be, args, kwargs)
        where = self._where.get((id(be), index))
        if where is None:
            spec = be.spec
            device = spec.device_name(index) if spec is not None else f"{be.name}:{index}"
            timer = self._timer(be, index, device) if self.device_time else None
            where = self._where[(id(be), index)] = (device, timer, be.name, index)
        return where

    def run_op(self, be: Any, name: str, fn: Any, args: tuple, kwargs: dict) -> Any:
        """Run one primitive, timed on the host and (where it has one) the device, as work
        of the torch op that called it (or as an event of its own)."""
        local = self._local
        if getattr(local, "in_primitive", False):
            return fn(*args, **kwargs)  # a primitive a backend runs inside another: its part
        where = self._where_of(be, args, kwargs)
        timer = where[1]
        stack = self._stack()
        orphan = not (stack and stack[-1].kind == "op")
        if orphan:
            owner = self._new_event(torch_ops.torch_name(name), "op", where, stack)
            if self.record_shapes:
                owner.input_shapes = [_shape_of(a) for a in args]
            if self.with_stack:
                owner.stack = _flops.python_stack()
        else:
            owner = stack[-1]
        if owner.device_type == "cpu" and where[2] != "cpu":
            owner.device, owner.device_type, owner.device_index = where[0], where[2], where[3]
        token = timer.begin() if timer is not None else None
        local.in_primitive = True
        if orphan:
            owner.start_ns = _now()
        try:
            out = fn(*args, **kwargs)
        finally:
            local.in_primitive = False
            if orphan:
                owner.end_ns = _now()
                self.events.append(owner)
            if timer is not None:
                owner._timings.append((timer, timer.end(token), name))
        if self.profile_memory and name not in _VIEWS and out is not kwargs.get("out"):
            host, dev = _nbytes(out)
            owner.self_cpu_memory_usage += host
            owner.self_device_memory_usage += dev
        if self.with_flops and name == "matmul":
            owner.flops += _flops.matmul_flops(args[0].shape, args[1].shape)
        return out

    # ------------------------------------------------ torch-level calls (torch_ops)
    def enter(self, name: str, args: tuple, kwargs: dict, kind: str = "op") -> Any:
        """A torch-level op starts on this thread: its event (None when not recording,
        or when it is the same op re-entered, as a method calling its function)."""
        if not self.recording:
            return None
        stack = self._stack()
        if stack and stack[-1].name == name and stack[-1].kind == "op":
            return None
        ev = self._new_event(name, kind, _HOST, stack)
        dev = _first_device(args)
        if dev is not None:
            ev.device, ev.device_type, ev.device_index = str(dev), dev.type, dev.index or 0
        if self.record_shapes:
            ev.input_shapes = [_shape_of(getattr(a, "_data", a)) for a in args]
        if self.with_stack:
            ev.stack = _flops.python_stack()
        stack.append(ev)
        ev.start_ns = _now()
        return ev

    def exit(self, ev: Any, result: Any) -> None:
        if ev is not None:
            self._close(ev)

    def module_label(self, module: Any) -> str:
        """The event name of a call of ``module``: ``nn.Module: <Class>_<n>`` (n counts the
        instances of the class in the order this profile first saw them)."""
        name = self._module_names.get(id(module))
        if name is None:
            cls = type(module).__name__
            n = self._module_counts.get(cls, 0)
            self._module_counts[cls] = n + 1
            name = self._module_names[id(module)] = f"nn.Module: {cls}_{n}"
        return name

    def module_enter(self, module: Any) -> Any:
        """An ``nn.Module`` call starts: its event (``module_label``)."""
        if not self.recording:
            return None
        stack = self._stack()
        ev = self._new_event(self.module_label(module), "module", _HOST, stack)
        stack.append(ev)
        ev.start_ns = _now()
        return ev

    def module_exit(self, ev: Any) -> None:
        if ev is not None:
            self._close(ev)

    def _close(self, ev: FunctionEvent) -> None:
        ev.end_ns = _now()
        stack = self._stack()
        if stack and stack[-1] is ev:
            stack.pop()
        elif ev in stack:  # closed out of order (an exception unwound past it)
            stack.remove(ev)
        self.events.append(ev)

    def push_user(self, name: str) -> FunctionEvent:
        """Open a ``record_function`` range on this thread."""
        stack = self._stack()
        ev = self._new_event(name, "user", _HOST, stack)
        stack.append(ev)
        ev.start_ns = _now()
        return ev

    def pop_user(self, ev: FunctionEvent) -> None:
        self._close(ev)



class _Timing(Policy):
    """The profiler's policy for one backend instance: each primitive, host read, hook and
    device wait runs as an op of the active session while it records (and as it is
    otherwise: a session set up but paused, or stopped while another thread calls)."""

    kinds = frozenset((OP, HOST_READ, HOOK, SYNC))

    def __init__(self, be: Any) -> None:
        self.be = be

    def wrap(self, name: str, kind: str, fn: Any) -> Any:
        be = self.be

        def call(*args: Any, **kwargs: Any) -> Any:
            s = active
            if s is None or not s.recording:
                return fn(*args, **kwargs)
            return s.run_op(be, name, fn, args, kwargs)
        call.__name__ = name
        call.__wrapped__ = fn  # type: ignore[attr-defined]
        return call
