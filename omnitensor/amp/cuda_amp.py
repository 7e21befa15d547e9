"""``torch.cuda.amp``: torch's deprecated spellings of :mod:`omnitensor.amp` with the
device type fixed to ``"cuda"`` (each warns with a FutureWarning, as torch's do)."""
from __future__ import annotations

import warnings
from typing import Any, Callable

from ..core import dtypes as _dt
from . import autocast_mode as _mode
from . import grad_scaler as _scaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"`torch.cuda.amp.{old}` is deprecated. Please use `{new}` instead.",
                  FutureWarning, stacklevel=3)


class autocast(_mode.autocast):  # torch's name
    """``torch.cuda.amp.autocast(enabled=True, dtype=float16, cache_enabled=True)``:
    ``autocast("cuda", ...)``."""

    def __init__(self, enabled: bool = True, dtype: Any = _dt.float16,
                 cache_enabled: bool = True) -> None:
        _deprecated("autocast(args...)", "torch.amp.autocast('cuda', args...)")
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_scaler.GradScaler):
    """``torch.cuda.amp.GradScaler(...)``: ``GradScaler("cuda", ...)``."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        _deprecated("GradScaler(args...)", "torch.amp.GradScaler('cuda', args...)")
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


def custom_fwd(fwd: Callable | None = None, *, cast_inputs: Any = None) -> Any:
    _deprecated("custom_fwd(args...)", "torch.amp.custom_fwd(args..., device_type='cuda')")
    return _mode.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd: Callable | None = None) -> Any:
    _deprecated("custom_bwd(args...)", "torch.amp.custom_bwd(args..., device_type='cuda')")
    return _mode.custom_bwd(bwd, device_type="cuda")


