"""What torch's ``torch.backends.<library>`` switches mean on omnitensor.

torch exposes one module per vendor library it may call (cuDNN, MKL-DNN, MPS, ...), each with
``is_available()`` and a few settable flags. omnitensor calls none of those libraries (its
kernels come from ``omnitensor.kernels`` and the array libraries behind each adapter), so
every ``is_available()`` here answers False, honestly, and the flags are plain settable
attributes that change nothing: a script's ``torch.backends.cudnn.benchmark = True`` runs and
means what it would on a machine without cuDNN. The modules are a face (``as_torch`` maps
``torch.backends`` here), apart from the device adapters; they import no vendor library.
"""
from __future__ import annotations

import contextlib
import sys
from typing import Any, Iterator


@contextlib.contextmanager
def flags_context(module_name: str, **values: Any) -> Iterator[None]:
    """Set ``values`` (those not None) on the module for the block, then restore them
    (torch's ``torch.backends.<lib>.flags(...)`` context managers)."""
    mod = sys.modules[module_name]
    old = {k: getattr(mod, k) for k, v in values.items() if v is not None}
    for k, v in values.items():
        if v is not None:
            if not hasattr(mod, k):
                raise TypeError(f"{module_name}.flags() got an unknown flag {k!r}")
            setattr(mod, k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            setattr(mod, k, v)


class FlagNamespace:
    """A group of settable flags (``torch.backends.cuda.matmul.allow_tf32 = True``) that
    rejects misspelled names instead of silently growing new ones."""

    def __init__(self, path: str, **defaults: Any) -> None:
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_values", dict(defaults))

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError(f"{self._path} has no flag {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._values:
            raise AttributeError(f"{self._path} has no flag {name!r} (flags: "
                                 f"{', '.join(sorted(self._values))})")
        self._values[name] = value

    def __repr__(self) -> str:
        return f"<{self._path} {self._values}>"
