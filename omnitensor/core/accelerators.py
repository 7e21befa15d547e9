"""Which device ``cuda`` names, and which device is "the accelerator".

A torch program picks its device with one line, ``"cuda" if torch.cuda.is_available() else
"cpu"``, and moves its model and batches there with ``.to(device)``. On a machine whose
accelerator is reached through OpenCL or SYCL that line must land on that device, as PyTorch's
ROCm builds answer to ``cuda`` for AMD GPUs. So:

* **Real CUDA keeps** ``cuda``: when CuPy sees a GPU, ``cuda:N`` is that GPU.
* Otherwise, **under the torch alias** (``python -m omnitensor.as_torch``, ``omnitensor-run
  --as-torch``, ``omnitensor.as_torch.install()``; children see ``OMNITENSOR_AS_TORCH=1``),
  ``cuda:N`` names device ``N`` of the *accelerator type* and ``cuda`` the current one
  (``torch.cuda.set_device``).
* Plain omnitensor code keeps ``cuda`` meaning CuPy only: no alias without ``as_torch``.

The accelerator is chosen once, in this order:

1. ``OMNITENSOR_ACCELERATOR`` = ``TYPE`` or ``TYPE:INDEX`` (``opencl``, ``sycl:1``...): that
   type, current index INDEX (a bad value fails naming the variable and the devices found);
   ``cpu`` or ``none`` means no accelerator;
2. else ``OMNITENSOR_DEVICE`` when it names a non-cpu device (the device the user already
   chose for omnitensor);
3. else the first *GPU* among the installed backends (cuda, then sycl, then opencl). OpenCL
   and SYCL devices that run on the host CPU (PoCL, Intel's CPU runtime) are never picked
   by themselves, since NumPy on the same cores is faster: name them in (1) or (2).

The accelerator is not the default device: ``torch.zeros(3)`` still lands on the default
device (cpu unless ``OMNITENSOR_DEVICE`` or ``set_default_device`` say otherwise), so data
made on the host stays there, as in torch.
"""
from __future__ import annotations

import os
import threading

from ..backends import registry
from ..errors import DeviceError

__all__ = ["ACCELERATOR_ENV", "enable_cuda_alias", "cuda_alias_enabled", "accelerator_type",
           "cuda_device_type", "current_index", "set_current_index", "reset"]

ACCELERATOR_ENV = "OMNITENSOR_ACCELERATOR"
_GPU_SEARCH_ORDER = ("cuda", "sycl", "opencl")

_lock = threading.Lock()
_alias = [False]
_chosen: list[tuple[str | None, int] | None] = [None]   # (type or None, first index)
_current: list[int | None] = [None]                     # torch.cuda.set_device
_real_cuda: list[bool | None] = [None]                  # whether CuPy sees a GPU


def enable_cuda_alias(on: bool = True) -> None:
    """Make ``cuda`` name the accelerator when no real CUDA device exists (as_torch)."""
    _alias[0] = on


def cuda_alias_enabled() -> bool:
    return _alias[0] or os.environ.get("OMNITENSOR_AS_TORCH") == "1"


def _parse_choice(value: str, variable: str) -> tuple[str | None, int]:
    text = value.strip().lower()
    if text in ("cpu", "none"):
        return None, 0
    type_, _, idx = text.partition(":")
    found = ", ".join(f"{t}:{i}" for t in registry.device_types() if t != "cpu"
                      for i in range(_count(t))) or "none"
    if type_ not in registry.device_types() or (idx and not idx.isdigit()):
        raise DeviceError(f"{variable}={value!r} is not a device: expected TYPE or TYPE:INDEX "
                          f"with TYPE one of {', '.join(registry.device_types())}. "
                          f"Accelerators on this machine: {found}")
    index = int(idx or 0)
    if index >= _count(type_):
        raise DeviceError(f"{variable}={value!r}: this machine has {_count(type_)} {type_} "
                          f"device(s). Accelerators on this machine: {found}")
    return type_, index


def _count(device_type: str) -> int:
    be, _why = registry.try_backend(device_type)
    return be.device_count() if be is not None else 0


def _is_gpu(device_type: str, index: int) -> bool:
    be, _why = registry.try_backend(device_type)
    if be is None:
        return False
    if device_type == "cuda":
        return True
    kind = str(be.device_info(index).get("type", be.device_info(index).get("filter", "")))
    return "gpu" in kind.lower()


def _choose() -> tuple[str | None, int]:
    explicit = os.environ.get(ACCELERATOR_ENV, "").strip()
    if explicit:
        return _parse_choice(explicit, ACCELERATOR_ENV)
    default = os.environ.get("OMNITENSOR_DEVICE", "").strip()
    if default and default.lower().partition(":")[0] != "cpu":
        return _parse_choice(default, "OMNITENSOR_DEVICE")
    for t in _GPU_SEARCH_ORDER:
        for i in range(_count(t)):
            if _is_gpu(t, i):
                return t, i
    return None, 0


def _choice() -> tuple[str | None, int]:
    chosen = _chosen[0]
    if chosen is None:
        with _lock:
            chosen = _chosen[0]
            if chosen is None:
                chosen = _chosen[0] = _choose()
    return chosen


def accelerator_type() -> str | None:
    """The accelerator's device type (``"opencl"``, ``"sycl"``, ``"cuda"``), or None."""
    return _choice()[0]


def cuda_device_type() -> str | None:
    """The device type ``cuda`` names here: ``"cuda"`` with a real CUDA device, the
    accelerator's type under the torch alias, else None (``cuda`` is unavailable)."""
    real = _real_cuda[0]
    if real is None:
        real = _real_cuda[0] = _count("cuda") > 0
    if real:
        return "cuda"
    if not cuda_alias_enabled():
        return None
    return accelerator_type()


def current_index() -> int:
    """The index ``cuda`` (no index) names: ``set_current_index``'s, else the chosen one."""
    cur = _current[0]
    return _choice()[1] if cur is None else cur


def set_current_index(index: int) -> None:
    _current[0] = index


def reset() -> None:
    """Forget the choice (tests that change the environment)."""
    _chosen[0] = None
    _current[0] = None
    _real_cuda[0] = None
