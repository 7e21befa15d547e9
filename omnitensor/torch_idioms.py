"""Top-level torch switches and helpers that real scripts call, with what they mean here.

* ``set_float32_matmul_precision`` / ``get_...``: recorded; omnitensor's float32 matmuls are
  always computed in float32 ("highest"), so the setting never lowers precision.
* ``use_deterministic_algorithms`` / ``are_deterministic_algorithms_enabled``: recorded;
  omnitensor's kernels are deterministic on every device, so the switch has nothing to turn
  off (and nothing raises).
* ``set_default_tensor_type``: the legacy spelling of ``set_default_dtype`` (cpu types only).
* ``as_tensor``, ``typename``, ``is_storage``, ``is_nonzero``, ``get/set_num_interop_threads``,
  the memory-format constants (omnitensor has one layout: strided, contiguous on creation).
"""
from __future__ import annotations

from typing import Any

from .core.legacy import LEGACY_TYPES, legacy_type_name, strided
from .core.tensor import Tensor

__all__ = ["set_float32_matmul_precision", "get_float32_matmul_precision",
           "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_default_tensor_type",
           "as_tensor", "typename", "is_storage", "is_nonzero", "get_num_interop_threads",
           "set_num_interop_threads", "strided", "contiguous_format", "preserve_format",
           "channels_last", "channels_last_3d", "memory_format", "layout"]

_state: dict[str, Any] = {"matmul_precision": "highest", "deterministic": False,
                          "warn_only": False, "interop_threads": 1}


def set_float32_matmul_precision(precision: str) -> None:
    """Accepts torch's ``"highest"``, ``"high"``, ``"medium"``; float32 matmuls stay float32."""
    if precision not in ("highest", "high", "medium"):
        raise ValueError(f"set_float32_matmul_precision: expected 'highest', 'high' or "
                         f"'medium', got {precision!r}")
    _state["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    return _state["matmul_precision"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Recorded; every omnitensor kernel is deterministic already."""
    _state["deterministic"], _state["warn_only"] = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]


def set_default_tensor_type(t: Any) -> None:
    """``set_default_tensor_type(torch.DoubleTensor)`` (or its name): the default float dtype."""
    from .core.dtypes import set_default_dtype
    name = t if isinstance(t, str) else getattr(t, "legacy_name", None)
    if name is None:
        raise TypeError(f"set_default_tensor_type expects a legacy tensor type such as "
                        f"torch.DoubleTensor, got {t!r}")
    parts = name.split(".")
    if len(parts) != 2 or parts[1] not in LEGACY_TYPES:
        raise TypeError(f"set_default_tensor_type: {name!r} is not a cpu legacy tensor type; "
                        f"for a default device use set_default_device")
    dtype = LEGACY_TYPES[parts[1]].dtype
    if dtype.kind != "f":
        raise TypeError(f"set_default_tensor_type: only floating types can be the default, "
                        f"got {name}")
    set_default_dtype(dtype)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """torch's ``as_tensor``: share memory with ``data`` when it already is a tensor (or a cpu
    NumPy array) of that dtype and device, else convert."""
    from .core.ops.creation import asarray
    return asarray(data, dtype=dtype, device=device)


def typename(obj: Any) -> str:
    """``'torch.FloatTensor'`` for tensors (torch's legacy names), else the qualified type."""
    if isinstance(obj, Tensor):
        return legacy_type_name(obj)
    cls = type(obj)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"


def is_storage(obj: Any) -> bool:
    """False: omnitensor has no separate storage objects."""
    return False


def is_nonzero(x: Tensor) -> bool:
    """The truth value of a one-element tensor (an error otherwise, as torch's)."""
    if x.numel() != 1:
        raise RuntimeError(f"Boolean value of Tensor with {x.numel()} values is ambiguous; "
                           f"is_nonzero needs exactly one element")
    return bool(x.item())


def get_num_interop_threads() -> int:
    return _state["interop_threads"]


def set_num_interop_threads(n: int) -> None:
    """Recorded: omnitensor runs no inter-op thread pool."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_interop_threads: expected a positive int, got {n!r}")
    _state["interop_threads"] = n


class memory_format:  # torch's name
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"omnitensor.{self.name}"


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
layout = type(strided)
