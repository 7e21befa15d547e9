"""``nn.Module``: the base class of layers and models (torch semantics).

A Module owns parameters (trainable :class:`Parameter` leaves), buffers (non-trainable
state such as BatchNorm's running statistics) and child modules, all registered by plain
attribute assignment. Everything here is device-agnostic: ``to(device)`` swaps the storage
of each parameter in place, so an optimizer built before the move still holds the same
Parameter objects (as in torch). State dicts live in ``module_state.py`` (a mixin), the
rest of torch's Module API in ``module_more.py`` (a mixin), backward hooks in
``backward_hooks.py``.
"""
from __future__ import annotations

import copy
import itertools
from collections import OrderedDict
from typing import Any, Callable, Iterator

from ..core import dtypes as _dt
from ..core.device import Device
from ..core.ops.conversion import parse_to as _core_parse_to
from ..core.graph import is_grad_enabled, no_grad_ctx
from ..core.tensor import Tensor
from ..core.hooks import RemovableHandle
from .module_more import ModuleMoreMixin
from .module_state import IncompatibleKeys, StateDictMixin, _hook_ids
from .parameter import Parameter

__all__ = ["Module", "IncompatibleKeys"]

def _forward_unimplemented(self: "Module", *args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                              f'"forward" function')


def _addindent(s: str, n: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


def parse_to(*args: Any, **kwargs: Any) -> tuple[Any, Any, bool, Any]:
    """``(device, dtype, non_blocking, memory_format)`` from ``to``'s arguments (torch's
    ``torch._C._nn._parse_to``: core's ``parse_to`` forms, the device a :class:`Device`,
    the dtype a DType, absent parts None)."""
    device, dtype, non_blocking, _, memory_format = _core_parse_to(*args, **kwargs)
    if device is not None and not isinstance(device, Device):
        device = Device(device)
    return device, None if dtype is None else _dt.as_dtype(dtype), non_blocking, memory_format


def _parse_to(args: tuple, kwargs: dict) -> tuple[Any, Any]:
    """(device, dtype) of ``Module.to``'s arguments (:func:`parse_to`), which casts to
    floating or complex dtypes only."""
    device, dtype = parse_to(*args, **kwargs)[:2]
    if dtype is not None and dtype.kind not in "fc":
        raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, "
                        f"but got desired dtype={dtype.name}")
    return device, dtype


