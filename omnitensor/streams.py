"""torch's device-generic streams and events (``torch.Stream``, ``torch.Event``) and
``torch.get_device_module``.

Every omnitensor device runs its ops through one in-order queue (an OpenCL command queue, a
SYCL in-order queue, CuPy's stream; cpu runs them as they are called), so a device's streams
are all that one queue: work is ordered already, ``wait_stream``/``wait_event`` have nothing
to add, and ``synchronize`` waits for the queue (``omnitensor.synchronize``). An event's
``record`` waits for the work queued before it and stamps the host clock, so
``elapsed_time`` is the device time between two records. On cpu the answers are torch's cpu
stream's: ``synchronize``/``query`` succeed, and events cannot be recorded ("cpu backend
doesn't support events.").
"""
from __future__ import annotations

import time
import types
from typing import Any

from .core.device import Device, device as _device

__all__ = ["Stream", "Event", "get_device_module"]

_NO_CPU_EVENTS = "cpu backend doesn't support events."
#: c10's DeviceType numbers (torch.Stream.device_type); SYCL devices are torch's XPU type
_DEVICE_TYPE = {"cpu": 0, "cuda": 1, "opencl": 4, "sycl": 12, "meta": 14}


def _default_device() -> Device:
    """torch's default for a stream or event: the current accelerator, else cpu."""
    from .accelerator import current_accelerator
    return current_accelerator() or _device("cpu")


def _resolve(device: Any) -> Device:
    if device is None:
        return _default_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return _device(_default_device().type, device)
    return _device(device)


class Stream:
    """torch's ``Stream``: a device's in-order queue (see the module doc)."""

    def __init__(self, device: Any = None, *, priority: int = 0, **_: Any) -> None:
        self.device = _resolve(device)
        self.priority = priority
        self.stream_id = 0

    @property
    def device_type(self) -> int:
        """c10's DeviceType number, as torch's (cpu 0, cuda 1, opencl 4, sycl: XPU's 12)."""
        return _DEVICE_TYPE[self.device.type]

    @property
    def device_index(self) -> int:
        """The device's index (-1 on cpu, as torch's cpu stream answers)."""
        return -1 if self.device.type == "cpu" else self.device.index

    def query(self) -> bool:
        """Whether all queued work is done: after waiting for it, True."""
        self.synchronize()
        return True

    def synchronize(self) -> None:
        """Wait for every op queued on the device."""
        if self.device.type != "cpu":
            self.device.synchronize()

    def wait_event(self, event: "Event") -> None:
        """Ordered already: the device has one in-order queue."""

    def wait_stream(self, stream: "Stream") -> None:
        """Ordered already (one in-order queue per device); cpu has no events, so torch's
        cpu stream refuses."""
        if self.device.type == "cpu":
            raise RuntimeError(_NO_CPU_EVENTS)

    def record_event(self, event: "Event | None" = None) -> "Event":
        """Record ``event`` (a new one when None) on this stream; returns it."""
        event = Event(self.device) if event is None else event
        event.record(self)
        return event

    def is_capturing(self) -> bool:
        """No graph capture of streams: omnitensor.compile captures (docs/compile.md)."""
        return False

    def __enter__(self) -> "Stream":
        return self  # work in the block goes to the device's queue, where it goes anyway

    def __exit__(self, *exc: Any) -> None:
        return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.device is self.device

    def __hash__(self) -> int:
        return hash(("stream", self.device))

    def __repr__(self) -> str:
        return (f"torch.Stream device_type={self.device.type}, "
                f"device_index={self.device_index}, stream_id={self.stream_id}")


class Event:
    """torch's ``Event``: a marker in a device's queue (see the module doc)."""

    def __init__(self, device: Any = None, *, enable_timing: bool = False,
                 blocking: bool = False, interprocess: bool = False) -> None:
        self.device = _resolve(device)
        self.enable_timing = enable_timing
        self.blocking = blocking
        self.interprocess = interprocess
        self.event_id = 0
        self._stamp: float | None = None

    def record(self, stream: Stream | None = None) -> None:
        """Mark the point after the work queued so far on ``stream`` (the event's device
        when None): waits for that work, then stamps the host clock."""
        dev = stream.device if stream is not None else self.device
        if dev.type == "cpu":
            raise RuntimeError(_NO_CPU_EVENTS)
        dev.synchronize()
        self.device = dev
        self._stamp = time.perf_counter()

    def wait(self, stream: Stream | None = None) -> None:
        """Ordered already: work queued after the record runs after it."""

    def query(self) -> bool:
        """Whether the recorded work is done: :meth:`record` waited for it (True also for
        an event never recorded, as torch's)."""
        return True

    def synchronize(self) -> None:
        """Already waited for at :meth:`record`."""

    def elapsed_time(self, end_event: "Event") -> float:
        """Milliseconds from this event's record to ``end_event``'s."""
        if self.device.type == "cpu" or end_event.device.type == "cpu":
            raise RuntimeError(_NO_CPU_EVENTS)
        if self._stamp is None or end_event._stamp is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed "
                               "time.")
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        return (end_event._stamp - self._stamp) * 1000.0

    def ipc_handle(self) -> Any:
        raise RuntimeError("Event.ipc_handle: omnitensor's events are not shared between "
                           "processes (no backend exports them)")

    def __repr__(self) -> str:
        index = -1 if self.device.type == "cpu" else self.device.index
        return (f"torch.Event device_type={self.device.type}, device_index={index}, "
                f"event_id={self.event_id}")


_MODULES: dict[str, types.ModuleType] = {}


def _device_module(kind: str) -> types.ModuleType:
    """A module of torch's device-module functions for device type ``kind`` (what
    ``torch.cpu`` or ``torch.xpu`` is to torch), made once per type."""
    if kind in _MODULES:
        return _MODULES[kind]
    from .core.device import devices
    mod = types.ModuleType(f"omnitensor.{kind}", f"torch.{kind}: the {kind} devices' module")

    def device_count() -> int:
        return len(devices(kind))

    def current_device() -> Any:
        dflt = _default_device()
        return "cpu" if kind == "cpu" else dflt.index if dflt.type == kind else 0

    def synchronize(device: Any = None) -> None:
        Stream(kind if device is None else device).synchronize()

    def current_stream(device: Any = None) -> Stream:
        return Stream(kind if device is None else device)

    mod.__dict__.update(is_available=lambda: device_count() > 0, device_count=device_count,
                        current_device=current_device, synchronize=synchronize,
                        current_stream=current_stream, Stream=Stream, Event=Event,
                        is_initialized=lambda: True)
    _MODULES[kind] = mod
    return mod


def get_device_module(device: Any = None) -> types.ModuleType:
    """The module of ``device``'s type (``torch.cuda`` for cuda; for cpu, opencl and sycl
    a module of is_available, device_count, current_device, synchronize, current_stream,
    Stream and Event); None: the current accelerator's, else cpu's."""
    kind = _resolve(device).type
    if kind == "cuda":
        from . import cuda
        return cuda
    return _device_module(kind)
