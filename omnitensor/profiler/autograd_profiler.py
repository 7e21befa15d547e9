"""``torch.autograd.profiler`` (aliased here by ``as_torch``: omnitensor's autograd layer
sits below the profiler): the names it shares with ``torch.profiler``, the legacy
``profile(enabled=True, use_cuda=..., use_cpu=...)`` as a front of
:class:`omnitensor.profiler.profile`, and ``emit_nvtx`` / ``emit_itt``, which refuse to
start (omnitensor emits neither NVTX nor ITT ranges; torch refuses where those tools are
not installed).
"""
from __future__ import annotations

from typing import Any

from .activity import DEVICE_ACTIVITIES, DeviceType, ProfilerActivity, supported_activities
from .events import EventList, FunctionEvent, FunctionEventAvg
from .profile import profile as _Profile
from .record_function import record_function

__all__ = ["DeviceType", "EventList", "FunctionEvent", "FunctionEventAvg", "ProfilerActivity",
           "profile", "record_function", "emit_nvtx", "emit_itt", "kineto_available"]


def kineto_available() -> bool:
    """False: omnitensor's profiler does not use Kineto (see omnitensor.profiler)."""
    return False


class profile(_Profile):  # torch's name
    """torch's legacy profiler: ``enabled=False`` records nothing; ``use_cpu`` and
    ``use_cuda``/``use_device`` choose the activities; the rest as ``torch.profiler``."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False,
                 use_device: str | None = None, record_shapes: bool = False,
                 with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False,
                 use_cpu: bool = True, **kwargs: Any) -> None:
        acts = {ProfilerActivity.CPU} if use_cpu else set()
        if use_cuda or use_device:
            acts |= set(supported_activities()) & DEVICE_ACTIVITIES
        self.enabled = bool(enabled)
        super().__init__(activities=acts, record_shapes=record_shapes,
                         profile_memory=profile_memory, with_stack=with_stack,
                         with_flops=with_flops, with_modules=with_modules)

    def __enter__(self) -> "profile":
        if self.enabled:
            super().__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.enabled:
            super().__exit__(*exc)


class _Emitter:
    tool = ""

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled

    def __enter__(self) -> "_Emitter":
        if self.enabled:
            raise RuntimeError(f"{type(self).__name__}: omnitensor does not emit "
                               f"{self.tool} ranges; use torch.profiler.profile")
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


class emit_nvtx(_Emitter):  # torch's name
    """torch's NVTX range emitter: refused when enabled (see the module doc)."""

    tool = "NVTX"


class emit_itt(_Emitter):  # torch's name
    """torch's ITT range emitter: refused when enabled (see the module doc)."""

    tool = "ITT"
