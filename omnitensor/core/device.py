"""Devices: interned ``TYPE[:INDEX]`` objects, the default device and its context.

``device("opencl:1")`` returns the same object every time, so tensors compare devices with
``is``. A device names a backend but does not import it: the backend is loaded the first
time ``device.backend`` is read (by a tensor op or a query), so ``import omnitensor`` stays
free of CuPy, PyOpenCL and dpnp.

The default device is, in order: the innermost ``with omnitensor.device(...)`` block of this
thread, then :func:`set_default_device`, then the ``OMNITENSOR_DEVICE`` environment variable
(read at first use, never at import), then ``cpu``.
"""
from __future__ import annotations

import os
import threading
from typing import Any, Union

from ..backends import registry
from ..errors import (BackendUnavailableError, DeviceError, DeviceMismatchError,
                      UnsupportedDTypeError, mismatch_message)
from .dtypes import DType, as_dtype

__all__ = ["Device", "device", "devices", "get_default_device", "set_default_device",
           "DeviceLike", "resolve_device", "check_dtype", "same_device"]


class Device:
    """A device: ``type`` ("cpu", "opencl", "sycl", "cuda") and ``index``.

    ``omnitensor.device(...)`` (torch's ``torch.device``) is this class; calling it returns
    the interned device. Use as a context manager to make it the default device of a
    block::

        with omnitensor.device("opencl:0"):
            x = omnitensor.ones(3)      # on opencl:0
    """

    # not __slots__: ``backend`` is cached as an instance attribute on first access
    type: str
    index: int
    _str: str

    def __new__(cls, type: Any, index: int | None = None) -> "Device":  # noqa: A002
        """``Device(...)`` (torch's ``torch.device(...)``) is the interned device, so
        ``isinstance(d, omnitensor.device)`` and ``device("cpu") is device("cpu")`` hold."""
        return device(type, index)

    @classmethod
    def _create(cls, type: str, index: int) -> "Device":  # noqa: A002  (use device())
        self = object.__new__(cls)
        self.type = type
        self.index = index
        self._str = type if type == "cpu" else f"{type}:{index}"
        return self

    def __getattr__(self, name: str) -> Any:
        # only reached while ``backend`` is not cached yet: load, check, cache
        if name != "backend":
            raise AttributeError(name)
        if self.type in NAMED_ONLY:
            raise BackendUnavailableError(f"{self._str}: {NAMED_ONLY[self.type]}")
        try:
            be = registry.get_backend(self.type)
        except BackendUnavailableError as e:
            if self.type == "cuda":
                from .accelerators import cuda_alias_enabled, ACCELERATOR_ENV
                if cuda_alias_enabled():
                    raise BackendUnavailableError(
                        f"{self._str}: no CUDA device and no accelerator chosen, so 'cuda' "
                        f"names no device ({e}). Under the torch alias 'cuda' is your "
                        f"accelerator: set {ACCELERATOR_ENV}=opencl (or sycl, sycl:1...); "
                        f"`omnitensor info` lists the devices") from None
            raise
        n = be.device_count()
        if self.index >= n:
            raise DeviceError(
                f"device {self._str} does not exist: the {self.type} backend has {n} "
                f"device(s) ({', '.join(str(d) for d in devices(self.type)) or 'none'})")
        self.backend = be
        return be

    def __repr__(self) -> str:
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self._str

    def __hash__(self) -> int:
        return hash(self._str)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                return device(other) is self
            except DeviceError:
                return False
        return self is other

    def __reduce__(self):
        return (device, (self._str,))

    # context manager: default device of a with-block (thread-local, nestable)
    def __enter__(self) -> "Device":
        _state.stack.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _state.stack.pop()

    def info(self) -> dict[str, Any]:
        """The backend's facts about this device (name, memory, fp16/fp64, ...)."""
        return self.backend.device_info(self.index)

    def supports_dtype(self, dtype: Any) -> bool:
        """Whether this device can hold and compute ``dtype``."""
        return self.backend.supports_dtype(as_dtype(dtype).np, self.index)

    def synchronize(self) -> None:
        """Wait for every op enqueued on this device."""
        self.backend.synchronize(self.index)


DeviceLike = Union[Device, str]
_interned: dict[str, Device] = {}
_lock = threading.Lock()


#: torch device types programs name (``device == torch.device("meta")``, a model built on
#: ``"meta"`` then materialised) that no omnitensor backend holds: the Device exists and
#: compares, and putting a tensor on it raises this reason
NAMED_ONLY = {
    "meta": "the meta device (tensors with shapes but no data) is not supported by "
            "omnitensor; build the model on 'cpu' (or its device) and load weights into it",
    "mps": "Apple's MPS is not an omnitensor backend; use 'cpu' on this machine",
    "xpu": "omnitensor reaches Intel GPUs as 'sycl' (or 'opencl'), not 'xpu'",
}


def _parse(spec: str) -> tuple[str, int]:
    text = spec.strip().lower()
    if ":" in text:
        type_, _, idx = text.partition(":")
        if not idx.isdigit():
            raise DeviceError(f"bad device string {spec!r}: the index after ':' must be a "
                              f"non-negative integer, as in 'opencl:1'")
        index = int(idx)
    else:
        type_, index = text, 0
    if type_ not in registry.BACKENDS and type_ not in NAMED_ONLY:
        raise DeviceError(f"unknown device type in {spec!r}; expected one of "
                          f"{', '.join(registry.BACKENDS)} (optionally ':INDEX')")
    if type_ == "cpu" and index != 0:
        raise DeviceError(f"bad device string {spec!r}: there is one cpu device, 'cpu'")
    return type_, index


