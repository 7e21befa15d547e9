"""``ProfilerActivity``: torch's activity groups, mapped onto omnitensor's devices; and
``DeviceType``, c10's device enumeration, as events report it.

``CPU`` records every op on the host (its host time, shapes, memory). Every other member
(``CUDA``, ``XPU``, ``MTIA``, ``HPU``, ``PrivateUse1``) asks for **device time** from the
device's own clock on whichever accelerator the ops run: ``opencl`` (OpenCL profiling
events of each kernel), ``sycl`` (SYCL event profiling) and ``cuda`` (CUDA events). So a
torch script passing ``ProfilerActivity.CUDA`` profiles its device work on ``opencl:0``
or ``sycl:0`` unchanged; ``XPU`` (torch's name for SYCL devices) and ``PrivateUse1``
(torch's name for an out-of-tree device) read naturally there too. ``cpu`` tensors have
host time only, as in torch.

``DeviceType`` has torch's members (``CPU``, ``CUDA``, ``OPENCL``, ``XPU``...). Each member's
value is the device type string an event's ``device_type`` holds (``"cpu"``, ``"cuda"``,
``"opencl"``, and ``"sycl"`` for ``XPU``, torch's name for SYCL devices), so a torch script's
``evt.device_type == DeviceType.CPU`` reads omnitensor's events as written; ``int()`` gives
c10's number (``CUDA`` 1).
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


class DeviceType(str, enum.Enum):
    """c10's device types (torch's ``torch.profiler.DeviceType``), in c10's order; values
    are the device type strings of omnitensor's events (see the module docstring)."""

    CPU = "cpu"
    CUDA = "cuda"
    MKLDNN = "mkldnn"
    OPENGL = "opengl"
    OPENCL = "opencl"
    IDEEP = "ideep"
    HIP = "hip"
    FPGA = "fpga"
    MAIA = "maia"
    XLA = "xla"
    Vulkan = "vulkan"
    Metal = "metal"
    XPU = "sycl"
    MPS = "mps"
    Meta = "meta"
    HPU = "hpu"
    VE = "ve"
    Lazy = "lazy"
    IPU = "ipu"
    MTIA = "mtia"
    PrivateUse1 = "privateuseone"

    def __int__(self) -> int:
        """c10's number of the device type (``CUDA`` 1, ``XPU`` 12)."""
        return list(DeviceType).index(self)

    def __str__(self) -> str:
        return f"DeviceType.{self.name}"


#: the members that ask for device time
DEVICE_ACTIVITIES = frozenset(a for a in ProfilerActivity if a is not ProfilerActivity.CPU)


def supported_activities() -> set[ProfilerActivity]:
    """Every activity omnitensor understands (device time applies where a device has a
    clock: opencl, sycl, cuda)."""
    return set(ProfilerActivity)
