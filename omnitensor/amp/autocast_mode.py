"""``autocast`` (torch.amp.autocast / torch.autocast), ``custom_fwd``/``custom_bwd`` and
torch's autocast state functions, over the thread-local state in
:mod:`omnitensor.core.autocast_state` (where the op lists and the one cast rule live)."""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

from ..core import autocast_state as _ac
from ..core import dtypes as _dt
from ..core.tensor import Tensor

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available",
           "is_autocast_enabled", "get_autocast_dtype", "set_autocast_enabled",
           "set_autocast_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
           "clear_autocast_cache", "autocast_increment_nesting", "autocast_decrement_nesting",
           "is_autocast_cpu_enabled", "get_autocast_cpu_dtype", "get_autocast_gpu_dtype"]


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast can be asked for on ``device_type`` (every device type omnitensor
    knows: cpu, cuda, opencl, sycl...; whether a device holds the dtype is checked when an
    autocast region is made)."""
    if not isinstance(device_type, str):
        return False
    if device_type in _known_types:
        return True
    from ..backends import registry
    _known_types.update(registry.device_types())  # a backend registered since
    return device_type in _known_types


#: torch's other device types: autocast on them is accepted as torch's is on a machine
#: without them (the state is kept; no tensor of theirs exists to cast)
_known_types: set[str] = {"mps", "xpu", "hpu", "xla", "ipu", "mtia", "maia", "privateuseone"}


def _check_type(device_type: Any) -> str:
    """A known device type; ``cuda`` is the type it names (the accelerator under the torch
    alias, see omnitensor.core.accelerators), so ``autocast("cuda")`` covers that work."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if device_type == "cuda":
        from ..core.accelerators import cuda_device_type
        device_type = cuda_device_type() or "cuda"
    if not is_autocast_available(device_type):
        from ..backends import registry
        raise RuntimeError(f"User specified an unsupported autocast device_type "
                           f"'{device_type}' (known device types: "
                           f"{', '.join(registry.device_types())})")
    return device_type


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` on this thread (torch: cuda when
    omitted)."""
    return _ac.is_enabled(_check_type("cuda" if device_type is None else device_type))


def get_autocast_dtype(device_type: str) -> _dt.DType:
    """The dtype autocast uses on ``device_type`` (bfloat16 on cpu, float16 on cuda by
    default)."""
    return _ac.get_dtype(_check_type(device_type))


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    _ac.set_enabled(_check_type(device_type), bool(enabled))


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    _ac.set_dtype(_check_type(device_type), _dt.as_dtype(dtype))


def is_autocast_cpu_enabled() -> bool:
    return _ac.is_enabled("cpu")


def get_autocast_cpu_dtype() -> _dt.DType:
    return _ac.get_dtype("cpu")


def get_autocast_gpu_dtype() -> _dt.DType:
    return _ac.get_dtype("cuda")


is_autocast_cache_enabled = _ac.is_cache_enabled
set_autocast_cache_enabled = _ac.set_cache_enabled
clear_autocast_cache = _ac.clear_cache
autocast_increment_nesting = _ac.increment_nesting
autocast_decrement_nesting = _ac.decrement_nesting


def _low_dtypes() -> tuple:
    bf16 = getattr(_dt, "bfloat16", None)
    return (_dt.float16,) if bf16 is None else (_dt.float16, bf16)


class autocast:  # torch's name
    """``with autocast(device_type, dtype=None, enabled=True, cache_enabled=None):`` ops on
    ``device_type`` tensors run in torch's mixed precision: matmul, linear, convolutions
    and attention in ``dtype`` (float16 or bfloat16; the device type's default when None),
    losses (and on accelerators softmax, norms, exp/log, sums) in float32, everything else
    in its inputs' dtype. Nests; ``enabled=False`` inside turns it off for the inner block.
    Also a decorator. As torch, a dtype the device cannot compute, or a device type with no
    device here, warns and leaves autocast disabled."""

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        self.device = _check_type(device_type)
        self.fast_dtype = _ac.get_dtype(device_type) if dtype is None else _dt.as_dtype(dtype)
        self._cache_enabled = _ac.is_cache_enabled() if cache_enabled is None \
            else bool(cache_enabled)
        self._enabled = bool(enabled)
        self._saved: list[tuple] = []
        if self._enabled:
            why = self._unsupported()
            if why:
                warnings.warn(f"In {device_type} autocast, but {why}. Disabling autocast.",
                              stacklevel=2)
                self._enabled = False

    def _unsupported(self) -> str:
        low = _low_dtypes()
        if self.fast_dtype not in low:
            return (f"the target dtype {self.fast_dtype.name} is not supported: autocast "
                    f"supports {', '.join(d.name for d in low)}")
        from ..core.device import device
        try:
            dev = device(self.device, 0)
            if not dev.supports_dtype(self.fast_dtype):
                return f"{dev} cannot compute {self.fast_dtype.name}"
        except Exception as e:  # noqa: BLE001 - no such backend/device on this machine
            return f"no {self.device} device is available ({e})"
        return ""

    def __enter__(self) -> "autocast":
        self._saved.append(_ac.push(self.device, self.fast_dtype, self._enabled,
                                    self._cache_enabled))
        return self

    def __exit__(self, *exc: Any) -> None:
        _ac.pop(self._saved.pop())

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def decorate_autocast(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)
        return decorate_autocast

    def __repr__(self) -> str:
        return (f"autocast(device_type={self.device!r}, dtype={self.fast_dtype}, "
                f"enabled={self._enabled})")


def _cast_inputs(value: Any, device_type: str, dtype: _dt.DType) -> Any:
    if isinstance(value, Tensor):
        d = value.dtype
        if d.is_floating_point and d is not _dt.float64 and value.device.type == device_type:
            return value.to(dtype)
        return value
    if isinstance(value, dict):
        return {k: _cast_inputs(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_inputs(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd: Callable | None = None, *, device_type: str,
               cast_inputs: Any = None) -> Any:
    """Decorator for a custom ``autograd.Function``'s ``forward``: with ``cast_inputs``,
    inside an autocast region its floating tensor arguments are cast to that dtype and the
    body runs with autocast off; without, the body runs under the current state. Records
    the state for :func:`custom_bwd`."""
    _check_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    target = None if cast_inputs is None else _dt.as_dtype(cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        ctx._dtype = _ac.get_dtype(device_type)
        on = _ac.is_enabled(device_type)
        if target is None:
            ctx._fwd_used_autocast = on
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not on:
            return fwd(*args, **kwargs)
        with autocast(device_type, enabled=False):
            return fwd(*_cast_inputs(args, device_type, target),
                       **_cast_inputs(kwargs, device_type, target))
    return decorate_fwd


def custom_bwd(bwd: Callable | None = None, *, device_type: str) -> Any:
    """Decorator for a custom ``autograd.Function``'s ``backward``: runs it under the
    autocast state its ``forward`` (decorated with :func:`custom_fwd`) saw."""
    _check_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        with autocast(device_type, enabled=getattr(ctx, "_fwd_used_autocast", False),
                      dtype=getattr(ctx, "_dtype", None)):
            return bwd(*args, **kwargs)
    return decorate_bwd
