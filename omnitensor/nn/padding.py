"""Padding layers: ``ConstantPad{1,2,3}d``, ``ZeroPad{1,2,3}d``, ``ReflectionPad{1,2,3}d``,
``ReplicationPad{1,2,3}d``, ``CircularPad{1,2,3}d`` (``F.pad`` with a fixed mode)."""
from __future__ import annotations

from typing import Any

from ..core.tensor import Tensor
from . import functional as F
from .module import Module

__all__ = [f"{kind}Pad{n}d" for kind in ("Constant", "Zero", "Reflection", "Replication",
                                         "Circular") for n in (1, 2, 3)]


class _PadNd(Module):
    _mode = "constant"
    _n = 1

    def __init__(self, padding: Any, value: float = 0.0) -> None:
        super().__init__()
        if isinstance(padding, int):
            padding = (padding,) * (2 * self._n)
        padding = tuple(int(p) for p in padding)
        if len(padding) != 2 * self._n:
            raise ValueError(f"{type(self).__name__}: padding must be an int or "
                             f"{2 * self._n} ints, got {padding}")
        self.padding, self.value = padding, value

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if self._mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"padding={self.padding}" + (f", value={self.value}"
                                            if self._mode == "constant" else "")


def _pad_class(kind: str, mode: str, n: int) -> type:
    doc = f"Pad the last {n} dim(s) of the input ({mode} mode)."
    attrs: dict[str, Any] = {"_mode": mode, "_n": n, "__doc__": doc, "__module__": __name__}
    if kind == "Zero":
        attrs["__init__"] = lambda self, padding: _PadNd.__init__(self, padding, 0.0)
    elif kind == "Constant":
        attrs["__init__"] = lambda self, padding, value: _PadNd.__init__(self, padding, value)
    return type(f"{kind}Pad{n}d", (_PadNd,), attrs)


_KINDS = {"Constant": "constant", "Zero": "constant", "Reflection": "reflect",
          "Replication": "replicate", "Circular": "circular"}
for _kind, _mode in _KINDS.items():
    for _n in (1, 2, 3):
        globals()[f"{_kind}Pad{_n}d"] = _pad_class(_kind, _mode, _n)
