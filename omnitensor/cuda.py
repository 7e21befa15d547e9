"""``omnitensor.cuda`` (torch's ``torch.cuda``): the device that ``cuda`` names.

That is a real CUDA GPU when CuPy sees one; under the torch alias without one, the user's
accelerator (``OMNITENSOR_ACCELERATOR``, else a non-cpu ``OMNITENSOR_DEVICE``, else a GPU
found through SYCL or OpenCL; see :mod:`omnitensor.core.accelerators`), as PyTorch's ROCm
builds answer to ``cuda`` for AMD GPUs. Without either, every query answers as torch's does
on a machine without CUDA (``is_available()`` is False, seeding is a no-op).

Streams and events: omnitensor keeps one in-order queue per device, so every ``Stream`` of a
device is that queue (work is ordered as if on one stream, which is always correct), and an
``Event`` records by waiting for the queue and reading the host clock, so ``elapsed_time``
measures the device work between two records.
"""
from __future__ import annotations

import contextlib
import sys
import time
from typing import Any, Iterator

from .core import accelerators
from .core.device import Device, device as _as_device
from .errors import OutOfMemoryError  # torch.cuda.OutOfMemoryError

__all__ = ["is_available", "device_count", "synchronize", "current_device", "set_device",
           "device", "device_of", "get_device_name", "get_device_properties",
           "get_device_capability", "is_rocm", "unavailable_reason", "memory_allocated",
           "memory_reserved", "max_memory_allocated", "max_memory_reserved",
           "reset_peak_memory_stats", "reset_max_memory_allocated", "memory_stats",
           "memory_summary", "empty_cache", "mem_get_info", "manual_seed", "manual_seed_all",
           "seed", "seed_all", "initial_seed", "get_rng_state", "set_rng_state",
           "get_rng_state_all", "set_rng_state_all", "is_initialized", "init",
           "is_bf16_supported", "ipc_collect", "Stream", "Event", "current_stream",
           "default_stream", "stream", "set_stream", "StreamContext", "OutOfMemoryError"]


def _type() -> str | None:
    return accelerators.cuda_device_type()


def is_available() -> bool:
    """True when ``cuda`` names a device: a real CUDA GPU, or the accelerator under the
    torch alias."""
    return _type() is not None and device_count() > 0


def unavailable_reason() -> str | None:
    """Why ``is_available()`` is False (what to install, set or check), else None."""
    if is_available():
        return None
    from .backends import registry
    _be, why = registry.try_backend("cuda")
    if accelerators.cuda_alias_enabled():
        return (f"no CUDA device ({why}) and no accelerator chosen: set "
                f"{accelerators.ACCELERATOR_ENV}=opencl (or sycl, sycl:1...) to run the "
                f"program's 'cuda' work there")
    return why


def device_count() -> int:
    """How many devices ``cuda:N`` can name (0 without any)."""
    t = _type()
    if t is None:
        return 0
    from .backends import registry
    be, _why = registry.try_backend(t)
    return be.device_count() if be is not None else 0


def current_device() -> int:
    """The index ``cuda`` names (``set_device``'s)."""
    return accelerators.current_index()


def _dev(device: Any = None) -> Device:
    """The Device ``device`` (None, an index, ``"cuda:1"``, a Device) names."""
    if not is_available():
        raise RuntimeError(f"no CUDA device: {unavailable_reason()}")
    if device is None:
        return _as_device("cuda")
    if isinstance(device, int) and not isinstance(device, bool):
        return _as_device("cuda", device)
    return _as_device(device)


def synchronize(device: Any = None) -> None:
    """Wait for every op enqueued on the device (a no-op without one)."""
    if is_available():
        _dev(device).synchronize()


def set_device(device: Any) -> None:
    """Make ``device`` the one ``cuda`` names (a negative index is a no-op)."""
    idx = device if isinstance(device, int) else _as_device(device).index
    if idx < 0:
        return
    if not is_available() or idx >= device_count():
        why = unavailable_reason() or f"this machine has {device_count()} such device(s)"
        raise RuntimeError(f"CUDA device {idx} is not available: {why}")
    accelerators.set_current_index(idx)
    if _type() == "cuda":
        import cupy
        cupy.cuda.Device(idx).use()


