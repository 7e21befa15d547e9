"""``omnitensor.accelerator``: torch's ``torch.accelerator`` API.

The accelerator is the default device (``OMNITENSOR_DEVICE``, ``set_default_device`` or a
``with omnitensor.device(...)`` block) when it is not ``cpu``, else the one
:mod:`omnitensor.core.accelerators` chooses (``OMNITENSOR_ACCELERATOR``, else a GPU found
through CUDA, SYCL or OpenCL; host-CPU OpenCL/SYCL devices only when named), the same device
``cuda`` names under the torch alias. With none, ``is_available()`` is False and a script
written as ::

    device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() \\
        else torch.device("cpu")

runs on cpu, and the same script runs on ``opencl:0`` or ``sycl:0`` when
``OMNITENSOR_DEVICE`` says so. ``device_count`` counts devices of that type; the *index*
functions read and move the default device within that type (torch's "current device").
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

from .core import accelerators
from .core.device import Device, device as _device, get_default_device, set_default_device

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "current_device_idx", "set_device_index", "set_device_idx", "synchronize",
           "device_index", "empty_cache"]


def _current() -> Device | None:
    dev = get_default_device()
    if dev.type != "cpu":
        return dev
    # under the torch alias ``torch.cuda.is_available()`` answers for the chosen accelerator
    # while the default device stays cpu (torch's default); torch.accelerator must agree
    # with torch.cuda, as in torch, so it names that device too
    if accelerators.cuda_alias_enabled():
        kind = accelerators.cuda_device_type()
        if kind is not None:
            return _device(f"{kind}:{accelerators.current_index()}")
    return None


def is_available() -> bool:
    """True when the default device is an accelerator (not ``cpu``)."""
    return _current() is not None


def current_accelerator(check_available: bool = False) -> Device | None:
    """The accelerator's device (e.g. ``opencl:0``), or None when the default device is
    cpu. ``check_available`` is accepted as torch's is (None is returned either way)."""
    return _current()


def device_count() -> int:
    """How many devices of the accelerator's type this machine has (0 without one)."""
    dev = _current()
    if dev is None:
        return 0
    return dev.backend.device_count()


def current_device_index() -> int:
    """Index of the default device within the accelerator type (0 without one, as torch's
    answer on a cpu-only machine is a valid, unused index)."""
    dev = _current()
    return 0 if dev is None else dev.index


current_device_idx = current_device_index


def _resolve(index: Any) -> Device:
    dev = _current()
    if isinstance(index, (Device, str)):
        target = _device(index)
        if dev is not None and target.type != dev.type:
            raise ValueError(f"torch.accelerator works within the accelerator type "
                             f"{dev.type!r}; got a {target.type!r} device")
        return target
    if not isinstance(index, int) or isinstance(index, bool):
        raise TypeError(f"expected a device index (int), got {type(index).__name__}")
    if dev is None:
        raise RuntimeError("no accelerator: the default device is cpu. Choose one with "
                           "OMNITENSOR_DEVICE=opencl:0 (or sycl:0, cuda:0) or "
                           "omnitensor.set_default_device(...)")
    count = dev.backend.device_count()
    if not 0 <= index < count:
        raise ValueError(f"device index {index} is out of range: this machine has {count} "
                         f"{dev.type} device(s)")
    return _device(dev.type, index)


def set_device_index(index: Any) -> None:
    """Make device ``index`` of the accelerator type the default device (a negative index
    is a no-op, as torch's)."""
    if isinstance(index, int) and not isinstance(index, bool) and index < 0:
        return
    target = _resolve(index)
    if _aliased():
        accelerators.set_current_index(target.index)  # what `cuda` names, as torch.cuda's
    else:
        set_default_device(target)


def _aliased() -> bool:
    """Whether the accelerator is the torch alias's (the default device left cpu)."""
    return get_default_device().type == "cpu" and _current() is not None


set_device_idx = set_device_index


@contextlib.contextmanager
def device_index(index: Any) -> Iterator[None]:
    """Within the block the default device is device ``index`` of the accelerator type
    (None: no change)."""
    if index is None:
        yield
        return
    target = _resolve(index)
    if _aliased():
        before = accelerators.current_index()
        accelerators.set_current_index(target.index)
        try:
            yield
        finally:
            accelerators.set_current_index(before)
        return
    with target:
        yield


def synchronize(device: Any = None) -> None:
    """Wait for the accelerator (or ``device``) to finish every queued op (no-op on cpu)."""
    dev = _current() if device is None else _device(device) if not isinstance(device, int) \
        else _resolve(device)
    if dev is not None:
        dev.synchronize()


def empty_cache() -> None:
    """Return the accelerator's cached, unused pool memory to the driver."""
    dev = _current()
    if dev is not None:
        dev.backend.empty_cache(dev.index)
