"""``nn.Parameter``: a Tensor that a Module registers as trainable state."""
from __future__ import annotations

from typing import Any

from ..core.tensor import Tensor
from ..core.torch_function import disabled_torch_function_impl

__all__ = ["Parameter", "is_parameter", "Buffer"]


class Parameter(Tensor):
    """A leaf Tensor that requires grad by default and that :class:`Module` registers in
    ``parameters()`` when assigned as an attribute (torch's ``nn.Parameter``).

    ``Parameter(t)`` shares ``t``'s storage, as in torch. Ops on a Parameter return plain
    Tensors. ``Tensor`` keeps its hot fields in ``__slots__`` (and has a ``__dict__`` for
    the rare ones), so this subclass adds no slots of its own."""

    __slots__ = ()
    # torch's Parameter opts out of __torch_function__ (it counts as a plain Tensor)
    __torch_function__ = disabled_torch_function_impl

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> "Parameter":
        if data is None:
            from ..core.ops.creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(data): expected a Tensor, got {type(data).__name__}; "
                            f"wrap it with omnitensor.tensor(...) first")
        p = object.__new__(cls)
        # share the storage of ``data`` (torch's Parameter is a view of the same memory)
        p._data = data._data
        p._device = data._device
        p._dtype = data._dtype
        p.requires_grad = False
        p.grad_fn = None
        if requires_grad:
            p.requires_grad_(True)  # raises for integer dtypes, as torch does
        return p

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo: dict) -> "Parameter":
        if id(self) in memo:
            return memo[id(self)]
        from ..core.graph import no_grad_ctx
        with no_grad_ctx():
            out = Parameter(self.detach().clone(), self.requires_grad)
            if self.grad is not None:
                out.grad = self.grad.detach().clone()
        memo[id(self)] = out
        return out


def is_parameter(obj: Any) -> bool:
    """Whether ``obj`` is a :class:`Parameter`."""
    return isinstance(obj, Parameter)


class _BufferMeta(type):
    """``isinstance(t, Buffer)``: the tensor was made by ``Buffer(...)``."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and bool(obj.__dict__.get("_is_buffer", False))


class Buffer(metaclass=_BufferMeta):
    """torch's ``nn.Buffer(data, persistent=True)``: a tensor that a :class:`Module`
    registers as a buffer when assigned as an attribute (``self.x = nn.Buffer(t)`` is
    ``self.register_buffer("x", t, persistent)``). ``Buffer(t)`` is ``t``'s detached
    alias, marked."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Any:
        if data is None:
            from ..core.ops.creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(data): expected a Tensor, got {type(data).__name__}")
        t = data.detach()
        t.__dict__["_is_buffer"] = True
        t.__dict__["persistent"] = persistent
        return t
