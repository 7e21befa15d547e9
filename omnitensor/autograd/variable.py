"""``torch.autograd.Variable``: the pre-0.4 wrapper, now the tensor itself.

``Variable(t, requires_grad=True)`` returns ``t`` (detached from any graph when it is asked to
require grad, so it is a leaf, as torch's would be), and ``isinstance(x, Variable)`` is
``isinstance(x, Tensor)`` — what torch has done since Variables and Tensors merged."""
from __future__ import annotations

from typing import Any

from ..core.tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    # Variable(x) returns a Tensor, as torch's (the metaclass makes isinstance agree)
    def __new__(cls, data: Any, requires_grad: bool = False,  # type: ignore[misc]
                volatile: bool = False) -> Tensor:
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got "
                            f"{type(data).__name__}")
        if requires_grad:
            return data.detach().requires_grad_(True)
        return data
