"""Torch-level op calls, seen while a listener (a profiler session) is installed.

A profile is read by torch op (``aten::linear``, ``aten::add_``) and by ``nn.Module``, not
by the backend primitives an op runs. So, while a listener is installed, the torch-facing
entry points are wrapped: the ``Tensor`` methods and operators, the functions of the
``omnitensor`` namespace (and of its torch face, what ``import torch`` is under
``as_torch``), of ``nn.functional``, ``linalg``, ``fft`` and ``special``; ``nn.Module``
calls; and each optimizer class's ``step``/``zero_grad``. A wrapper tells the listeners
``enter(name, args, kwargs, kind)`` / ``exit(token, result)`` around the call (``kind``
"op", or "user" for the optimizer ranges); the names are torch's
(``aten::`` + the function name, operators by their op). When the last listener is removed
every attribute is put back as it was: with no profiler, nothing is wrapped, so the hot path
pays nothing (the pattern the backend wrappers of ``session.py`` use).

Calls made inside omnitensor through a module attribute (``F.linear`` from ``nn.Linear``,
``x @ w`` in a backward formula) are seen and nest under their caller, as ``aten::linear``
holds ``aten::addmm`` in torch; calls between core functions are not (their primitives are
the op's own work).
"""
from __future__ import annotations

import importlib
import sys
import threading
import types
from typing import Any, Callable, Protocol

__all__ = ["Listener", "add_listener", "remove_listener", "torch_name", "OPERATORS"]


class Listener(Protocol):
    wants_modules: bool

    def enter(self, name: str, args: tuple, kwargs: dict, kind: str = "op") -> Any: ...
    def exit(self, token: Any, result: Any) -> None: ...
    def module_enter(self, module: Any) -> Any: ...
    def module_exit(self, token: Any) -> None: ...


#: operator methods -> torch's op name
OPERATORS = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub",
    "__rsub__": "rsub", "__isub__": "sub_", "__mul__": "mul", "__rmul__": "mul",
    "__imul__": "mul_", "__truediv__": "div", "__rtruediv__": "div", "__itruediv__": "div_",
    "__floordiv__": "floor_divide", "__rfloordiv__": "floor_divide",
    "__ifloordiv__": "floor_divide_", "__mod__": "remainder", "__rmod__": "remainder",
    "__imod__": "remainder_", "__pow__": "pow", "__rpow__": "pow", "__ipow__": "pow_",
    "__matmul__": "matmul", "__rmatmul__": "matmul", "__imatmul__": "matmul",
    "__neg__": "neg", "__pos__": "positive", "__abs__": "abs", "__invert__": "bitwise_not",
    "__and__": "bitwise_and", "__rand__": "bitwise_and", "__iand__": "bitwise_and_",
    "__or__": "bitwise_or", "__ror__": "bitwise_or", "__ior__": "bitwise_or_",
    "__xor__": "bitwise_xor", "__rxor__": "bitwise_xor", "__ixor__": "bitwise_xor_",
    "__lshift__": "__lshift__", "__rlshift__": "__rlshift__", "__ilshift__": "__ilshift__",
    "__rshift__": "__rshift__", "__rrshift__": "__rrshift__", "__irshift__": "__irshift__",
    "__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt",
    "__ge__": "ge", "__getitem__": "index", "__setitem__": "index_put_",
}
#: torch's names where omnitensor's function is named otherwise
_ALIASES = {"cross_entropy": "cross_entropy_loss", "multiply": "mul", "subtract": "sub",
            "divide": "div", "negative": "neg", "absolute": "abs", "concat": "cat",
            "concatenate": "cat", "permute_dims": "permute", "broadcast_to": "expand",
            "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
            "not_equal": "ne", "equal": "eq", "matrix_transpose": "transpose",
            "expand_dims": "unsqueeze", "astype": "to", "arccos": "acos", "arcsin": "asin",
            "arctan": "atan", "arctan2": "atan2", "power": "pow",
            "bitwise_invert": "bitwise_not", "bitwise_left_shift": "__lshift__",
            "bitwise_right_shift": "__rshift__"}
#: metadata, conversions to Python and hooks: not ops
_NOT_OPS = frozenset((
    "size", "dim", "ndimension", "numel", "nelement", "stride", "data_ptr", "element_size",
    "get_device", "type", "tolist", "numpy", "backward", "register_hook", "retain_grad",
    "requires_grad_", "share_memory_", "storage", "untyped_storage", "storage_offset",
    "to_device", "__array__", "__array_namespace__", "__dlpack__", "__dlpack_device__",
    "__repr__", "__str__", "__format__", "__len__", "__iter__", "__hash__", "__bool__",
    "__index__", "__int__", "__float__", "__complex__", "__reduce_ex__", "__deepcopy__",
    "compile", "save", "load", "manual_seed", "seed", "initial_seed", "devices", "info",
    "synchronize", "empty_cache", "typename", "result_type", "can_cast", "promote_types",
    "isdtype", "as_dtype", "use_deterministic_algorithms", "vmap", "grad", "jacrev",
    "jacfwd", "hessian", "jvp", "vjp", "functional_call",
))
_NAMESPACES = ("omnitensor", "omnitensor.torch_face", "omnitensor.nn.functional",
               "omnitensor.linalg", "omnitensor.fft", "omnitensor.special")


