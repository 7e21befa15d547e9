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
The rules are written once, in :mod:`omnitensor.core.torch_function`. Not provided:
``TorchFunctionMode`` and the tables ``get_ignored_functions``,
``get_overridable_functions``, ``get_testing_overrides`` (with no dispatch from omnitensor's
ops, such tables would claim what is not so).
"""
from __future__ import annotations

from .core.torch_function import (handle_torch_function, has_torch_function,
                                  has_torch_function_unary, has_torch_function_variadic,
                                  is_tensor_like, is_tensor_method_or_property)

__all__ = ["handle_torch_function", "has_torch_function", "has_torch_function_unary",
           "has_torch_function_variadic", "is_tensor_like", "is_tensor_method_or_property"]
