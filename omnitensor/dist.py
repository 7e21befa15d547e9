"""``omnitensor.dist``: the old name of :mod:`omnitensor.distributed`, kept as an alias.

Importing it binds ``sys.modules["omnitensor.dist"]`` to the ``omnitensor.distributed``
package itself (``omnitensor.dist is omnitensor.distributed``), and a finder maps every
``omnitensor.dist.X`` to the module object ``omnitensor.distributed.X``, so
``import omnitensor.dist.ddp``, ``python -m omnitensor.dist.run`` and the
``omnitensor.dist.run:main`` entry point keep working without a second copy of any module
(one copy matters: the process group lives in module state).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

_OLD = __name__                                    # "omnitensor.dist"
_NEW = __name__.rpartition(".")[0] + ".distributed"


class _AliasLoader(importlib.abc.Loader):
    """Loads ``omnitensor.dist.X`` as the already-importable ``omnitensor.distributed.X``."""

    def __init__(self, real_name: str, real_spec: importlib.machinery.ModuleSpec) -> None:
        self.real_name = real_name
        self.real_spec = real_spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.real_name)

    def exec_module(self, module: ModuleType) -> None:
        pass  # the real module already ran

    def get_code(self, fullname: str):  # runpy (``python -m omnitensor.dist.run``) asks
        return self.real_spec.loader.get_code(self.real_name)  # type: ignore[union-attr]

    def is_package(self, fullname: str) -> bool:
        return self.real_spec.submodule_search_locations is not None


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(_OLD + "."):
            return None
        real = _NEW + fullname[len(_OLD):]
        real_spec = importlib.util.find_spec(real)
        if real_spec is None:
            return None
        return importlib.machinery.ModuleSpec(
            fullname, _AliasLoader(real, real_spec), origin=real_spec.origin,
            is_package=real_spec.submodule_search_locations is not None)


if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _AliasFinder())

sys.modules[_OLD] = importlib.import_module(_NEW)
