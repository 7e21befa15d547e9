"""``torch.library``: user-defined operators, and ``torch.ops`` to call them by name.

An operator defined with :func:`custom_op` (or ``Library.define`` + ``Library.impl``) is
its Python function: omnitensor runs it eagerly on whatever device its tensors are on, and
its gradient comes from the omnitensor ops it is written with, unless
:func:`register_autograd` gives one (then it is an ``autograd.Function``). Kernels given
per device type with :func:`register_kernel` take precedence on that type. Fake (meta)
implementations are kept but never needed: omnitensor's compile traces real calls.

``torch.ops.<namespace>.<name>`` finds every operator defined here, and ``torch.ops.aten``
ATen's operators (:mod:`omnitensor.aten`).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

__all__ = ["custom_op", "register_fake", "register_autograd", "register_kernel", "impl",
           "define", "Library", "CustomOpDef", "opcheck", "ops"]

_REGISTRY: dict[str, "CustomOpDef"] = {}


def _split(qualname: str) -> tuple[str, str]:
    ns, sep, name = qualname.partition("::")
    if not sep or not ns or not name:
        raise ValueError(f"torch.library: expected a name like 'mylib::my_op', got "
                         f"{qualname!r}")
    return ns, name.partition(".")[0]


class CustomOpDef:
    """A user-defined operator (what ``custom_op`` returns)."""

    def __init__(self, qualname: str, fn: Callable[..., Any] | None,
                 mutates_args: Any = ()) -> None:
        self._namespace, self._name = _split(qualname)
        self._qualname = f"{self._namespace}::{self._name}"
        self._fn = fn
        self._kernels: dict[str, Callable[..., Any]] = {}
        self._fake: Callable[..., Any] | None = None
        self._backward: Callable[..., Any] | None = None
        self._setup_context: Callable[..., Any] | None = None
        self._function: Any = None
        self.mutates_args = mutates_args
        _REGISTRY[self._qualname] = self

    # ------------------------------------------------------------------ registration
    def register_kernel(self, device_types: Any, fn: Callable[..., Any] | None = None) -> Any:
        types = [device_types] if isinstance(device_types, str) or device_types is None \
            else list(device_types)

        def deco(f: Callable[..., Any]) -> Callable[..., Any]:
            for t in types:
                self._kernels[str(t) if t is not None else "default"] = f
            return f
        return deco(fn) if fn is not None else deco

    def register_fake(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        self._fake = fn
        return fn

    def register_autograd(self, backward: Callable[..., Any], *,
                          setup_context: Callable[..., Any] | None = None) -> None:
        self._backward, self._setup_context = backward, setup_context
        self._function = None

    # ------------------------------------------------------------------------- call
    def _impl_for(self, args: tuple) -> Callable[..., Any]:
        from .core.tensor import Tensor
        for a in args:
            if isinstance(a, Tensor):
                found = self._kernels.get(a.device.type)
                if found is not None:
                    return found
                break
        impl = self._kernels.get("default", self._fn)
        if impl is None:
            raise NotImplementedError(f"{self._qualname}: no implementation was registered")
        return impl

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        impl = self._impl_for(args)
        if self._backward is None:
            return impl(*args, **kwargs)
        return self._autograd_function().apply(impl, kwargs, *args)

    def _autograd_function(self) -> Any:
        if self._function is None:
            self._function = _make_function(self)
        return self._function

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"


def _make_function(op: CustomOpDef) -> Any:
    """An autograd.Function running ``op``'s implementation with its registered backward
    (torch's ``setup_context(ctx, inputs, output)`` then ``backward(ctx, *grads)``)."""
    from .autograd import Function

    class _Op(Function):
        @staticmethod
        def forward(ctx: Any, impl: Callable[..., Any], kwargs: dict, *args: Any) -> Any:
            from .autograd import no_grad
            with no_grad():
                out = impl(*args, **kwargs)
            if op._setup_context is not None:
                op._setup_context(ctx, args, out)
            return out

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            g = op._backward(ctx, *grads)  # type: ignore[misc]
            g = g if isinstance(g, tuple) else (g,)
            return (None, None) + g
    _Op.__name__ = op._name
    return _Op


def custom_op(name: str, fn: Callable[..., Any] | None = None, /, *, mutates_args: Any = (),
              device_types: Any = None, schema: str | None = None) -> Any:
    """Define an operator from a Python function (usable as a decorator)."""
    def deco(f: Callable[..., Any]) -> CustomOpDef:
        op = CustomOpDef(name, None if device_types is not None else f, mutates_args)
        if device_types is not None:
            op.register_kernel(device_types, f)
        return op
    return deco(fn) if fn is not None else deco


def _lookup(op: Any) -> CustomOpDef:
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, str):
        ns, name = _split(op)
        found = _REGISTRY.get(f"{ns}::{name}")
        if found is not None:
            return found
        return CustomOpDef(op, None)
    raise TypeError(f"torch.library: expected an operator or its 'ns::name', got {op!r}")


