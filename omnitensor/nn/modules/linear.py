"""``omnitensor.nn.modules.linear``: torch's import path for these layers (they live in
:mod:`omnitensor.nn`)."""
from ._reexport import reexport

__all__, __getattr__ = reexport(__name__, [
    "Identity",
    "Linear",
    "Bilinear",
    "LazyLinear",
])

from ..linear import Linear as _Linear  # noqa: E402


class NonDynamicallyQuantizableLinear(_Linear):
    """torch's name for ``MultiheadAttention.out_proj``'s class: a ``Linear`` (it exists in
    torch only to keep dynamic quantization away; there is no quantization here). Scripts
    name it in ``safe_globals`` lists."""


__all__.append("NonDynamicallyQuantizableLinear")
