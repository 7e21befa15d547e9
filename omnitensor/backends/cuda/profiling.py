"""Device time for ``omnitensor.profiler`` on CUDA (CuPy): a pair of CUDA events recorded
on the device's current stream around each primitive.

CUDA events measure elapsed time between two events only, so the timer records a
reference event when it starts, right after the host clock is read with the stream
drained; a span's start is the reference's host time plus the events' elapsed time.
The span covers every kernel the primitive launched on that stream (names are not
available without CUPTI).
"""
from __future__ import annotations

import time
from typing import Any

import cupy


class CudaDeviceTimer:
    """The ``device_timer`` hook's timer for one CUDA device (see ``backends/base.py``)."""

    def __init__(self, index: int) -> None:
        self.index = index
        with cupy.cuda.Device(index):
            self.stream = cupy.cuda.get_current_stream()
            self.stream.synchronize()
            self.ref = cupy.cuda.Event()
            self.ref.record(self.stream)
            self.ref.synchronize()
            self.ref_ns = time.perf_counter_ns()
        self.closed = False

    def _event(self) -> Any:
        with cupy.cuda.Device(self.index):
            evt = cupy.cuda.Event()
            evt.record(cupy.cuda.get_current_stream())
        return evt

    def begin(self) -> Any:
        return self._event()

    def end(self, token: Any) -> tuple[Any, Any]:
        return (token, self._event())

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            cupy.cuda.Device(self.index).synchronize()

    def spans(self, handle: tuple[Any, Any]) -> list[tuple[str | None, int, int]]:
        b, e = handle
        # get_elapsed_time answers milliseconds (float)
        start = self.ref_ns + int(cupy.cuda.get_elapsed_time(self.ref, b) * 1e6)
        end = self.ref_ns + int(cupy.cuda.get_elapsed_time(self.ref, e) * 1e6)
        return [(None, start, max(start, end))]
