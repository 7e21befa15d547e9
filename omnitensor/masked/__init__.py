"""``torch.masked``: reductions and normalizations that see only the elements a boolean
mask selects (torch's functional API over strided tensors).

Each op replaces the masked-out elements by the operation's identity value and runs the
plain omnitensor op, so it runs on every device and differentiates through the plain op's
autograd (:mod:`._mask` holds the shared rules). torch's ``MaskedTensor`` subclass is not
supported: the names exist and raise NotImplementedError (see docs/unsupported.md).
"""
from __future__ import annotations

from typing import Any, NoReturn

from .._unsupported import not_supported
from ._mask import canonical_input_mask as _input_mask
from ._mask import output_mask as _output_mask
from ._normalizations import (cumprod, cumsum, log_softmax, logaddexp, normalize, softmax,
                              softmin)
from ._reductions import (amax, amin, argmax, argmin, logsumexp, mean, median, norm, prod,
                          std, sum, var)

__all__ = ["amax", "amin", "argmax", "argmin", "as_masked_tensor", "cumprod", "cumsum",
           "is_masked_tensor", "log_softmax", "logaddexp", "logsumexp", "masked_tensor",
           "MaskedTensor", "mean", "median", "norm", "normalize", "prod", "softmax",
           "softmin", "std", "sum", "var"]

_HINT = ("torch.masked.MaskedTensor (a tensor subclass carrying its mask) is not "
         "implemented; pass mask= to the torch.masked functions instead")


class MaskedTensor:
    """torch's MaskedTensor: not supported (constructing one raises NotImplementedError)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> NoReturn:
        not_supported("torch.masked.MaskedTensor", _HINT)


def masked_tensor(data: Any, mask: Any, requires_grad: bool = False) -> NoReturn:
    """torch's ``masked_tensor``: not supported (raises NotImplementedError)."""
    not_supported("torch.masked.masked_tensor", _HINT)


def as_masked_tensor(data: Any, mask: Any) -> NoReturn:
    """torch's ``as_masked_tensor``: not supported (raises NotImplementedError)."""
    not_supported("torch.masked.as_masked_tensor", _HINT)


def is_masked_tensor(obj: Any, /) -> bool:
    """Whether ``obj`` is a MaskedTensor (never, as none can be made here)."""
    return isinstance(obj, MaskedTensor)
