"""``load(..., weights_only=False)``: Python's own unpickler, for files you trust.

This runs code. A pickle can name any importable function and have it called with any
arguments (``os.system("...")``); that is how whole-object checkpoints rebuild their
classes, and why torch and omnitensor both default to ``weights_only=True``. Here, as in
torch, every global a file names is imported and used. The only difference from
``pickle.load``: torch's names mean omnitensor's objects — the allow-list's ``torch.*``
entries (``torch._utils._rebuild_tensor_v2`` is omnitensor's rebuild) and, for any other
``torch.X``, ``omnitensor.X`` — so a whole ``nn.Module`` saved by real torch comes back
as omnitensor's module of that name. Real torch is never imported.
"""
from __future__ import annotations

import _compat_pickle
import importlib
import pickle
from typing import Any, Callable

from .files import CheckpointError
from .rebuild import LoadContext
from .torch_names import allowed_globals, unsupported_global

__all__ = ["TrustedUnpickler"]


class TrustedUnpickler(pickle.Unpickler):
    """``pickle.Unpickler`` with torch's names mapped to omnitensor's and storages read
    through ``persistent_load``."""

    def __init__(self, file: Any, ctx: LoadContext,
                 persistent_load: Callable[[Any], Any] | None) -> None:
        super().__init__(file, encoding="utf-8")
        # torch's names only: anything else a trusted file names is what it names
        self.table = {k: v for k, v in allowed_globals(ctx).items() if k.startswith("torch.")}
        self.ctx = ctx
        self._persistent = persistent_load

    def persistent_load(self, pid: Any) -> Any:
        if self._persistent is None:
            raise pickle.UnpicklingError("a persistent id where none is expected")
        return self._persistent(pid)

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        entry = self.table.get(f"{module}.{name}")
        if entry is not None:
            return entry[1]
        if module == "torch" or module.startswith("torch."):
            error = unsupported_global(f"{module}.{name}", self.ctx.name)
            if error is not None:
                raise error
            return self._omnitensor_name(module, name)
        return super().find_class(module, name)  # imports the module: runs its code

    def _omnitensor_name(self, module: str, name: str) -> Any:
        target = "omnitensor" + module[len("torch"):]
        try:
            obj: Any = importlib.import_module(target)
            for part in name.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError):
            raise CheckpointError(
                f"{self.ctx.name} names {module}.{name}, and omnitensor has no "
                f"{target}.{name} to stand for it") from None
        return obj
