"""TorchScript's type objects (``torch.Type``, ``torch.IntType``, ``torch.ListType``...):
the values libraries read from ``torch.parse_schema`` arguments and write in annotations.

omnitensor.jit traces to its own IR, so these types drive no compiler; they carry torch's
names, printed forms, subtype rules and equality. Two printed forms, as in c10:
``str(t)``/``annotation_str`` is the Python annotation (``List[int]``, ``Optional[int]``),
``t.str()`` the schema form (``int[]``, ``int?``, ``Dict(str, int)``).
"""
from __future__ import annotations

import builtins
from typing import Any, Sequence

#: c10's TypeKind order (C10_FORALL_TYPES): a Union lists its members in this order
_KIND_ORDER = (
    "AnyType", "EnumType", "AnyEnumType", "TensorType", "StorageType", "TupleType",
    "ListType", "DictType", "NumberType", "FloatType", "ComplexType", "FutureType",
    "AwaitType", "RRefType", "IntType", "NoneType", "StringType", "GeneratorType",
    "QuantizerType", "BoolType", "OptionalType", "VarType", "DeviceObjType", "StreamObjType",
    "FunctionType", "ClassType", "PyObjectType", "CapsuleType", "InterfaceType",
    "QSchemeType", "ScalarTypeType", "LayoutType", "MemoryFormatType", "AnyListType",
    "AnyTupleType", "AnyClassType", "SymIntType", "SymFloatType", "SymBoolType",
    "UnionType", "DynamicType")
_RANK = {k: i for i, k in enumerate(_KIND_ORDER)}


class Type:
    """Base of every TorchScript type. Types compare structurally and, as torch's, are
    unhashable."""
    _kind = "Type"
    _name = ""

    def str(self) -> builtins.str:
        """The schema form (``int[]``, ``Tensor?``)."""
        return self._name

    @property
    def annotation_str(self) -> builtins.str:
        """The Python annotation form (``List[int]``, ``Optional[Tensor]``)."""
        return self._name

    def kind(self) -> builtins.str:
        return self._kind

    def containedTypes(self) -> list[Type]:
        return []

    def _key(self) -> tuple:
        return (self._kind, self._name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Type):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> builtins.str:
        return self.annotation_str

    def __repr__(self) -> builtins.str:
        return self.annotation_str

    def isSubtypeOf(self, other: Type) -> bool:
        """c10's rule: every type is a subtype of Any and of itself, of ``Optional[T]`` and
        of a Union when it is a subtype of ``T`` or of one member."""
        if other.kind() == "AnyType" or self == other:
            return True
        if isinstance(other, UnionType):
            return any(self.isSubtypeOf(t) for t in other.containedTypes())
        return False

    def is_interface_type(self) -> bool:
        return False

    # Tensor-shape queries answer None on non-tensor types, as torch's do
    def dim(self) -> int | None:
        return None

    def sizes(self) -> list[int] | None:
        return None

    def strides(self) -> list[int] | None:
        return None

    def scalarType(self) -> builtins.str | None:
        return None

    def dtype(self) -> Any:
        return None

    def device(self) -> Any:
        return None

    def requires_grad(self) -> bool:
        return True

    def undefined(self) -> bool | None:
        return None


class _Singleton(Type):
    """A type without parameters; ``.get()`` gives the one instance."""
    _instance: Any = None

    @classmethod
    def get(cls) -> Any:
        if cls.__dict__.get("_instance") is None:
            cls._instance = cls()
        return cls._instance


class _Number(_Singleton):
    """A scalar kind that is a subtype of ``number``."""

    def isSubtypeOf(self, other: Type) -> bool:
        return other.kind() == "NumberType" or super().isSubtypeOf(other)


class AnyType(_Singleton):
    """TorchScript's ``Any``."""
    _kind, _name = "AnyType", "Any"


class BoolType(_Singleton):
    """TorchScript's ``bool``."""
    _kind, _name = "BoolType", "bool"


class StringType(_Singleton):
    """TorchScript's ``str``."""
    _kind, _name = "StringType", "str"


class DeviceObjType(_Singleton):
    """TorchScript's ``Device``."""
    _kind, _name = "DeviceObjType", "Device"