class Module(StateDictMixin, ModuleMoreMixin):
    """Base class of every layer and model. Subclasses call ``super().__init__()`` first,
    assign parameters/submodules as attributes and define ``forward``."""

    training: bool
    dump_patches = False
    forward: Callable[..., Any] = _forward_unimplemented

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments; "
                            f"Module.__init__ takes none")
        # object.__setattr__: our __setattr__ reads these dicts
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        setattr_(self, "_forward_hooks", OrderedDict())
        setattr_(self, "_forward_hooks_with_kwargs", set())
        setattr_(self, "_forward_hooks_always_called", set())
        setattr_(self, "_forward_pre_hooks", OrderedDict())
        setattr_(self, "_backward_hooks", OrderedDict())
        setattr_(self, "_backward_pre_hooks", OrderedDict())
        setattr_(self, "_forward_pre_hooks_with_kwargs", set())
        setattr_(self, "_state_dict_hooks", OrderedDict())
        setattr_(self, "_state_dict_pre_hooks", OrderedDict())
        setattr_(self, "_load_state_dict_pre_hooks", OrderedDict())
        setattr_(self, "_load_state_dict_post_hooks", OrderedDict())

    # ---------------------------------------------------------------- registration
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add non-trainable state (saved in ``state_dict`` unless ``persistent=False``;
        moved by ``to()``)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                            f"'{name}' (Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (``None`` records an absent optional one, e.g. ``bias``)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (omnitensor.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly; use .detach()")
        self._parameters[name] = param

    def add_module(self, name: str, module: "Module | None") -> None:
        """Add a child module (also done by attribute assignment)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    @staticmethod
    def _check_name(name: Any, what: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{what} name should be a string, got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{what} name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError(f'{what} name can\'t be empty string ""')

    def get_submodule(self, target: str) -> "Module":
        """The submodule at a dotted path (``"encoder.layers.0"``)."""
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not isinstance(mod, Module) or item not in mod._modules:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{item}` "
                                     f"(looking up '{target}')")
            mod = mod._modules[item]
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path (``"layer.weight"``)."""
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._parameters:
            raise AttributeError(f"{type(mod).__name__} has no parameter `{name}`")
        return mod._parameters[name]

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at a dotted path (``"bn.running_mean"``)."""
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._buffers:
            raise AttributeError(f"{type(mod).__name__} has no buffer `{name}`")
        return mod._buffers[name]

    # ---------------------------------------------------------- attribute protocol
    def __getattr__(self, name: str) -> Any:
        # only called when normal lookup fails: parameters, buffers and children live in
        # their own dicts so that state_dict/to()/parameters() can find them
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_from(name, d, self._buffers, self._modules)
            self._non_persistent_buffers_set.discard(name)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter "
                                f"'{name}' (omnitensor.nn.Parameter or None expected)")
            params[name] = None
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_from(name, d, self._parameters, self._buffers)
            self._non_persistent_buffers_set.discard(name)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (omnitensor.nn.Module or None expected)")
            modules[name] = None
            return
        buffers = d.get("_buffers")
        if isinstance(value, Tensor) and value.__dict__.get("_is_buffer", False):  # nn.Buffer
            if buffers is None:
                raise AttributeError("cannot assign buffers before Module.__init__() call")
            self._remove_from(name, d, self._parameters, self._modules)
            self.register_buffer(name, value, persistent=value.__dict__.get("persistent", True))
            return
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                f"(omnitensor.Tensor or None expected)")
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    @staticmethod
    def _remove_from(name: str, *dicts: dict) -> None:
        for dct in dicts:
            if name in dct:
                del dct[name]

    def __delattr__(self, name: str) -> None:
        for key in ("_parameters", "_buffers", "_modules"):
            dct = self.__dict__.get(key)
            if dct is not None and name in dct:
                del dct[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        keys = list(super().__dir__()) + list(self._parameters) + list(self._buffers) + \
            list(self._modules)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def __deepcopy__(self, memo: dict) -> "Module":
        # Tensors do not pickle (a pickle can run code on load), so the generic deepcopy
        # protocol fails on them: copy parameters/buffers by cloning, the rest normally
        if id(self) in memo:
            return memo[id(self)]
        with no_grad_ctx():
            for mod in self.modules():
                for t in itertools.chain(mod._parameters.values(), mod._buffers.values()):
                    if t is not None and id(t) not in memo:
                        if isinstance(t, Parameter):
                            memo[id(t)] = copy.deepcopy(t, memo)
                        else:
                            c = t.detach().clone()
                            c.requires_grad = t.requires_grad
                            memo[id(t)] = c
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            object.__setattr__(new, k, copy.deepcopy(v, memo))
        return new

    # -------------------------------------------------------------------- traversal
    def _named_members(self, get_members: Callable, prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        memo: set[int] = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter of this module (and its descendants), each once."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(dotted_name, parameter)`` pairs, in registration order."""
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                   remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every buffer of this module (and its descendants), each once."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """``(dotted_name, buffer)`` pairs, in registration order."""
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                   remove_duplicate)

    def children(self) -> Iterator["Module"]:
        """The direct child modules, each once."""
        for _, m in self.named_children():
            yield m

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        """``(name, child)`` pairs of the direct children, each once."""
        memo: set[int] = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in memo:
                memo.add(id(m))
                yield name, m

    def modules(self) -> Iterator["Module"]:
        """This module and every descendant, depth first, each once."""
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, "Module"]]:
        """``(dotted_name, module)`` for this module (name ``prefix``) and every
        descendant, depth first, each once."""
        if memo is None:
            memo = set()
        if remove_duplicate and id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from m.named_modules(memo, sub, remove_duplicate)

    # ----------------------------------------------------------------------- modes
    def train(self, mode: bool = True) -> "Module":
        """Training mode (dropout active, BatchNorm uses batch statistics)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> "Module":
        """Evaluation mode: ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        """Set ``requires_grad`` on every parameter (freeze with False)."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter (to None by default, as torch)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g = g.detach()
                    p.grad = g
                g.zero_()

    def apply(self, fn: Callable[["Module"], Any]) -> "Module":
        """Call ``fn`` on every submodule (children first) and on self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------- device and dtype
    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> "Module":
        if recurse:
            for m in self.children():
                m._apply(fn)
        with no_grad_ctx():
            for p in self._parameters.values():
                if p is None:
                    continue
                new = fn(p)
                if new is not p:
                    # swap the storage in place: the Parameter object (held by optimizers)
                    # keeps its identity, as torch does
                    p.data = new
                g = p.grad
                if g is not None:
                    ng = fn(g)
                    if ng is not g:
                        p.grad = ng.detach()
            for key, b in self._buffers.items():
                if b is not None:
                    self._buffers[key] = fn(b)
        return self

    def to(self, *args: Any, **kwargs: Any) -> "Module":
        """Move/cast parameters and buffers in place: ``to(device)``, ``to(dtype)``
        (floating tensors only), ``to(device, dtype)`` or ``to(tensor)``."""
        device, dtype = _parse_to(args, dict(kwargs))

        def convert(t: Tensor) -> Tensor:
            out = t if device is None else t.to(device)
            if dtype is not None and out.dtype.kind in "fc":
                # integer buffers (e.g. BatchNorm's num_batches_tracked) keep their dtype;
                # complex tensors stay complex at the requested precision
                target = dtype.to_complex() if out.dtype.kind == "c" and dtype.kind == "f" \
                    else dtype
                out = out.to(target)
            return out
        return self._apply(convert)

    def share_memory(self) -> "Module":
        """Move the (cpu) parameters and buffers into shared memory, so processes sent
        this module update one set of values (``Tensor.share_memory_``)."""
        return self._apply(lambda t: t.share_memory_())

    def cpu(self) -> "Module":
        """Move parameters and buffers to the cpu device (in place). As torch's, through
        ``_apply`` rather than ``to``: subclasses overriding ``to`` are not called."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device: Any = None) -> "Module":
        """Move parameters and buffers to a CUDA device (in place; ``_apply``, as ``cpu``)."""
        return self._apply(lambda t: t.cuda(device))

    def float(self) -> "Module":
        """Cast floating parameters and buffers to float32."""
        return self._apply(lambda t: t.to(_dt.float32) if t.dtype.kind == "f" else t)

    def double(self) -> "Module":
        """Cast floating parameters and buffers to float64."""
        return self._apply(lambda t: t.to(_dt.float64) if t.dtype.kind == "f" else t)

    def half(self) -> "Module":
        """Cast floating parameters and buffers to float16."""
        return self._apply(lambda t: t.to(_dt.float16) if t.dtype.kind == "f" else t)

    def bfloat16(self) -> "Module":
        """Cast floating parameters and buffers to bfloat16."""
        return self._apply(lambda t: t.to(_dt.bfloat16) if t.dtype.kind == "f" else t)

    def type(self, dst_type: Any) -> "Module":
        """Cast every parameter and buffer to ``dst_type``."""
        d = _dt.as_dtype(dst_type)
        return self._apply(lambda t: t.to(d))

    # ------------------------------------------------------------------------ hooks
    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` (or ``hook(module, args, kwargs)`` with ``with_kwargs``)
        runs before ``forward``; a non-None result replaces the arguments."""
        key = next(_hook_ids)
        self._forward_pre_hooks[key] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(key)
        if prepend:
            self._forward_pre_hooks.move_to_end(key, last=False)
        return RemovableHandle(self._forward_pre_hooks, hook, key)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False
                                    ) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs when the gradients of the
        module's Tensor positional inputs are computed; a non-None result replaces
        ``grad_input`` (``nn/backward_hooks.py``)."""
        key = next(_hook_ids)
        self._backward_hooks[key] = hook
        if prepend:
            self._backward_hooks.move_to_end(key, last=False)
        return RemovableHandle(self._backward_hooks, hook, key)

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False
                                        ) -> RemovableHandle:
        """``hook(module, grad_output)`` runs when the outputs' gradients arrive; a
        non-None result replaces them."""
        key = next(_hook_ids)
        self._backward_pre_hooks[key] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(key, last=False)
        return RemovableHandle(self._backward_pre_hooks, hook, key)

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with
        ``with_kwargs``) runs after ``forward``; a non-None result replaces the output.
        With ``always_call`` it also runs when ``forward`` raised (output None)."""
        key = next(_hook_ids)
        self._forward_hooks[key] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(key)
        if always_call:
            self._forward_hooks_always_called.add(key)
        if prepend:
            self._forward_hooks.move_to_end(key, last=False)
        return RemovableHandle(self._forward_hooks, hook, key)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not self._forward_pre_hooks and not self._forward_hooks:
            if not self._backward_hooks and not self._backward_pre_hooks:
                return self.forward(*args, **kwargs)  # the hot path: no hook bookkeeping
        if (self._backward_hooks or self._backward_pre_hooks) and is_grad_enabled():
            from .backward_hooks import call_with_backward_hooks
            return call_with_backward_hooks(self, args, kwargs,
                                            lambda a, k: self._call_with_hooks(a, k))
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args: tuple, kwargs: dict) -> Any:
        for key, hook in list(self._forward_pre_hooks.items()):
            if key in self._forward_pre_hooks_with_kwargs:
                r = hook(self, args, kwargs)
                if r is not None:
                    if not (isinstance(r, tuple) and len(r) == 2):
                        raise RuntimeError(f"forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {r}.")
                    args, kwargs = r
            else:
                r = hook(self, args)
                if r is not None:
                    args = r if isinstance(r, tuple) else (r,)
        called: set = set()
        try:
            result = self.forward(*args, **kwargs)
        except Exception:
            for key, hook in list(self._forward_hooks.items()):
                if key in self._forward_hooks_always_called and key not in called:
                    try:
                        if key in self._forward_hooks_with_kwargs:
                            hook(self, args, kwargs, None)
                        else:
                            hook(self, args, None)
                    except Exception:  # noqa: BLE001 - the original error wins
                        pass
            raise
        for key, hook in list(self._forward_hooks.items()):
            called.add(key)
            if key in self._forward_hooks_with_kwargs:
                r = hook(self, args, kwargs, result)
            else:
                r = hook(self, args, result)
            if r is not None:
                result = r
        return result

    # ------------------------------------------------------------------------- repr
    def extra_repr(self) -> str:
        """The text inside ``Name(...)`` of this module's repr (override it)."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = []
        for name, m in self._modules.items():
            child_lines.append(f"({name}): " + _addindent(repr(m), 2))
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
