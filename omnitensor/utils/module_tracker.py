"""``omnitensor.utils.module_tracker``: torch's ``ModuleTracker`` (which modules are running).

Inside ``with ModuleTracker() as mt:``, ``mt.parents`` is the set of the modules whose
forward is running, named as torch names them: ``"Global"``, the root module's class name,
then dotted attribute paths (``"Net.fc1"``). Backward is not tracked (``is_bw`` is False).
"""
from __future__ import annotations

from typing import Any

__all__ = ["ModuleTracker"]


class ModuleTracker:
    """Track the running modules (a context manager)."""

    wants_modules = True  # a torch_ops listener of module calls only

    def __init__(self) -> None:
        self.parents: set[str] = {"Global"}
        self.is_bw = False
        self._stack: list[tuple[Any, str]] = []

    def _name(self, module: Any) -> str:
        if not self._stack:
            return type(module).__name__
        parent, name = self._stack[-1]
        for attr, child in getattr(parent, "_modules", {}).items():
            if child is module:
                return f"{name}.{attr}"
        return f"{name}.{type(module).__name__}"

    def module_enter(self, module: Any) -> Any:
        name = self._name(module)
        self._stack.append((module, name))
        self.parents.add(name)
        return name

    def module_exit(self, name: Any) -> None:
        if self._stack and self._stack[-1][1] == name:
            self._stack.pop()
        if name not in (n for _m, n in self._stack):
            self.parents.discard(name)

    def enter(self, name: str, args: tuple, kwargs: dict, kind: str = "op") -> None:
        return None

    def exit(self, token: Any, result: Any) -> None:
        pass

    def __enter__(self) -> "ModuleTracker":
        from ..profiler import torch_ops
        torch_ops.add_listener(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        from ..profiler import torch_ops
        torch_ops.remove_listener(self)
