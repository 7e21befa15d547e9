"""torch's names for symbolic shapes and for device types omnitensor has no backend for,
with the meaning torch gives them where nothing is symbolic and no such device exists.

* ``sym_int``, ``sym_max``, ``sym_ite``, ``sym_constrain_range``...: on plain numbers (every
  shape here is concrete: ``omnitensor.compile`` guards on concrete shapes) they compute
  what torch computes on plain numbers, and refuse what torch refuses;
* the autocast switches of XLA and IPU: recorded and read back, as a torch build without
  those devices does (nothing runs on them);
* ``is_vulkan_available``, ``cudnn_is_acceptable``: False, as torch answers without them.
"""
from __future__ import annotations

import math
from typing import Any

_INT_MAX = 2 ** 63 - 1


def _number(v: Any) -> Any:
    """A Python number from a number or a one-element tensor (torch's ``sym_*`` read
    tensors through ``__index__``/``__float__``)."""
    from .core.tensor import Tensor
    return v.item() if isinstance(v, Tensor) else v


def sym_int(a: Any) -> int:
    """torch's ``sym_int``: ``a`` truncated toward zero to an int."""
    return int(math.trunc(_number(a)))


def sym_float(a: Any) -> float:
    """torch's ``sym_float``: ``a`` as a float."""
    return float(_number(a))


def _plain(a: Any, b: Any, name: str) -> None:
    for v in (a, b):
        if not isinstance(v, (int, float)):
            raise AssertionError(f"{name}: expected (int, float), got {type(v)}")


def sym_max(a: Any, b: Any) -> Any:
    """torch's ``sym_max``: the larger of two numbers (not tensors, as torch)."""
    _plain(a, b, "sym_max")
    return max(a, b)


def sym_min(a: Any, b: Any) -> Any:
    """torch's ``sym_min``: the smaller of two numbers (not tensors, as torch)."""
    _plain(a, b, "sym_min")
    return min(a, b)


def sym_not(a: Any) -> bool:
    """torch's ``sym_not``: ``not a``."""
    return not _number(a)


def sym_ite(b: Any, t: Any, f: Any) -> Any:
    """torch's ``sym_ite``: ``t if b else f``."""
    return t if b else f


def sym_sqrt(a: Any) -> float:
    """torch's ``sym_sqrt``: ``math.sqrt(a)``."""
    return math.sqrt(_number(a))


def sym_sum(*args: Any) -> Any:
    """torch's ``sym_sum(args)``: the sum of the numbers."""
    values = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
    return sum(values)


def sym_constrain_range(size: Any, *, min: Any = None, max: Any = None) -> None:  # noqa: A002
    """torch's ``sym_constrain_range``: a concrete ``size`` must lie in ``[min, max]``."""
    lo = -_INT_MAX - 1 if min is None else min
    hi = _INT_MAX if max is None else max
    v = _number(size)
    if not lo <= v <= hi:
        raise RuntimeError(f"Invalid value range for {v} between [{lo}, {hi}].")


def sym_constrain_range_for_size(size: Any, *, min: Any = None,  # noqa: A002
                                 max: Any = None) -> None:  # noqa: A002
    """torch's ``sym_constrain_range_for_size``: as :func:`sym_constrain_range`, with a
    size's range (``min`` at least 0)."""
    sym_constrain_range(size, min=0 if min is None else min, max=max)


def sym_fresh_size(expr: Any) -> Any:
    """torch's ``sym_fresh_size``: a concrete size is itself."""
    return expr


# ------------------------------------------------- autocast of absent devices
_AUTOCAST = {"xla": [False, "bfloat16"], "ipu": [False, "float16"]}


def _autocast_switches(device: str) -> dict[str, Any]:
    state = _AUTOCAST[device]

    def is_enabled() -> bool:
        return bool(state[0])

    def set_enabled(enabled: bool) -> None:
        state[0] = bool(enabled)

    def get_dtype() -> Any:
        from .core import dtypes
        return dtypes.as_dtype(state[1])

    def set_dtype(dtype: Any) -> None:
        from .core import dtypes
        state[1] = dtypes.as_dtype(dtype).name

    out = {f"is_autocast_{device}_enabled": is_enabled,
           f"set_autocast_{device}_enabled": set_enabled,
           f"get_autocast_{device}_dtype": get_dtype,
           f"set_autocast_{device}_dtype": set_dtype}
    for name, fn in out.items():
        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = (f"torch's ``{name}``: {device}'s autocast switch, recorded (no "
                      f"{device} device exists here).")
    return out


def is_vulkan_available() -> bool:
    """False: no Vulkan backend."""
    return False


def cudnn_is_acceptable(tensor: Any) -> bool:
    """False: cuDNN is never used for a tensor here (CuPy's own kernels run cuda)."""
    return False


SYM = ("sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_ite", "sym_sqrt",
       "sym_sum", "sym_constrain_range", "sym_constrain_range_for_size", "sym_fresh_size")


def names() -> dict[str, Any]:
    """Every name this module gives the torch face."""
    g = globals()
    out: dict[str, Any] = {n: g[n] for n in SYM}
    for device in _AUTOCAST:
        out.update(_autocast_switches(device))
    out.update(is_vulkan_available=is_vulkan_available,
               cudnn_is_acceptable=cudnn_is_acceptable)
    return out
