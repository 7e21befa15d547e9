"""TorchScript's named types: classes, interfaces, enums, and the result of inference."""
from __future__ import annotations

from typing import Any, Sequence

from .types import Type

class ClassType(Type):
    """A TorchScript class, known by its qualified name (``__torch__.torch.classes...``)."""
    _kind = "ClassType"

    def __init__(self, qualified_name: str) -> None:
        self._name = qualified_name

    def name(self) -> str:
        return self._name.rsplit(".", 1)[-1]

    def qualified_name(self) -> str:
        return self._name

    def method_names(self) -> list[str]:
        return []


class InterfaceType(Type):
    """A TorchScript interface, known by its qualified name; it declares no methods here."""
    _kind = "InterfaceType"

    def __init__(self, qualified_name: str) -> None:
        self._name = qualified_name

    def getMethodNames(self) -> list[str]:
        return []

    def getMethod(self, name: str) -> None:
        return None

    def is_interface_type(self) -> bool:
        return True


class EnumType(Type):
    """A TorchScript enum: its qualified name, value type and (name, value) pairs."""
    _kind = "EnumType"

    def __init__(self, qualified_name: str, value_type: Type, values: Sequence[Any]) -> None:
        self._name, self._value_type, self._values = qualified_name, value_type, list(values)

    def containedTypes(self) -> list[Type]:
        return [self._value_type]


class InferredType:
    """What type inference found: a type, or the reason it found none."""

    def __init__(self, type_or_reason: Type | str) -> None:
        self._type = type_or_reason if isinstance(type_or_reason, Type) else None
        self._reason = "" if self._type is not None else str(type_or_reason)

    def type(self) -> Type:
        if self._type is None:
            raise RuntimeError("Tried to get the type from an InferredType but the type is "
                               f"null. Reason: {self._reason}")
        return self._type

    def success(self) -> bool:
        return self._type is not None

    def reason(self) -> str:
        return self._reason
