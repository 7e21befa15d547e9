"""``omnitensor.cuda``: torch.cuda-style queries for the ``cuda`` backend (CuPy, also its
ROCm build). Every function works without CuPy or a GPU (``is_available()`` is False)."""
from __future__ import annotations

import sys
from typing import Any

from .backends import registry
from .errors import OutOfMemoryError  # noqa: F401 - torch.cuda.OutOfMemoryError

__all__ = ["is_available", "device_count", "synchronize", "current_device",
           "get_device_name", "memory_allocated", "memory_reserved", "empty_cache", "is_rocm",
           "unavailable_reason"]


def _backend() -> Any:
    be, _why = registry.try_backend("cuda")
    return be


def is_available() -> bool:
    """True when CuPy is installed and sees at least one GPU."""
    return _backend() is not None


def unavailable_reason() -> str | None:
    """Why ``is_available()`` is False (what to install or check), else None."""
    _be, why = registry.try_backend("cuda")
    return why


def device_count() -> int:
    be = _backend()
    return be.device_count() if be is not None else 0


def _index(device: Any) -> int:
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    from .core.device import device as as_device
    return as_device(device).index


def current_device() -> int:
    be = _backend()
    if be is None:
        return 0
    import cupy
    return cupy.cuda.Device().id


def synchronize(device: Any = None) -> None:
    """Wait for every op enqueued on the device."""
    be = _backend()
    if be is not None:
        be.synchronize(_index(device))


def get_device_name(device: Any = None) -> str:
    be = _backend()
    if be is None:
        raise RuntimeError(f"no CUDA device: {unavailable_reason()}")
    return be.device_info(_index(device))["name"]


def memory_allocated(device: Any = None) -> int:
    """Bytes held by tensors in CuPy's memory pool on the device."""
    be = _backend()
    return be.memory_allocated(_index(device)) if be is not None else 0


def memory_reserved(device: Any = None) -> int:
    """Bytes the memory pool holds from the driver (allocated + cached)."""
    be = _backend()
    return be.memory_reserved(_index(device)) if be is not None else 0


def empty_cache() -> None:
    """Return cached, unused pool memory to the driver."""
    be = _backend()
    if be is not None:
        be.empty_cache()


def is_rocm() -> bool:
    """True for CuPy's ROCm (HIP) build."""
    be = _backend()
    return bool(be is not None and be.is_rocm)


# ----------------------------------------------------------------- torch.cuda idioms
# Scripts call these unconditionally (``torch.cuda.manual_seed_all(seed)``); like torch's on a
# machine without CUDA they are harmless no-ops there. omnitensor has one counter-based
# generator for every device (the same seed gives the same numbers on cpu, opencl, sycl and
# cuda), so with CUDA present seeding "the CUDA generator" seeds that one generator.
__all__ += ["manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
            "get_rng_state", "set_rng_state", "is_initialized", "init", "set_device",
            "device", "get_device_properties", "get_device_capability",
            "max_memory_allocated", "max_memory_reserved", "reset_peak_memory_stats",
            "memory_stats", "memory_summary", "is_bf16_supported", "ipc_collect"]


def manual_seed(seed: int) -> None:
    """Seed the generator CUDA tensors draw from (a no-op without CUDA, as torch's)."""
    if is_available():
        from .core.ops.random import manual_seed as _seed
        _seed(seed)


manual_seed_all = manual_seed


def seed() -> None:
    """Seed from a random number (a no-op without CUDA)."""
    if is_available():
        from .core.ops.random import seed as _seed
        _seed()


seed_all = seed


def initial_seed() -> int:
    from .core.ops.random import initial_seed as _initial
    return _initial()


def get_rng_state(device: Any = "cuda") -> Any:
    from .core.ops.random import get_rng_state as _get
    return _get()


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    if is_available():
        from .core.ops.random import set_rng_state as _set
        _set(new_state)


def is_initialized() -> bool:
    return is_available()


def init() -> None:
    """Nothing to initialise eagerly; raises as torch does when there is no CUDA."""
    if not is_available():
        raise RuntimeError(f"no CUDA device: {unavailable_reason()}")


def set_device(device: Any) -> None:
    """Select the CUDA device (a negative index is a no-op; without CUDA, an error as torch's
    is when asked for a device it does not have)."""
    idx = _index(device)
    if idx < 0:
        return
    if not is_available() or idx >= device_count():
        why = unavailable_reason() or f"this machine has {device_count()} CUDA device(s)"
        raise RuntimeError(f"CUDA device {idx} is not available: {why}")
    import cupy
    cupy.cuda.Device(idx).use()


class device:  # noqa: N801 - torch's name
    """``with torch.cuda.device(i):`` — select device ``i`` for the block."""

    def __init__(self, device: Any) -> None:
        self.idx = -1 if device is None else _index(device)
        self.prev = -1

    def __enter__(self) -> "device":
        if self.idx >= 0:
            self.prev = current_device()
            set_device(self.idx)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.prev >= 0:
            set_device(self.prev)


class _DeviceProperties:
    def __init__(self, info: dict[str, Any]) -> None:
        self.name = info.get("name", "")
        self.total_memory = int(info.get("memory", 0))
        self.multi_processor_count = int(info.get("compute_units", 0))
        cc = info.get("compute_capability", (0, 0))
        self.major, self.minor = (int(cc[0]), int(cc[1])) if len(cc) == 2 else (0, 0)

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // 2**20}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device: Any = None) -> _DeviceProperties:
    be = _backend()
    if be is None:
        raise RuntimeError(f"no CUDA device: {unavailable_reason()}")
    return _DeviceProperties(be.device_info(_index(device)))


def get_device_capability(device: Any = None) -> tuple[int, int]:
    p = get_device_properties(device)
    return p.major, p.minor


def max_memory_allocated(device: Any = None) -> int:
    """omnitensor.memory's figure for the CUDA device (CuPy tracks no peak: the current
    one); 0 without CUDA, as torch's counters are."""
    return _memory("max_memory_allocated", device, 0)


def max_memory_reserved(device: Any = None) -> int:
    return _memory("max_memory_reserved", device, 0)


def reset_peak_memory_stats(device: Any = None) -> None:
    _memory("reset_peak_memory_stats", device, None)


def memory_stats(device: Any = None) -> dict:
    return _memory("memory_stats", device, {})


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    if not is_available():
        return "No CUDA device."
    from . import memory
    return memory.memory_summary(f"cuda:{_index(device)}", abbreviated)


def _memory(name: str, device: Any, default: Any) -> Any:
    """``omnitensor.memory.<name>`` for CUDA device ``device``, ``default`` without CUDA."""
    if not is_available():
        return default
    from . import memory
    return getattr(memory, name)(f"cuda:{_index(device)}")


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether CUDA tensors can be bfloat16: on every CUDA device omnitensor reaches (CuPy
    has no bfloat16, so the cuda backend holds it widened to float32 and computes in
    float32, which torch calls emulation); False without CUDA."""
    return is_available()


def ipc_collect() -> None:
    """Nothing to collect: omnitensor shares no CUDA memory between processes."""


# torch.cuda.amp: torch.amp's deprecated spellings with device "cuda". A module attribute
# and an entry in sys.modules, so `from omnitensor.cuda.amp import GradScaler` works although
# this module is not a package.
from .amp import cuda_amp as amp  # noqa: E402

sys.modules[__name__ + ".amp"] = amp
