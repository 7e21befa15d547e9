"""Hook handles (torch's ``torch.utils.hooks.RemovableHandle``), handed out by tensors,
graph nodes and modules; ``omnitensor.utils.hooks`` is the public face."""
from __future__ import annotations

from typing import Any

__all__ = ["RemovableHandle"]


class RemovableHandle:
    """Returned by ``register_*hook``; ``remove()`` unregisters the hook."""

    def __init__(self, container: Any, item: Any, key: Any = None) -> None:
        self._container = container
        self._item = item
        self._key = key

    def remove(self) -> None:
        c = self._container
        if c is None:
            return
        if isinstance(c, dict):
            c.pop(self._key, None)
        else:
            try:
                c.remove(self._item)
            except ValueError:
                pass
        self._container = None

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()
