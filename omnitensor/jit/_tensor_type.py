"""TorchScript's ``Tensor`` type (``torch.TensorType``), with the dtype, sizes, strides and
device ``TensorType.create_from_tensor`` records."""
from __future__ import annotations

import builtins
from typing import Any, Sequence

from ..core.dtypes import scalar_type_name
from .types import Type, _Singleton

class TensorType(_Singleton):
    """TorchScript's ``Tensor``; ``create_from_tensor`` also records a tensor's dtype,
    sizes, strides, device and requires_grad, and is then a subtype of the plain type."""
    _kind, _name = "TensorType", "Tensor"

    def __init__(self, dtype: Any = None, sizes: Sequence[int] | None = None,
                 strides: Sequence[int] | None = None, device: Any = None,
                 requires_grad: bool | None = None) -> None:
        self._dtype, self._device, self._grad = dtype, device, requires_grad
        self._sizes = None if sizes is None else [int(s) for s in sizes]
        self._strides = None if strides is None else [int(s) for s in strides]

    @staticmethod
    def create_from_tensor(tensor: Any) -> TensorType:
        return TensorType(tensor.dtype, tuple(tensor.shape), tuple(tensor.stride()),
                          tensor.device, bool(tensor.requires_grad))

    @staticmethod
    def getInferred() -> TensorType:
        return TensorType.get()

    def _key(self) -> tuple:
        return (self._kind, str(self._dtype), self._sizes, self._strides,
                str(self._device), self._grad)

    def isSubtypeOf(self, other: Type) -> bool:
        if isinstance(other, TensorType) and other == TensorType.get():
            return True
        return super().isSubtypeOf(other)

    def str(self) -> builtins.str:
        if self._dtype is None or self._sizes is None:
            return "Tensor"
        dims = ", ".join(str(s) for s in self._sizes)
        return (f"{self.scalarType()}({dims}, strides={self._strides}, "
                f"requires_grad={int(bool(self._grad))}, device={self._device})")

    def dim(self) -> int | None:
        return None if self._sizes is None else len(self._sizes)

    def sizes(self) -> list[int] | None:
        return self._sizes

    def strides(self) -> list[int] | None:
        return self._strides

    def scalarType(self) -> builtins.str | None:
        if self._dtype is None:
            return None
        return scalar_type_name(self._dtype)

    def dtype(self) -> Any:
        return self._dtype

    def device(self) -> Any:
        return self._device

    def requires_grad(self) -> bool:
        return True if self._grad is None else self._grad

    def undefined(self) -> bool | None:
        return False if self._sizes is None else None

    def contiguous(self) -> TensorType:
        if self._sizes is None:
            return self
        strides: list[int] = []
        acc = 1
        for s in reversed(self._sizes):
            strides.insert(0, acc)
            acc *= max(s, 1)
        return TensorType(self._dtype, self._sizes, strides, self._device, self._grad)