class device:  # torch's name
    """``with torch.cuda.device(i):`` selects device ``i`` for the block."""

    def __init__(self, device: Any) -> None:
        self.idx = -1 if device is None else (
            device if isinstance(device, int) else _as_device(device).index)
        self.prev = -1

    def __enter__(self) -> "device":
        if self.idx >= 0:
            self.prev = current_device()
            set_device(self.idx)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.prev >= 0:
            set_device(self.prev)


class device_of(device):  # torch's name
    """``with torch.cuda.device_of(tensor):`` selects the tensor's device (no-op on cpu)."""

    def __init__(self, obj: Any) -> None:
        d = obj.device
        super().__init__(d.index if d.type != "cpu" and d.type == _type() else None)


def get_device_name(device: Any = None) -> str:
    return str(_dev(device).info().get("name", ""))


class _DeviceProperties:
    def __init__(self, info: dict[str, Any]) -> None:
        self.name = str(info.get("name", ""))
        self.total_memory = int(info.get("memory", 0))
        self.multi_processor_count = int(info.get("compute_units", 0))
        cc = info.get("compute_capability", (0, 0))
        self.major, self.minor = (int(cc[0]), int(cc[1])) if len(cc) == 2 else (0, 0)
        self.is_integrated = False

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // 2**20}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device: Any = None) -> _DeviceProperties:
    """Name, memory and compute units; ``major``/``minor`` are the CUDA compute capability
    on CUDA and (0, 0) on other devices, which have none."""
    return _DeviceProperties(_dev(device).info())


def get_device_capability(device: Any = None) -> tuple[int, int]:
    p = get_device_properties(device)
    return p.major, p.minor


def is_rocm() -> bool:
    """True for CuPy's ROCm (HIP) build."""
    if _type() != "cuda":
        return False
    return bool(getattr(_dev().backend, "is_rocm", False))


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether ``cuda`` tensors can be bfloat16: on every device omnitensor reaches
    (held natively or widened to float32, computing in float32); False without one."""
    return is_available()


# ---------------------------------------------------------------------- memory
def _memory(name: str, device: Any, default: Any) -> Any:
    """``omnitensor.memory.<name>`` for the device, ``default`` without one (torch's
    counters are 0 on a machine without CUDA)."""
    if not is_available():
        return default
    from . import memory
    return getattr(memory, name)(_dev(device))


def memory_allocated(device: Any = None) -> int:
    """Bytes held by tensors in the device's pool."""
    return int(_memory("memory_allocated", device, 0))


def memory_reserved(device: Any = None) -> int:
    """Bytes the pool holds from the driver (allocated + cached)."""
    return int(_memory("memory_reserved", device, 0))


def max_memory_allocated(device: Any = None) -> int:
    return int(_memory("max_memory_allocated", device, 0))


def max_memory_reserved(device: Any = None) -> int:
    return int(_memory("max_memory_reserved", device, 0))


def reset_peak_memory_stats(device: Any = None) -> None:
    _memory("reset_peak_memory_stats", device, None)


reset_max_memory_allocated = reset_peak_memory_stats


def memory_stats(device: Any = None) -> dict:
    return dict(_memory("memory_stats", device, {}))


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    if not is_available():
        return "No CUDA device."
    from . import memory
    return memory.memory_summary(_dev(device), abbreviated)


def empty_cache() -> None:
    """Return cached, unused pool memory to the driver."""
    if is_available():
        d = _dev()
        d.backend.empty_cache(d.index)


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """``(free, total)`` bytes: the device's memory less what its pool holds."""
    d = _dev(device)
    total = int(d.info().get("memory", 0))
    return max(total - memory_reserved(d), 0), total


def ipc_collect() -> None:
    """Nothing to collect: omnitensor shares no device memory between processes."""


# ---------------------------------------------------------------------- seeding
# omnitensor has one counter-based generator for every device (the same seed gives the same
# numbers on every device), so seeding "the CUDA generator" seeds that one generator; without
# a device these are no-ops, as torch's are.
def manual_seed(seed: int) -> None:
    if is_available():
        from .core.ops.random import manual_seed as _seed
        _seed(seed)


manual_seed_all = manual_seed


def seed() -> None:
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


def get_rng_state_all() -> list:
    return [get_rng_state() for _ in range(device_count())]


def set_rng_state_all(new_states: Any) -> None:
    for s in new_states:
        set_rng_state(s)


def is_initialized() -> bool:
    return is_available()


def init() -> None:
    """Nothing to initialise eagerly; raises as torch does when there is no device."""
    if not is_available():
        raise RuntimeError(f"no CUDA device: {unavailable_reason()}")


