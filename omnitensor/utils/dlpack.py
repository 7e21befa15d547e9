"""``omnitensor.utils.dlpack``: torch.utils.dlpack's ``from_dlpack`` / ``to_dlpack``.

``from_dlpack`` takes any object with ``__dlpack__`` (a NumPy, CuPy, dpnp or JAX array, a
tensor of another library) or a legacy DLPack capsule, zero-copy where the memory can be
this library's (``omnitensor.from_dlpack``); ``to_dlpack`` gives the capsule of a tensor.
"""
from __future__ import annotations

import enum
from typing import Any

__all__ = ["from_dlpack", "to_dlpack", "DLDeviceType"]


class DLDeviceType(enum.IntEnum):
    """DLPack's device types (the values of ``__dlpack_device__()[0]``)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


class _Capsule:
    """A legacy capsule (no device information: a host array, as torch assumes)."""

    def __init__(self, capsule: Any) -> None:
        self._capsule = capsule

    def __dlpack__(self, **_kwargs: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (int(DLDeviceType.kDLCPU), 0)


def from_dlpack(ext_tensor: Any) -> Any:
    """A tensor sharing the memory of ``ext_tensor`` (an object with ``__dlpack__``, or a
    DLPack capsule of host memory)."""
    import omnitensor
    if type(ext_tensor).__name__ == "PyCapsule":
        ext_tensor = _Capsule(ext_tensor)
    elif not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ or a DLPack "
                        f"capsule, got {type(ext_tensor).__name__}")
    return omnitensor.from_dlpack(ext_tensor)


def to_dlpack(tensor: Any) -> Any:
    """The DLPack capsule of ``tensor`` (consumed once by the receiving library)."""
    from ..core.tensor import Tensor
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack: expected a Tensor, got {type(tensor).__name__}")
    return tensor.__dlpack__()
