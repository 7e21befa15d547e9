"""``ProfilerActivity``: torch's activity groups, mapped onto omnitensor's devices.

``CPU`` records every op on the host (its host time, shapes, memory). Every other member
(``CUDA``, ``XPU``, ``MTIA``, ``HPU``, ``PrivateUse1``) asks for **device time** from the
device's own clock on whichever accelerator the ops run: ``opencl`` (OpenCL profiling
events of each kernel), ``sycl`` (SYCL event profiling) and ``cuda`` (CUDA events). So a
torch script passing ``ProfilerActivity.CUDA`` profiles its device work on ``opencl:0``
or ``sycl:0`` unchanged; ``XPU`` (torch's name for SYCL devices) and ``PrivateUse1``
(torch's name for an out-of-tree device) read naturally there too. ``cpu`` tensors have
host time only, as in torch.
"""
from __future__ import annotations

import enum


class ProfilerActivity(enum.Enum):
    """Activity groups (torch's names); see the module docstring for the mapping."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


#: the members that ask for device time
DEVICE_ACTIVITIES = frozenset(a for a in ProfilerActivity if a is not ProfilerActivity.CPU)


def supported_activities() -> set[ProfilerActivity]:
    """Every activity omnitensor understands (device time applies where a device has a
    clock: opencl, sycl, cuda)."""
    return set(ProfilerActivity)
