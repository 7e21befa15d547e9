"""``torch._tensor_str``: the print options (``PRINT_OPTS``, what ``set_printoptions`` set)
and ``_tensor_str(t, indent)``, a tensor's data as its repr prints it
(omnitensor/core/printing.py formats both)."""
from __future__ import annotations

from typing import Any

from .core import printing as _printing

__all__ = ["PRINT_OPTS", "set_printoptions"]

set_printoptions = _printing.set_printoptions


class _PrintOptions:
    """torch's ``__PrinterOptions``: the current options, read live."""

    def __getattr__(self, name: str) -> Any:
        try:
            return _printing._OPTIONS[name]
        except KeyError:
            raise AttributeError(name) from None


PRINT_OPTS = _PrintOptions()


def _tensor_str(self: Any, indent: int) -> str:
    """The data part of ``repr(self)``, continuation lines indented by ``indent``."""
    return _printing.tensor_str(self, indent)