def torch_name(name: str) -> str:
    """``aten::<torch's op name>`` of a function or operator method ``name``."""
    base = OPERATORS.get(name) or _ALIASES.get(name, name)
    return "aten::" + base


def _is_op(name: str) -> bool:
    if name in OPERATORS:
        return True
    return not (name.startswith("_") or name.startswith(("is_", "get_", "set_", "are_",
                                                           "register_"))
                or name in _NOT_OPS)


_lock = threading.Lock()
_listeners: tuple[Any, ...] = ()
_installed: list[tuple[Any, str, Any]] = []  # (owner, attribute, previous or _ABSENT)
_ABSENT = object()


def _op_wrapper(name: str, fn: Callable) -> Callable:
    def call(*args: Any, **kwargs: Any) -> Any:
        listeners = _listeners
        if not listeners:
            return fn(*args, **kwargs)
        tokens = [ls.enter(name, args, kwargs) for ls in listeners]
        out = None
        try:
            out = fn(*args, **kwargs)
            return out
        finally:
            for ls, tok in zip(reversed(listeners), reversed(tokens)):
                ls.exit(tok, out)
    call.__name__ = getattr(fn, "__name__", name)
    call.__qualname__ = getattr(fn, "__qualname__", name)
    call.__doc__ = getattr(fn, "__doc__", None)
    call.__wrapped__ = fn  # type: ignore[attr-defined]
    return call


def _module_wrapper(fn: Callable) -> Callable:
    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:  # it is one
        listeners = [ls for ls in _listeners if ls.wants_modules]
        if not listeners:
            return fn(self, *args, **kwargs)
        tokens = [ls.module_enter(self) for ls in listeners]
        try:
            return fn(self, *args, **kwargs)
        finally:
            for ls, tok in zip(reversed(listeners), reversed(tokens)):
                ls.module_exit(tok)
    __call__.__wrapped__ = fn  # type: ignore[attr-defined]
    return __call__


def _range_wrapper(meth: str, fn: Callable) -> Callable:
    """An optimizer's ``step``/``zero_grad``: a range named as torch names it
    (``Optimizer.step#SGD.step``)."""
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        listeners = _listeners
        if not listeners:
            return fn(self, *args, **kwargs)
        label = f"Optimizer.{meth}#{type(self).__name__}.{meth}"
        tokens = [ls.enter(label, (), {}, "user") for ls in listeners]
        try:
            return fn(self, *args, **kwargs)
        finally:
            for ls, tok in zip(reversed(listeners), reversed(tokens)):
                ls.exit(tok, None)
    call.__wrapped__ = fn  # type: ignore[attr-defined]
    return call


def _set(owner: Any, attr: str, value: Any) -> None:
    prev = owner.__dict__.get(attr, _ABSENT) if isinstance(owner, type) else \
        vars(owner).get(attr, _ABSENT)
    _installed.append((owner, attr, prev))
    setattr(owner, attr, value)


def _wrap_all() -> None:
    from ..core.tensor import Tensor
    for name, fn in list(vars(Tensor).items()):
        if isinstance(fn, types.FunctionType) and _is_op(name):
            _set(Tensor, name, _op_wrapper(torch_name(name), fn))
    for modname in _NAMESPACES:
        mod = sys.modules.get(modname)
        if mod is None and modname != "omnitensor.torch_face":
            mod = importlib.import_module(modname)
        if mod is None:
            continue
        for name, fn in list(vars(mod).items()):
            if isinstance(fn, (types.FunctionType, types.BuiltinFunctionType)) and \
                    _is_op(name) and not name[0].isupper():
                _set(mod, name, _op_wrapper(torch_name(name), fn))
    from ..nn.module import Module
    _set(Module, "__call__", _module_wrapper(Module.__call__))
    from ..optim.optimizer import Optimizer
    todo: list[type] = [Optimizer]
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        for meth in ("step", "zero_grad"):
            fn = cls.__dict__.get(meth)
            if isinstance(fn, types.FunctionType):
                _set(cls, meth, _range_wrapper(meth, fn))


def _unwrap_all() -> None:
    for owner, attr, prev in reversed(_installed):
        if prev is _ABSENT:
            delattr(owner, attr)
        else:
            setattr(owner, attr, prev)
    _installed.clear()


def add_listener(listener: Any) -> None:
    """Start telling ``listener`` about torch-level calls (wrapping on the first one)."""
    global _listeners
    with _lock:
        if not _listeners:
            _wrap_all()
        _listeners = _listeners + (listener,)


def remove_listener(listener: Any) -> None:
    """Stop; the last listener's removal puts every wrapped attribute back."""
    global _listeners
    with _lock:
        _listeners = tuple(ls for ls in _listeners if ls is not listener)
        if not _listeners:
            _unwrap_all()
