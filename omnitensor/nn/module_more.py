"""The rest of torch's ``nn.Module`` API, as a mixin of :class:`omnitensor.nn.Module`:
``set_submodule``, ``to_empty``, in-place ``compile``, the deprecated
``register_backward_hook``, the other device names, and the private call entry points
libraries reach for (``_call_impl``, ``_wrapped_call_impl``, ``_slow_forward``)."""
from __future__ import annotations

import warnings
from typing import Any, Callable, TypeVar

from ..core.hooks import RemovableHandle

__all__ = ["ModuleMoreMixin"]

T_destination = TypeVar("T_destination", bound=dict)


class ModuleMoreMixin:
    """Methods of ``Module`` built on its core ones (``_modules``, ``_apply``, hooks)."""

    _modules: dict[str, Any]
    #: torch's switch for forwarding constructor arguments to ``object.__init__``
    call_super_init: bool = False
    T_destination = T_destination
    forward: Callable[..., Any]
    # defined by Module
    get_submodule: Callable[..., Any]
    _apply: Callable[..., Any]
    register_full_backward_hook: Callable[..., RemovableHandle]
    __call__: Callable[..., Any]

    def set_submodule(self, target: str, module: Any, strict: bool = False) -> None:
        """Put ``module`` at a dotted path (``"encoder.layers.0"``), replacing what is
        there; with ``strict`` the last name must already be a submodule."""
        from .module import Module
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and name not in parent._modules:
            raise AttributeError(f"{type(parent).__name__} has no attribute `{name}`")
        if name in parent.__dict__ and name not in parent._modules:
            raise AttributeError(f"`{name}` is an attribute of {type(parent).__name__}, "
                                 f"not a submodule")
        setattr(parent, name, module)

    def to_empty(self, *, device: Any, recurse: bool = True) -> Any:
        """Move parameters and buffers to ``device`` without copying their values (fresh
        uninitialized storage, as torch's)."""
        from ..core.ops.creation import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Compile this module's ``forward`` in place (``omnitensor.compile``'s
        arguments); hooks still run around it."""
        import omnitensor
        compiled = omnitensor.compile(self.forward, *args, **kwargs)  # type: ignore[misc]
        object.__setattr__(self, "forward", compiled)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """torch's deprecated module backward hook: registered as a full backward hook
        (``register_full_backward_hook``), whose ``grad_input`` is the gradients of the
        module's inputs, which the old hook only approximated."""
        warnings.warn("register_backward_hook is deprecated; it is registered as "
                      "register_full_backward_hook", FutureWarning, stacklevel=2)
        return self.register_full_backward_hook(hook)

    def _device_method(self, name: str, device: Any) -> Any:
        target = name if device is None else f"{name}:{int(device)}" \
            if isinstance(device, int) else device
        return self._apply(lambda t: t.to(target))

    def xpu(self, device: Any = None) -> Any:
        """Move to an XPU device (torch's name; refused with the reason by the device)."""
        return self._device_method("xpu", device)

    def ipu(self, device: Any = None) -> Any:
        return self._device_method("ipu", device)

    def mtia(self, device: Any = None) -> Any:
        return self._device_method("mtia", device)

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        return self.__call__(*args, **kwargs)

    _wrapped_call_impl = _call_impl

    def _slow_forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)
