"""``omnitensor.nn.modules.module``: torch's import path for these layers (they live in
:mod:`omnitensor.nn`), with the helpers libraries import from torch's file of that name
(``_IncompatibleKeys``, ``_addindent``, ``_forward_unimplemented``)."""
from ._reexport import reexport

__all__, __getattr__ = reexport(__name__, [
    "Module",
])

from ...core.hooks import RemovableHandle  # noqa: E402,F401
from ...core.tensor import Tensor  # noqa: E402,F401
from ..module import Module, _addindent, _forward_unimplemented  # noqa: E402,F401
from ..module_state import IncompatibleKeys as _IncompatibleKeys  # noqa: E402,F401
from ..parameter import Buffer, Parameter  # noqa: E402,F401
