"""Device time for ``omnitensor.profiler``: SYCL event profiling around each primitive.

dpnp calls return no events, and the device's shared queue (dpctl's cached queue, the one
dpnp itself uses) has no ``enable_profiling`` property; arrays are bound to that queue, so
the work cannot move to another one while a profiler runs. Instead a second queue of the
same context and device, created with ``enable_profiling``, receives one empty barrier
before and one after each primitive, each depending on the shared queue's unfinished
events (dpctl's ``SequentialOrderManager``, which dpnp's kernels register with; on the
generated-kernel backend's in-order queue, on a barrier submitted there). The
barriers' device timestamps bracket the primitive's work as dpctl's ``SyclTimer`` does
(``end.profiling_info_start - begin.profiling_info_end``); the shared queue itself is never
touched, so a plain run pays nothing.

On an idle device the bracket also holds the host's time to submit the primitive's
kernels: it is the device-side span from "everything before was done" to "this
primitive's work was done".
"""
from __future__ import annotations

import time
from typing import Any

import dpctl
from dpctl.utils import SequentialOrderManager


class SyclDeviceTimer:
    """The ``device_timer`` hook's timer for one SYCL queue (see ``backends/base.py``)."""

    def __init__(self, queue: Any) -> None:
        self.shared = queue
        self.queue = dpctl.SyclQueue(queue.sycl_context, queue.sycl_device,
                                     property="enable_profiling")
        self.order = SequentialOrderManager[queue]
        self.in_order = bool(queue.is_in_order)
        self.offset = self._clock_offset()
        self.handles: list[tuple[Any, Any]] = []
        self.closed = False

    def _clock_offset(self) -> int:
        """host perf_counter_ns minus device clock, from the tightest of a few barriers'
        submit times (the host clock read around the submission brackets it)."""
        best = None
        for _ in range(5):
            h0 = time.perf_counter_ns()
            evt = self.queue.submit_barrier()
            h1 = time.perf_counter_ns()
            evt.wait()
            if best is None or h1 - h0 < best[0]:
                best = (h1 - h0, (h0 + h1) // 2 - int(evt.profiling_info_submit))
        assert best is not None
        return best[1]

    def _marker(self) -> tuple[int, Any, int]:
        h0 = time.perf_counter_ns()
        if self.in_order:  # the generated backend's queue: a barrier there marks its work
            deps = [self.shared.submit_barrier()]
        else:  # dpnp registers its kernels' events with the order manager
            deps = list(self.order.submitted_events)
        evt = self.queue.submit_barrier(deps)
        return (h0, evt, time.perf_counter_ns())

    def begin(self) -> Any:
        return self._marker()

    def end(self, token: Any) -> tuple[Any, Any]:
        handle = (token, self._marker())
        self.handles.append(handle)
        return handle

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.shared.wait()
            self.queue.wait()
            # every barrier was submitted while the host clock read h0..h1 around it:
            # keep the offset inside every such window
            lo, hi = -(1 << 62), 1 << 62
            for marks in self.handles:
                for h0, evt, h1 in marks:
                    sub = int(evt.profiling_info_submit)
                    lo, hi = max(lo, h0 - sub), min(hi, h1 - sub)
            if lo <= hi:
                self.offset = min(max(self.offset, lo), hi)

    def spans(self, handle: tuple[Any, Any]) -> list[tuple[str | None, int, int]]:
        b, e = handle[0][1], handle[1][1]
        # the primitive's work cannot start before the host issued it (the opening
        # barrier often completes, idle, just before)
        start = max(int(b.profiling_info_end) + self.offset, handle[0][2])
        end = int(e.profiling_info_start) + self.offset
        return [(None, start, max(start, end))]
