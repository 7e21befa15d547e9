"""The one helper behind ``omnitensor.nn.modules.<file>``: torch's import paths for layers
that live in :mod:`omnitensor.nn` (one class, one home; these files only name them)."""
from __future__ import annotations

import sys
from typing import Any, Callable


def reexport(module_name: str, names: list[str]) -> tuple[list[str], Callable[[str], Any]]:
    """Bind each of ``names`` that ``omnitensor.nn`` has into ``module_name``'s namespace;
    return its ``__all__`` (the names bound) and a module ``__getattr__`` that looks again
    (a layer registered later) and otherwise says which torch layer is missing."""
    from ... import nn
    namespace = vars(sys.modules[module_name])
    present = []
    for name in names:
        obj = getattr(nn, name, None)
        if obj is not None:
            namespace[name] = obj
            present.append(name)
    torch_path = "torch" + module_name[len("omnitensor"):]

    def __getattr__(name: str) -> Any:
        obj = getattr(nn, name, None)
        if obj is not None and name in names:
            return obj
        if name in names:
            raise AttributeError(f"{torch_path}.{name} is not implemented in omnitensor yet "
                                 f"(omnitensor.nn has no {name})")
        raise AttributeError(f"module {module_name!r} has no attribute {name!r}")

    return present, __getattr__