def device(spec: Any, index: int | None = None) -> Device:
    """The interned :class:`Device` for ``"cpu"``, ``"opencl"`` (= ``"opencl:0"``),
    ``"sycl:1"``, ``("cuda", 0)``... Imports no backend, except that ``cuda`` looks for
    the device it names (see :mod:`omnitensor.core.accelerators`)."""
    if isinstance(spec, Device):
        return spec
    if isinstance(spec, int) and not isinstance(spec, bool):  # torch.device(0): the GPU
        spec, index = "cuda", spec
    if index is not None:
        spec = f"{spec}:{index}"
    elif not isinstance(spec, str):
        tensor_device = getattr(spec, "device", None)  # a Tensor
        if isinstance(tensor_device, Device):
            return tensor_device
        raise DeviceError(f"expected a device string like 'cpu' or 'opencl:0', got "
                          f"{type(spec).__name__}")
    dev = _interned.get(spec)
    if dev is not None and dev.type != "cuda":  # cuda: real, or the accelerator (alias)
        return dev
    type_, idx = _parse(spec)
    if type_ == "cuda":
        aliased = _cuda_alias(spec, idx)
        if aliased is not None:
            return aliased
    key = type_ if type_ == "cpu" else f"{type_}:{idx}"
    with _lock:
        dev = _interned.get(key)
        if dev is None:
            dev = _interned[key] = Device._create(type_, idx)
        _interned[spec] = dev
    return dev


def _cuda_alias(spec: str, index: int) -> Device | None:
    """The accelerator device ``cuda[:N]`` names when there is no real CUDA device and the
    torch alias is on; None when ``cuda`` means CuPy (not cached: ``cuda`` follows
    ``torch.cuda.set_device``, and the alias can be switched)."""
    from . import accelerators
    target = accelerators.cuda_device_type()
    if target is None or target == "cuda":
        return None
    if ":" not in spec:
        index = accelerators.current_index()
    return device(target, index)


def devices(device_type: str | None = None) -> list[Device]:
    """Every device this machine has, across installed backends (or of one type)."""
    found = []
    for t in (registry.device_types() if device_type is None else (device_type,)):
        be, _why = registry.try_backend(t)
        if be is None:
            continue
        found += [device(t, i) for i in range(be.device_count())]
    return found


class _State(threading.local):
    def __init__(self) -> None:
        self.stack: list[Device] = []


_state = _State()
_global_default: list[Device | None] = [None]
_env_resolved: list[Device | None] = [None]


def set_default_device(dev: DeviceLike | None) -> None:
    """Make ``dev`` the default device of new tensors (None: back to the environment's)."""
    _global_default[0] = None if dev is None else _checked(device(dev))


def _checked(dev: Device) -> Device:
    try:
        dev.backend  # noqa: B018 - loads the backend and validates the index
    except (BackendUnavailableError, DeviceError) as e:
        found = ", ".join(str(d) for d in devices()) or "none"
        raise DeviceError(f"{e}\nDevices on this machine: {found}") from None
    return dev


def _from_environment() -> Device:
    spec = os.environ.get("OMNITENSOR_DEVICE", "").strip()
    if not spec:
        return device("cpu")
    try:
        dev = device(spec)
    except DeviceError as e:
        found = ", ".join(str(d) for d in devices()) or "none"
        raise DeviceError(f"OMNITENSOR_DEVICE={spec!r} is invalid: {e}. "
                          f"Devices on this machine: {found}") from None
    try:
        return _checked(dev)
    except DeviceError as e:
        raise DeviceError(f"OMNITENSOR_DEVICE={spec!r}: {e}") from None


def get_default_device() -> Device:
    """The device new tensors go to (see the module docstring for the order)."""
    stack = _state.stack
    if stack:
        return stack[-1]
    dev = _global_default[0]
    if dev is not None:
        return dev
    dev = _env_resolved[0]
    if dev is None:
        dev = _env_resolved[0] = _from_environment()
    return dev


def _reset_environment_cache() -> None:
    """Forget the resolved ``OMNITENSOR_DEVICE`` (tests that change the variable)."""
    _env_resolved[0] = None


def same_device(op: str, *tensors: Any) -> "Device":
    """The device every tensor in ``tensors`` lives on; DeviceMismatchError naming ``op``,
    both devices and the ``.to(...)`` fix otherwise. For ops whose operands must all be on
    one device (elementwise ops also accept 0-d cpu tensors as values: see
    ``ops/elementwise.py``)."""
    dev = tensors[0]._device
    for t in tensors[1:]:
        if t._device is not dev:
            raise DeviceMismatchError(mismatch_message(op, dev, t._device))
    return dev


def resolve_device(dev: Any) -> Device:
    """A Device from None (the default device), a string or a Device, validated."""
    if dev is None:
        return get_default_device()
    d = device(dev)
    d.backend  # noqa: B018 - load and validate the index with a clear error
    return d


def check_dtype(dev: Device, dtype: DType) -> None:
    """Raise UnsupportedDTypeError when ``dev`` cannot hold ``dtype``."""
    if dtype.unsupported is not None:  # no backend holds it (float8): one answer for all
        raise UnsupportedDTypeError(dtype.unsupported)
    why = dev.backend.dtype_unsupported_reason(dtype.np, dev.index)
    if why is not None:
        name = dev.backend.device_info(dev.index).get("name", "")
        raise UnsupportedDTypeError(
            f"{dev} ({name}) cannot hold {dtype.name}: {why}. Use another dtype (e.g. "
            f"x.to(omnitensor.float32)) or another device.")
