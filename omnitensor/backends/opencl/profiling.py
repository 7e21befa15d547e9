"""Device time for ``omnitensor.profiler``: OpenCL profiling events of every kernel.

OpenCL reports a command's device timestamps (``CL_PROFILING_COMMAND_START/END``) only on
a queue created with ``PROFILING_ENABLE``. The device's normal queue has none (so plain
runs pay nothing); while a profiler records, the device's work moves to a profiling queue
of the same context: the old queue is drained first, and :meth:`close` drains the
profiling queue and puts the old one back, so the in-order guarantee the buffer pool
relies on (one queue at a time) holds throughout. Every kernel launch goes through
``launch.run``, which then keeps the ``(queue, kernel, event)`` triple.

Copies (``enqueue_copy``) are not recorded: the device track shows kernels only.
"""
from __future__ import annotations

import time
from typing import Any

import pyopencl as cl

from . import launch

_active = 0  # timers open (one per device); launch.recording is shared by them


def _start_recording() -> None:
    global _active
    if _active == 0:
        launch.recording = []
    _active += 1


def _stop_recording() -> None:
    global _active
    _active -= 1
    if _active == 0:
        launch.recording = None


class OpenCLDeviceTimer:
    """The ``device_timer`` hook's timer for one OpenCL device (see ``backends/base.py``)."""

    def __init__(self, st: Any) -> None:
        self.st = st
        st.synchronize()  # everything enqueued before runs on the old queue, in order
        self.saved_queue = st.queue
        self.queue = cl.CommandQueue(
            st.ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
        st.queue = self.queue
        self.offset = self._clock_offset()
        self.handles: list[tuple[int, int, int, int]] = []
        self.closed = False
        _start_recording()
        log = launch.recording
        assert log is not None
        self.log: list = log

    def _clock_offset(self) -> int:
        """host perf_counter_ns minus device clock, from the tightest of a few markers:
        the host clock read around an enqueue brackets the device's COMMAND_QUEUED
        timestamp (a new queue's first enqueues are slow, hence several)."""
        best = None
        for _ in range(5):
            h0 = time.perf_counter_ns()
            evt = cl.enqueue_marker(self.queue)
            h1 = time.perf_counter_ns()
            evt.wait()
            if best is None or h1 - h0 < best[0]:
                best = (h1 - h0, (h0 + h1) // 2 - int(evt.profile.queued))
        assert best is not None
        return best[1]

    def _refine_offset(self) -> None:
        """Each kernel was queued while its primitive ran on the host (between begin and
        end): keep the offset inside every such window."""
        lo, hi = -(1 << 62), 1 << 62
        for i0, i1, h0, h1 in self.handles:
            for q, _k, evt in self.log[i0:i1]:
                if q is self.queue:
                    queued = int(evt.profile.queued)
                    lo, hi = max(lo, h0 - queued), min(hi, h1 - queued)
        if lo <= hi:
            self.offset = min(max(self.offset, lo), hi)

    def begin(self) -> tuple[int, int]:
        return (len(self.log), time.perf_counter_ns())

    def end(self, token: tuple[int, int]) -> tuple[int, int, int, int]:
        handle = (token[0], len(self.log), token[1], time.perf_counter_ns())
        self.handles.append(handle)
        return handle

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.st.synchronize()
            self._refine_offset()
        finally:
            self.st.queue = self.saved_queue
            _stop_recording()

    def spans(self, handle: tuple[int, int, int, int]) -> list[tuple[str | None, int, int]]:
        out = []
        off = self.offset
        for q, k, evt in self.log[handle[0]:handle[1]]:
            if q is self.queue:
                out.append((k.function_name, int(evt.profile.start) + off,
                            int(evt.profile.end) + off))
        return out