class StreamObjType(_Singleton):
    """TorchScript's ``Stream``."""
    _kind, _name = "StreamObjType", "Stream"


class PyObjectType(_Singleton):
    """TorchScript's ``PyObject``."""
    _kind, _name = "PyObjectType", "PyObject"


class SymIntType(_Singleton):
    """TorchScript's ``SymInt``."""
    _kind, _name = "SymIntType", "int"

    def str(self) -> builtins.str:
        return "SymInt"


class SymBoolType(_Singleton):
    """TorchScript's ``SymBool``."""
    _kind, _name = "SymBoolType", "bool"

    def str(self) -> builtins.str:
        return "SymBool"


class IntType(_Number):
    """TorchScript's ``int``."""
    _kind, _name = "IntType", "int"


class FloatType(_Number):
    """TorchScript's ``float``."""
    _kind, _name = "FloatType", "float"


class ComplexType(_Number):
    """TorchScript's ``complex``."""
    _kind, _name = "ComplexType", "complex"


class NoneType(_Singleton):
    """TorchScript's ``NoneType``: a subtype of every ``Optional[T]``."""
    _kind, _name = "NoneType", "NoneType"

    def isSubtypeOf(self, other: Type) -> bool:
        return other.kind() == "OptionalType" or super().isSubtypeOf(other)


def _numbers() -> list[Type]:
    return [IntType.get(), FloatType.get(), ComplexType.get()]


class NumberType(_Singleton):
    """TorchScript's ``number`` (schemas say ``Scalar``): int, float or complex; equal to
    the Union of the three."""
    _kind, _name = "NumberType", "number"

    def str(self) -> builtins.str:
        return "Scalar"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, UnionType) and other.kind() == "UnionType":
            return len(other.containedTypes()) == 3 and other._holds_number()
        return isinstance(other, Type) and other.kind() == "NumberType"

    __hash__ = None  # type: ignore[assignment]

    def isSubtypeOf(self, other: Type) -> bool:
        if isinstance(other, UnionType) and other.kind() == "UnionType":
            return other._holds_number()
        return super().isSubtypeOf(other)


class _Named(Type):
    """A schema type known by name only (ScalarType, Layout, Storage, a type variable)."""

    def __init__(self, name: str, kind: str) -> None:
        self._name, self._kind = name, kind


def _flatten(types: Sequence[Type]) -> list[Type]:
    out: list[Type] = []
    for t in types:
        if isinstance(t, UnionType):
            out.extend(_flatten(t._members))
        elif t.kind() == "NumberType":
            out.extend(_numbers())
        else:
            out.append(t)
    return out


def _standardize(types: Sequence[Type]) -> list[Type]:
    """c10's standardizeVectorForUnion: flattened, each type kept only if no other member
    is its supertype, ordered by kind then printed form."""
    flat, kept = _flatten(types), []
    for i, t in enumerate(flat):
        dup = any(t == u for u in flat[:i])
        covered = any(t.isSubtypeOf(u) and not t == u for u in flat)
        if not (dup or covered):
            kept.append(t)
    return sorted(kept, key=lambda t: (_RANK.get(t.kind(), len(_RANK)), t.str()))


