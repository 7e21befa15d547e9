"""``omnitensor.profiler``: torch.profiler's interface on every device.

::

    from omnitensor.profiler import profile, record_function, ProfilerActivity

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 record_shapes=True) as prof:
        with record_function("train_step"):
            step()
    print(prof.key_averages().table(sort_by="device_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")   # Perfetto / chrome://tracing

Ops are timed at the backend-call boundary (each backend primitive, ``session.py``), on
the host always and on the device's own clock where it has one (``ProfilerActivity``:
any non-CPU member means "the accelerator the ops run on", so ``CUDA`` works on
``opencl`` and ``sycl``). With no profiler running nothing is installed: zero cost.
"""
from __future__ import annotations

from .activity import ProfilerActivity, supported_activities
from .events import EventList, FunctionEvent, FunctionEventAvg
from .profile import profile
from .record_function import record_function
from .schedule import ProfilerAction, schedule
from .trace import tensorboard_trace_handler

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler", "supported_activities", "EventList",
           "FunctionEvent", "FunctionEventAvg"]
