"""``torch.overrides``: torch's ``__torch_function__`` protocol helpers.

omnitensor's own ops (``torch.add``, ``Tensor.sum``, ``nn.functional.*``...) do **not**
dispatch to ``__torch_function__``. These helpers serve library code written in torch's
style, functions that guard themselves the way torch's Python functions do::

    def f(x):
        if has_torch_function((x,)):
            return handle_torch_function(f, (x,), x)
        ...

where an overloaded argument (a Tensor subclass or a tensor-like type defining
``__torch_function__``) is handed to its type's ``__torch_function__`` with torch's rules.
The rules are written once, in :mod:`omnitensor.core.torch_function`. Not provided: the
tables ``get_ignored_functions``, ``get_overridable_functions``, ``get_testing_overrides``
(with no dispatch from omnitensor's ops, such tables would claim what is not so).

``TorchFunctionMode`` exists so that libraries can define their modes at import time (the
class statement is all most do); *entering* one raises ``NotImplementedError``, since
omnitensor's ops would never call its ``__torch_function__``. No mode is ever active, so
``_get_current_function_mode()`` is None and the stack's length 0.
"""
from __future__ import annotations

from typing import Any

from .core.torch_function import (handle_torch_function, has_torch_function,
                                  has_torch_function_unary, has_torch_function_variadic,
                                  is_tensor_like, is_tensor_method_or_property)

__all__ = ["handle_torch_function", "has_torch_function", "has_torch_function_unary",
           "has_torch_function_variadic", "is_tensor_like", "is_tensor_method_or_property",
           "TorchFunctionMode", "BaseTorchFunctionMode"]


class TorchFunctionMode:
    """torch's base of ``__torch_function__`` modes: subclassable, not enterable (see the
    module doc: omnitensor's ops do not dispatch to modes, so a mode would see nothing)."""

    def __init__(self) -> None:
        pass

    def __torch_function__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        raise NotImplementedError

    def __enter__(self) -> "TorchFunctionMode":
        raise NotImplementedError(
            f"{type(self).__name__}: __torch_function__ modes are not supported by "
            f"omnitensor (its ops do not dispatch to __torch_function__, so the mode would "
            f"never be called)")

    def __exit__(self, *exc: Any) -> None:
        return None

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> "TorchFunctionMode":
        """torch's ``Mode.push``: make and enter a mode (refused, as ``__enter__``)."""
        return cls(*args, **kwargs).__enter__()


class BaseTorchFunctionMode(TorchFunctionMode):
    """torch's mode whose ``__torch_function__`` just calls ``func``."""

    def __torch_function__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        return func(*args, **(kwargs or {}))


def _get_current_function_mode() -> None:
    """The innermost active mode: never one here."""
    return None


def _get_current_function_mode_stack() -> list:
    """The active modes, outermost first: none here."""
    return []


def _len_torch_function_stack() -> int:
    """How many modes are active: none here."""
    return 0


def _is_torch_function_mode_enabled() -> bool:
    """Whether a mode is active: never here."""
    return False
