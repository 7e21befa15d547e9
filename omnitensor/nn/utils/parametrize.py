"""``nn.utils.parametrize``: express a module's tensor as a function of other tensors
(torch's API): ``register_parametrization``, ``remove_parametrizations``,
``is_parametrized``, ``cached``, ``ParametrizationList``.

After ``register_parametrization(module, "weight", p)`` the module's class is a generated
subclass with a ``weight`` property that returns ``p(original)``; the unconstrained tensor
lives at ``module.parametrizations.weight.original`` (``original0``, ``original1``... when
``p.right_inverse`` returns several), which is what optimizers update and what the state
dict holds, key for key as torch's.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, Sequence

from ...core.graph import no_grad_ctx
from ...core.tensor import Tensor
from ..containers import ModuleDict, ModuleList
from ..module import Module
from ..parameter import Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized",
           "cached", "type_before_parametrizations", "transfer_parametrizations_and_params",
           "ParametrizationList"]

_cache_enabled = 0
_cache: dict = {}


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Inside this context each parametrized tensor is computed once, on first access
    (torch's ``parametrize.cached``)."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _as_parameter(t: Tensor, like: Tensor) -> Tensor:
    if isinstance(like, Parameter):
        return Parameter(t.detach(), requires_grad=like.requires_grad)
    return t.detach()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the unconstrained
    ``original`` tensor(s) they read."""

    def __init__(self, modules: Sequence[Module], original: Tensor,
                 unsafe: bool = False) -> None:
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad_ctx():
            new: Any = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if not unsafe and (tuple(new.shape) != tuple(original.shape) or
                               new.dtype != original.dtype):
                raise ValueError(f"register_parametrization: right_inverse changed the "
                                 f"shape or dtype of the tensor ({tuple(original.shape)} "
                                 f"{original.dtype} -> {tuple(new.shape)} {new.dtype}); "
                                 f"pass unsafe=True to allow it")
            if new is original:
                self._register("original", original)
            else:
                self._register("original", _as_parameter(new, original))
        else:
            for i, t in enumerate(new):
                if not isinstance(t, Tensor):
                    raise ValueError(f"right_inverse must return a tensor or a sequence of "
                                     f"tensors, got {type(t).__name__} at position {i}")
                self._register(f"original{i}", _as_parameter(t, original))
        if not unsafe:
            with no_grad_ctx():
                z = self()
            if tuple(z.shape) != tuple(original.shape) or z.dtype != original.dtype:
                raise ValueError(f"register_parametrization: the parametrization changes "
                                 f"the shape or dtype of the tensor ({tuple(original.shape)} "
                                 f"{original.dtype} -> {tuple(z.shape)} {z.dtype}); pass "
                                 f"unsafe=True to allow it")

    def _register(self, name: str, t: Tensor) -> None:
        if isinstance(t, Parameter):
            self.register_parameter(name, t)
        else:
            self.register_buffer(name, t)

    def originals(self) -> list[Tensor]:
        """The unconstrained tensors, in order."""
        if self.is_tensor:
            return [self.original]
        return [getattr(self, f"original{i}") for i in range(self.ntensors)]

    def right_inverse(self, value: Tensor) -> None:
        """Set the originals so that the parametrized tensor becomes ``value``."""
        with no_grad_ctx():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                elif not self.unsafe:
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       f"implement right_inverse")
            values = [value] if self.is_tensor else list(value)
            for orig, v in zip(self.originals(), values):
                orig.copy_(v)

    def forward(self) -> Tensor:
        mods = list(self)
        x = mods[0](self.original) if self.is_tensor else mods[0](*self.originals())
        for m in mods[1:]:
            x = m(x)
        return x


def _make_property(name: str) -> property:
    def get(self: Module) -> Tensor:
        plist = self.parametrizations[name]
        if _cache_enabled:
            key = (id(self), name)
            if key not in _cache:
                _cache[key] = plist()
            return _cache[key]
        return plist()

    def set_(self: Module, value: Tensor) -> None:
        self.parametrizations[name].right_inverse(value)
    return property(get, set_)


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` (or its ``tensor_name``) has a parametrization."""
    plists = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(plists, ModuleDict):
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists


def type_before_parametrizations(module: Module) -> type:
    """The module's class before any parametrization was registered."""
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


def register_parametrization(module: Module, tensor_name: str, parametrization: Module,
                             *, unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` the output of ``parametrization`` applied to an
    unconstrained tensor initialised (through ``right_inverse`` when the parametrization
    has one) from the current value; a second call on the same tensor appends."""
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            with no_grad_ctx():
                y = getattr(module, tensor_name)
                z = parametrization(y)
            if tuple(z.shape) != tuple(y.shape) or z.dtype != y.dtype:
                raise ValueError("register_parametrization: the parametrization changes the "
                                 "shape or dtype of the tensor; pass unsafe=True to allow it")
        plist.append(parametrization)
        plist.unsafe = plist.unsafe or unsafe
        return module
    if tensor_name in module._parameters or tensor_name in module._buffers:
        original = getattr(module, tensor_name)
    else:
        raise ValueError(f"module '{type(module).__name__}' has no parameter or buffer named "
                         f"'{tensor_name}'")
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        cls = type(module)
        module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {})
        module.parametrizations = ModuleDict()
    module.parametrizations[tensor_name] = plist
    setattr(type(module), tensor_name, _make_property(tensor_name))
    return module


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo :func:`register_parametrization` for ``tensor_name``: the tensor becomes a
    plain parameter again, holding the parametrized value (``leave_parametrized``) or the
    original."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"module {type(module).__name__} does not have a parametrization on "
                         f"{tensor_name}")
    plist = module.parametrizations[tensor_name]
    with no_grad_ctx():
        if leave_parametrized:
            value = getattr(module, tensor_name).detach()
        elif plist.is_tensor:
            value = plist.original.detach()
        else:
            raise ValueError("cannot leave unparametrized (leave_parametrized=False) a tensor "
                             "parametrized in terms of a sequence of tensors")
    first = plist.originals()[0]
    requires_grad = first.requires_grad if isinstance(first, Parameter) else True
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(first, Parameter):
        module.register_parameter(tensor_name, Parameter(value.clone(),
                                                         requires_grad=requires_grad))
    else:
        module.register_buffer(tensor_name, value.clone())
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Copy the parametrizations (and their originals) of ``from_module`` onto
    ``to_module``."""
    import copy
    names = [tensor_name] if tensor_name else list(from_module.parametrizations.keys())
    for name in names:
        src = from_module.parametrizations[name]
        for p in src:
            if not is_parametrized(to_module, name):
                if not hasattr(to_module, name):
                    to_module.register_parameter(name, Parameter(getattr(from_module, name)
                                                                 .detach().clone()))
            register_parametrization(to_module, name, copy.deepcopy(p), unsafe=True)
        with no_grad_ctx():
            for dst, orig in zip(to_module.parametrizations[name].originals(),
                                 src.originals()):
                dst.copy_(orig)
    return to_module
