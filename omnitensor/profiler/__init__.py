"""``omnitensor.profiler``: torch.profiler's interface on every device.

::

    from omnitensor.profiler import profile, record_function, ProfilerActivity

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 record_shapes=True) as prof:
        with record_function("train_step"):
            step()
    print(prof.key_averages().table(sort_by="device_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")   # Perfetto / chrome://tracing

Rows are torch ops (``aten::linear``, ``aten::add_``: the torch-facing entry points are
wrapped while a profiler runs, ``torch_ops.py``) and, with ``with_modules=True``,
``nn.Module`` calls (``nn.Module: Linear_0``); the work of each op is timed at the
backend-call boundary (``session.py``), on the host always and on the device's own clock
where it has one (``ProfilerActivity``: any non-CPU member means "the accelerator the ops
run on", so ``CUDA`` works on ``opencl`` and ``sycl``). ``with_stack`` keeps each op's
Python stack (``key_averages(group_by_stack_n=N)``, ``export_stacks``), ``with_flops``
counts matmul/convolution FLOPs (``flops.py``). With no profiler running nothing is
installed: zero cost.
"""
from __future__ import annotations

from .activity import DeviceType, ProfilerActivity, supported_activities
from .events import EventList, FunctionEvent, FunctionEventAvg
from .profile import profile
from .record_function import record_function
from .schedule import ProfilerAction, schedule
from .trace import tensorboard_trace_handler

__all__ = ["profile", "record_function", "DeviceType", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler", "supported_activities", "EventList",
           "FunctionEvent", "FunctionEventAvg", "kineto_available"]


def kineto_available() -> bool:
    """Whether the Kineto tracing library is in use: never here (omnitensor's profiler
    times ops at its backend-call boundary itself), so False."""
    return False
