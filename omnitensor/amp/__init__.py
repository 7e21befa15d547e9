"""``omnitensor.amp``: automatic mixed precision is not supported yet.

It does not pretend: ``autocast(...)`` with ``enabled=True`` (its default) and
``GradScaler(enabled=True)`` raise ``NotImplementedError``. Disabled, they are exactly what
torch's are when disabled (a block that changes nothing; a scaler whose ``scale`` returns the
loss and whose ``step`` calls ``optimizer.step()``), so the common idiom
``GradScaler(enabled=use_amp)`` / ``nullcontext() if cpu else autocast(...)`` runs with AMP
off.
"""
from __future__ import annotations

from typing import Any

from .._unsupported import not_supported

__all__ = ["autocast", "GradScaler", "is_autocast_available", "custom_fwd", "custom_bwd"]

_HINT = "train in float32 (pass enabled=False, or drop the autocast block)"


def is_autocast_available(device_type: str) -> bool:
    return False


class autocast:  # noqa: N801 - torch's name
    """``with autocast(device_type, dtype=..., enabled=True)``: raises unless disabled."""

    def __init__(self, device_type: str = "cpu", dtype: Any = None, enabled: bool = True,
                 cache_enabled: Any = None) -> None:
        if enabled:
            not_supported("omnitensor.amp.autocast (mixed precision)", _HINT)
        self.device_type, self.fast_dtype, self._enabled = device_type, dtype, False

    def __enter__(self) -> "autocast":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __call__(self, fn: Any) -> Any:
        return fn  # disabled: decorating changes nothing


class GradScaler:
    """Loss scaling for float16 training: only ``enabled=False`` is supported (then every
    method is torch's disabled behaviour)."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        if enabled:
            not_supported("omnitensor.amp.GradScaler (float16 loss scaling)",
                          "construct it with enabled=False, or train in float32")
        self._enabled = False

    def is_enabled(self) -> bool:
        return False

    def scale(self, outputs: Any) -> Any:
        return outputs

    def unscale_(self, optimizer: Any) -> None:
        return None

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: Any = None) -> None:
        return None

    def get_scale(self) -> float:
        return 1.0

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        return None


def custom_fwd(fwd: Any = None, **_: Any) -> Any:
    """No autocast, so nothing to adjust: the function unchanged."""
    return fwd if fwd is not None else (lambda f: f)


def custom_bwd(bwd: Any = None, **_: Any) -> Any:
    return bwd if bwd is not None else (lambda f: f)