class UnionType(Type):
    """``Union[T1, T2...]``: flattened and ordered as torch does; a Union of one type and
    ``NoneType`` is an ``Optional``."""
    _kind = "UnionType"

    def __new__(cls, types: Sequence[Type] = ()) -> Any:
        if cls is UnionType:
            members = _standardize(types)
            nones = [t for t in members if t.kind() == "NoneType"]
            if len(members) == 2 and nones:
                opt = OptionalType([t for t in members if not nones[0] == t][0])
                opt._built = True  # Python calls __init__ again with the member list
                return opt
        return super().__new__(cls)

    def __init__(self, types: Sequence[Type]) -> None:
        self._members = _standardize(types)
        if len(self._members) < 2:
            raise RuntimeError(
                f"After type unification was performed, the Union with the original types "
                f"{[str(t) for t in types]} has the single type "
                f"{self._members[0] if self._members else None}. Use the common supertype "
                "instead of creating a Uniontype")

    def containedTypes(self) -> list[Type]:
        return list(self._members)

    def _key(self) -> tuple:
        return ("UnionType", tuple(t._key() for t in self._members))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NumberType):
            return other == self
        return super().__eq__(other)

    __hash__ = None

    def _holds_number(self) -> bool:
        nums = _numbers()
        return all(any(n == m for m in self._members) for n in nums)

    def _union_str(self, annotation: bool) -> builtins.str:
        # c10's unionStr, with its comma rule: a ", " goes before every printed member
        # after position 0, and before "number" when a member was printed
        number = self._holds_number()
        skip = _numbers() if number else []
        out, printed = [], False
        for i, t in enumerate(self._members):
            if any(t == s for s in skip):
                continue
            out.append((", " if i > 0 else "") + (t.annotation_str if annotation else t.str()))
            printed = True
        if number:
            out.append((", " if printed else "") + ("number" if annotation else "Scalar"))
        return ("Union[" if annotation else "Union(") + "".join(out) + ("]" if annotation
                                                                        else ")")

    @property
    def annotation_str(self) -> builtins.str:
        return self._union_str(True)

    def str(self) -> builtins.str:
        return self._union_str(False)

    def _holds(self, t: Type) -> bool:
        """c10's canHoldType: ``t`` is a subtype of some member (``number``: of all three)."""
        if t.kind() == "NumberType":
            return all(self._holds(n) for n in _numbers())
        return any(t.isSubtypeOf(m) for m in self.containedTypes())

    def isSubtypeOf(self, other: Type) -> bool:
        """Each member is a subtype of some type ``other`` admits (its members; for
        ``Optional[T]``: T and NoneType; for ``number``: int, float, complex)."""
        if other.kind() == "AnyType":
            return True
        if isinstance(other, OptionalType):
            elem = other.getElementType()
            targets = [NoneType.get()] + (_numbers() if elem.kind() == "NumberType" else [elem])
        elif isinstance(other, UnionType):
            targets = other.containedTypes()
        elif other.kind() == "NumberType":
            targets = _numbers()
        else:
            targets = [other]
        return all(any(t.isSubtypeOf(r) for r in targets) for t in self.containedTypes())


class OptionalType(UnionType):
    """``Optional[T]``: the Union of ``T`` and ``NoneType``."""
    _kind = "OptionalType"

    _built = False

    def __init__(self, element: Type) -> None:
        if self._built:
            return
        if isinstance(element, OptionalType):
            element = element.getElementType()
        if element.kind() == "NoneType":
            raise RuntimeError("Optional[NoneType] is NoneType: use NoneType")
        self._elem = element
        self._members = [element, NoneType.get()]

    @staticmethod
    def ofTensor() -> OptionalType:
        return OptionalType(TensorType.get())

    def getElementType(self) -> Type:
        return self._elem

    def containedTypes(self) -> list[Type]:
        return [self._elem]

    def isSubtypeOf(self, other: Type) -> bool:
        if isinstance(other, OptionalType):
            return self._elem.isSubtypeOf(other.getElementType())
        if isinstance(other, UnionType):
            return other._holds(NoneType.get()) and other._holds(self._elem)
        return Type.isSubtypeOf(self, other)

    def _key(self) -> tuple:
        return ("UnionType", tuple(sorted((t._key() for t in self._members), key=repr)))

    @property
    def annotation_str(self) -> builtins.str:
        return f"Optional[{self._elem.annotation_str}]"

    def str(self) -> builtins.str:
        return f"{self._elem.str()}?"


# the containers, the tensor and the named-class types, in modules of their own, re-exported here
from ._container_types import (AwaitType, DictType, FutureType, ListType,  # noqa: E402
                               RRefType, TupleType)
from ._tensor_type import TensorType  # noqa: E402
from ._class_types import ClassType, EnumType, InferredType, InterfaceType  # noqa: E402

__all__ = ["Type", "AnyType", "BoolType", "ComplexType", "DeviceObjType", "DictType",
           "FloatType", "FutureType", "IntType", "ListType", "NoneType", "NumberType",
           "OptionalType", "PyObjectType", "StringType", "TensorType", "TupleType",
           "UnionType", "StreamObjType", "SymIntType", "SymBoolType", "AwaitType", "RRefType",
           "ClassType", "EnumType", "InterfaceType", "InferredType"]
