"""torch's ``__torch_function__`` protocol, for library code written in torch's style.

omnitensor's own ops do **not** dispatch to ``__torch_function__``: ``omnitensor.add(x, y)``
runs omnitensor's kernel whatever ``type(x)`` defines. What this module gives is torch's
protocol helpers, so that functions written the way torch writes its Python functions::

    def f(x):
        if has_torch_function((x,)):
            return handle_torch_function(f, (x,), x)
        return x + 1

send an overloaded argument to its type's ``__torch_function__`` with torch's rules:

* an argument is *overloaded* when its type defines a ``__torch_function__`` other than
  :data:`_disabled_torch_function_impl`, and the type is not ``Tensor`` itself nor one of
  omnitensor's own Tensor subclasses that keep Tensor's default (``Parameter``, the sparse
  and quantized layouts: torch represents those as plain Tensors);
* :func:`handle_torch_function` calls the collected types' ``__torch_function__`` in torch's
  order (subclasses before superclasses, else left to right; one argument per type) until
  one answers something other than ``NotImplemented``, else raises torch's TypeError;
* ``DisableTorchFunction`` / ``DisableTorchFunctionSubclass`` switch the protocol off in
  the current thread (``has_torch_function`` answers False inside).

``__torch_function__`` modes (``TorchFunctionMode``) are not provided: with no dispatch from
omnitensor's ops a mode would only see these helpers' calls.
"""
from __future__ import annotations

import inspect
import threading
import warnings
from typing import Any, Callable, Iterable

from .tensor import Tensor

__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "handle_torch_function", "is_tensor_like", "is_tensor_method_or_property",
           "DisableTorchFunction", "DisableTorchFunctionSubclass",
           "is_torch_function_enabled", "disabled_torch_function_impl", "convert_result"]

_ENABLED, _SUBCLASS_DISABLED, _ALL_DISABLED = 0, 1, 2
_state = threading.local()  # the switch is per thread, as torch's is


def _level() -> int:
    return getattr(_state, "level", _ENABLED)


def is_torch_function_enabled() -> bool:
    """``torch._C._is_torch_function_enabled()``: False inside a Disable... block."""
    return _level() == _ENABLED


class _DisabledTorchFunctionImpl:
    """torch's ``_disabled_torch_function_impl``: a ``__torch_function__`` that just calls
    ``func``. An instance, not a function, so that as a class attribute it does not bind
    (torch's is a builtin, which does not bind either): ``T.__torch_function__ is`` it."""

    def __call__(self, func: Callable[..., Any], types: Any, args: Any = (),
                 kwargs: Any = None) -> Any:
        return func(*args, **(kwargs or {}))

    def __repr__(self) -> str:
        return "<built-in function _disabled_torch_function_impl>"


disabled_torch_function_impl = _DisabledTorchFunctionImpl()


class _Disable:
    _to = _ALL_DISABLED

    def __enter__(self) -> "_Disable":
        self._prev = _level()
        _state.level = max(self._prev, self._to)
        return self

    def __exit__(self, *exc: Any) -> None:
        _state.level = self._prev


class DisableTorchFunction(_Disable):
    """``with torch._C.DisableTorchFunction():`` - no argument counts as overloaded in this
    thread inside the block (omnitensor's ops never dispatch, so they run as always)."""

    _to = _ALL_DISABLED


class DisableTorchFunctionSubclass(_Disable):
    """``with torch._C.DisableTorchFunctionSubclass():`` - as :class:`DisableTorchFunction`
    (torch's two differ only for modes, which omnitensor does not have)."""

    _to = _SUBCLASS_DISABLED


def _torch_function_of(tp: type) -> Any:
    tf = getattr(tp, "__torch_function__", None)
    return None if tf is disabled_torch_function_impl else tf


def _stands_for_tensor(tp: type) -> bool:
    """Tensor, or an omnitensor subclass keeping Tensor's default ``__torch_function__``:
    torch's plain Tensor (its C++ check skips exact Tensors)."""
    if tp is Tensor:
        return True
    return (tp.__module__.startswith("omnitensor.") and issubclass(tp, Tensor)
            and inspect.getattr_static(tp, "__torch_function__", None)
            is Tensor.__dict__["__torch_function__"])


def _overloaded(obj: Any) -> bool:
    tp = type(obj)
    return _torch_function_of(tp) is not None and not _stands_for_tensor(tp)


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """Whether any of ``relevant_args`` is overloaded (see the module doc); False while the
    protocol is disabled. Use it to guard :func:`handle_torch_function`, not to test for
    tensors (that is :func:`is_tensor_like`)."""
    return is_torch_function_enabled() and any(_overloaded(a) for a in relevant_args)


def has_torch_function_unary(arg: Any) -> bool:
    """``has_torch_function((arg,))``."""
    return is_torch_function_enabled() and _overloaded(arg)


def has_torch_function_variadic(*args: Any) -> bool:
    """``has_torch_function(args)``."""
    return has_torch_function(args)


def _overloaded_args(relevant_args: Iterable[Any]) -> list[Any]:
    """One argument per type with a ``__torch_function__`` (exact Tensors included, as in
    torch), a subclass placed before its first superclass, else in argument order."""
    if not is_torch_function_enabled():
        return []
    seen: set[type] = set()
    out: list[Any] = []
    for arg in relevant_args:
        tp = type(arg)
        if tp in seen or _torch_function_of(tp) is None:
            continue
        seen.add(tp)
        at = next((i for i, old in enumerate(out) if issubclass(tp, type(old))), len(out))
        out.insert(at, arg)
    return out


def handle_torch_function(public_api: Callable[..., Any], relevant_args: Iterable[Any],
                          *args: Any, **kwargs: Any) -> Any:
    """Call the overloaded arguments' ``__torch_function__(public_api, types, args,
    kwargs)`` in torch's order until one answers something other than ``NotImplemented``;
    TypeError (torch's message) when none does."""
    overloaded = _overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
    for arg in overloaded:
        method = arg.__torch_function__
        if getattr(method, "__self__", None) is arg:
            warnings.warn("Defining your `__torch_function__ as a plain method is deprecated "
                          "and will be an error in future, please define it as a classmethod.",
                          DeprecationWarning, stacklevel=2)
        result = method(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement "
                    f"__torch_function__: {[type(a) for a in overloaded]}")


def is_tensor_like(inp: Any) -> bool:
    """torch's rule: an exact Tensor, or anything whose type has ``__torch_function__``."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


_tensor_methods: set[Any] | None = None


def is_tensor_method_or_property(func: Callable[..., Any]) -> bool:
    """Whether ``func`` (as handed to ``__torch_function__``) is a Tensor method, or a
    property's ``__get__``."""
    global _tensor_methods
    if _tensor_methods is None:
        found = set()
        for name in dir(Tensor):
            try:
                found.add(getattr(Tensor, name))
            except (AttributeError, TypeError):  # unhashable or unreadable: not a method
                continue
        _tensor_methods = found
    try:
        known = func in _tensor_methods
    except TypeError:
        known = False
    return known or getattr(func, "__name__", None) == "__get__"


def convert_result(ret: Any, cls: type) -> Any:
    """torch's ``_convert``: Tensor results (also inside tuples and lists) as ``cls``."""
    if cls is Tensor or _stands_for_tensor(cls):
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = [convert_result(r, cls) for r in ret]
        return type(ret)(*items) if hasattr(ret, "_fields") else type(ret)(items)
    return ret