def register_fake(op: Any, fn: Callable[..., Any] | None = None, /, *, lib: Any = None,
                  _stacklevel: int = 1) -> Any:
    target = _lookup(op)
    return target.register_fake(fn) if fn is not None else target.register_fake


def register_autograd(op: Any, backward: Callable[..., Any], /, *,
                      setup_context: Callable[..., Any] | None = None, lib: Any = None) -> None:
    _lookup(op).register_autograd(backward, setup_context=setup_context)


def register_kernel(op: Any, device_types: Any, fn: Callable[..., Any] | None = None, /, *,
                    lib: Any = None) -> Any:
    return _lookup(op).register_kernel(device_types, fn)


def define(qualname: str, schema: str, *, lib: Any = None, tags: Any = ()) -> None:
    """Declare an operator; give its implementation with :func:`impl`."""
    _lookup(qualname)


def impl(qualname: str, types: Any, func: Callable[..., Any] | None = None, *,
         lib: Any = None) -> Any:
    """Implement a declared operator for device types ('CPU', 'CUDA', 'default'...)."""
    op = _lookup(qualname)
    names = [types] if isinstance(types, str) else list(types)
    mapped = ["default" if t.lower() in ("compositeimplicitautograd", "compositeexplicitautograd",
                                         "default", "autograd") else
              ("cpu" if t.lower() == "cpu" else "cuda" if t.lower() == "cuda" else t.lower())
              for t in names]

    def deco(f: Callable[..., Any]) -> Callable[..., Any]:
        for t in mapped:
            if t == "default":
                op._fn = f
            else:
                op._kernels[t] = f
        return f
    return deco(func) if func is not None else deco


class Library:
    """``torch.library.Library(ns, kind)``: ``define`` schemas and ``impl`` functions."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        if kind not in ("DEF", "IMPL", "FRAGMENT"):
            raise ValueError(f"Library: kind must be DEF, IMPL or FRAGMENT, got {kind!r}")
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key

    def define(self, schema: str, alias_analysis: str = "", *, tags: Any = ()) -> str:
        name = schema.partition("(")[0].strip()
        define(f"{self.ns}::{name}", schema)
        return name

    def impl(self, op_name: Any, fn: Callable[..., Any], dispatch_key: str = "",
             *, with_keyset: bool = False) -> None:
        name = op_name if isinstance(op_name, str) else str(op_name)
        impl(f"{self.ns}::{name.split('::')[-1]}", dispatch_key or self.dispatch_key or
             "default", fn)


def opcheck(op: Any, args: Iterable[Any], kwargs: dict | None = None, *,
            test_utils: Any = None, raise_exception: bool = True) -> dict:
    """Run the operator once (omnitensor has no fake/functionalization tests to run)."""
    _lookup(op)(*args, **(kwargs or {}))
    return {"test_schema": "SUCCESS"}


class _Namespace:
    def __init__(self, ns: str) -> None:
        self._ns = ns

    def __getattr__(self, name: str) -> CustomOpDef:
        op = _REGISTRY.get(f"{self._ns}::{name}")
        if op is None:
            raise AttributeError(f"'_OpNamespace' '{self._ns}' object has no attribute "
                                 f"'{name}' (no torch.library operator {self._ns}::{name})")
        return op


class _Ops:
    """``torch.ops``: ``torch.ops.<namespace>.<op>`` for operators defined here, and
    ``torch.ops.aten.<op>`` for ATen's."""

    def __getattr__(self, ns: str) -> Any:
        if ns.startswith("__"):
            raise AttributeError(ns)
        if ns == "aten":  # ATen's operators (omnitensor/aten)
            from .aten import namespace
            return namespace
        return _Namespace(ns)


ops = _Ops()
