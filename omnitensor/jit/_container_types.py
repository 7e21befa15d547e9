"""TorchScript's container types: List, Dict, Tuple, Future, Await and RRef."""
from __future__ import annotations

import builtins
from typing import Sequence

from .types import BoolType, ComplexType, FloatType, IntType, StringType, Type

class _Single(Type):
    """A container of one element type."""
    _open, _close = "[", "]"

    def __init__(self, element: Type) -> None:
        self._elem = element

    def getElementType(self) -> Type:
        return self._elem

    def containedTypes(self) -> list[Type]:
        return [self._elem]

    def _key(self) -> tuple:
        return (self._kind, self._elem._key())

    @property
    def annotation_str(self) -> builtins.str:
        return f"{self._name}[{self._elem.annotation_str}]"

    def str(self) -> builtins.str:
        return f"{self._name}{self._open}{self._elem.str()}{self._close}"


class ListType(_Single):
    """``List[T]``; invariant in ``T``."""
    _kind, _name = "ListType", "List"

    def str(self) -> builtins.str:
        return f"{self._elem.str()}[]"

    @staticmethod
    def ofInts() -> ListType:
        return ListType(IntType.get())

    @staticmethod
    def ofFloats() -> ListType:
        return ListType(FloatType.get())

    @staticmethod
    def ofComplexDoubles() -> ListType:
        return ListType(ComplexType.get())

    @staticmethod
    def ofBools() -> ListType:
        return ListType(BoolType.get())

    @staticmethod
    def ofStrings() -> ListType:
        return ListType(StringType.get())

    @staticmethod
    def ofTensors() -> ListType:
        from ._tensor_type import TensorType
        return ListType(TensorType.get())


class _Covariant(_Single):
    def isSubtypeOf(self, other: Type) -> bool:
        if type(other) is type(self):
            return self._elem.isSubtypeOf(other.getElementType())
        return super().isSubtypeOf(other)


class FutureType(_Covariant):
    """``Future[T]``, covariant in ``T``."""
    _kind, _name = "FutureType", "Future"


class AwaitType(_Covariant):
    """``Await[T]``, covariant in ``T``."""
    _kind, _name, _open, _close = "AwaitType", "Await", "(", ")"


class RRefType(_Single):
    """``RRef[T]``."""
    _kind, _name = "RRefType", "RRef"


class DictType(Type):
    """``Dict[K, V]``; invariant."""
    _kind = "DictType"

    def __init__(self, key: Type, value: Type) -> None:
        self._k, self._v = key, value

    def getKeyType(self) -> Type:
        return self._k

    def getValueType(self) -> Type:
        return self._v

    def containedTypes(self) -> list[Type]:
        return [self._k, self._v]

    def _key(self) -> tuple:
        return (self._kind, self._k._key(), self._v._key())

    @property
    def annotation_str(self) -> builtins.str:
        return f"Dict[{self._k.annotation_str}, {self._v.annotation_str}]"

    def str(self) -> builtins.str:
        return f"Dict({self._k.str()}, {self._v.str()})"


class TupleType(Type):
    """``Tuple[T1, T2...]``; covariant member by member."""
    _kind = "TupleType"

    def __init__(self, elements: Sequence[Type]) -> None:
        self._elems = list(elements)

    def elements(self) -> list[Type]:
        return list(self._elems)

    def containedTypes(self) -> list[Type]:
        return list(self._elems)

    def _key(self) -> tuple:
        return (self._kind, tuple(t._key() for t in self._elems))

    @property
    def annotation_str(self) -> builtins.str:
        inner = ", ".join(t.annotation_str for t in self._elems)
        return f"Tuple[{inner or '()'}]"

    def str(self) -> builtins.str:
        return "(" + ", ".join(t.str() for t in self._elems) + ")"

    def isSubtypeOf(self, other: Type) -> bool:
        if isinstance(other, TupleType) and len(other._elems) == len(self._elems):
            if all(a.isSubtypeOf(b) for a, b in zip(self._elems, other._elems)):
                return True
        return super().isSubtypeOf(other)