# ------------------------------------------------------------- streams and events
class Stream:
    """A stream of the device: its one in-order queue (see the module doc)."""

    def __init__(self, device: Any = None, priority: int = 0, **_: Any) -> None:
        self.device = _dev(device)
        self.priority = priority

    def synchronize(self) -> None:
        self.device.synchronize()

    def query(self) -> bool:
        self.device.synchronize()
        return True

    def wait_stream(self, stream: "Stream") -> None:
        """Ordered already: every stream of a device is its one in-order queue."""

    def wait_event(self, event: "Event") -> None:
        """Ordered already (see :meth:`wait_stream`)."""

    def record_event(self, event: "Event | None" = None) -> "Event":
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.device is self.device

    def __hash__(self) -> int:
        return hash(self.device)

    def __repr__(self) -> str:
        return f"<torch.cuda.Stream device={self.device} (its in-order queue)>"


def current_stream(device: Any = None) -> Stream:
    return Stream(device)


default_stream = current_stream


class StreamContext:
    """``with torch.cuda.stream(s):`` - work in the block goes to ``s``'s device queue,
    which is where it goes anyway."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream

    def __enter__(self) -> Stream | None:
        return self.stream

    def __exit__(self, *exc: Any) -> None:
        return None


def stream(stream: Stream | None) -> StreamContext:
    return StreamContext(stream)


def set_stream(stream: Stream) -> None:
    """Every stream of a device is its one queue: nothing to switch."""


class Event:
    """A marker in the device's queue. ``record`` waits for the work queued before it and
    stamps the host clock, so ``elapsed_time`` (milliseconds) is the device time between
    two records; ``synchronize``/``query`` then have nothing left to wait for."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        self.enable_timing = enable_timing
        self._stamp: float | None = None

    def record(self, stream: Stream | None = None) -> None:
        dev = stream.device if stream is not None else _dev()
        dev.synchronize()
        self._stamp = time.perf_counter()

    def synchronize(self) -> None:
        """Already waited for at :meth:`record`."""

    def query(self) -> bool:
        return self._stamp is not None

    def wait(self, stream: Stream | None = None) -> None:
        """Ordered already: one in-order queue per device."""

    def elapsed_time(self, end_event: "Event") -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("elapsed_time: both events need enable_timing=True")
        if self._stamp is None or end_event._stamp is None:
            raise RuntimeError("elapsed_time: record both events first")
        return (end_event._stamp - self._stamp) * 1000.0


@contextlib.contextmanager
def _nvtx_range(msg: str) -> Iterator[None]:
    yield


class nvtx:  # torch.cuda.nvtx: annotations for NVIDIA's profilers
    """``torch.cuda.nvtx.range_push/pop/range/mark``: markers for NVIDIA's profilers, which
    do not see omnitensor's devices; ``omnitensor.profiler.record_function`` is the
    annotation that shows in omnitensor's profiler."""

    range = staticmethod(_nvtx_range)

    @staticmethod
    def range_push(msg: str) -> int:
        return 0

    @staticmethod
    def range_pop() -> int:
        return 0

    @staticmethod
    def mark(msg: str) -> None:
        return None


# ------------------------------------------------------------------------ CUDA graphs
_NO_GRAPHS = ("CUDA graphs are not supported by omnitensor; omnitensor.compile captures a "
              "step once and replays it without per-op Python, which is what graphs buy")


class CUDAGraph:
    """The type of captured CUDA graphs (none can be made here: see ``_NO_GRAPHS``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(_NO_GRAPHS)


def graph(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(_NO_GRAPHS)


def make_graphed_callables(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(_NO_GRAPHS)


def is_current_stream_capturing() -> bool:
    """False: no stream is ever capturing a CUDA graph."""
    return False


__all__ += ["CUDAGraph", "graph", "make_graphed_callables", "is_current_stream_capturing"]


# torch.cuda.FloatTensor & co.: the legacy types, building and testing `cuda` tensors
from .core.legacy import CUDA_LEGACY_TYPES  # noqa: E402

globals().update(CUDA_LEGACY_TYPES)
__all__ += list(CUDA_LEGACY_TYPES)

# torch.cuda.amp: torch.amp's deprecated spellings with device "cuda". A module attribute
# and an entry in sys.modules, so `from omnitensor.cuda.amp import GradScaler` works although
# this module is not a package.
from .amp import cuda_amp as amp  # noqa: E402

sys.modules[__name__ + ".amp"] = amp
