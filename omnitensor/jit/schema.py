"""Operator schemas: ``torch.parse_schema``, ``torch.FunctionSchema``, ``torch.Argument`` and
``torch._C._AliasInfo``, for ATen's schema language
(``aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor``).

Parsing and printing follow c10's SchemaParser and FunctionSchema printer, so a schema
printed by torch parses to the same fields and prints back to the same text. The grammar
and the default-value rules are in ``_schema_parser``.
"""
from __future__ import annotations

from typing import Any, Sequence

from . import types as T


class AliasInfo:
    """An alias annotation: ``(a)`` reads alias set ``a``, ``(a!)`` writes it, ``(a -> *)``
    moves the value into the wildcard set; a list's annotation holds its element's."""

    def __init__(self, before: Sequence[str] = (), after: Sequence[str] | None = None,
                 is_write: bool = False, contained: Sequence[AliasInfo] = ()) -> None:
        self._before = list(before)
        self._after = list(before if after is None else after)
        self._write = bool(is_write)
        self._contained = list(contained)

    @property
    def is_write(self) -> bool:
        return self._write

    @property
    def before_set(self) -> set[str]:
        return set(self._before)

    @property
    def after_set(self) -> set[str]:
        return set(self._after)

    def _key(self) -> tuple:
        return (frozenset(self._before), frozenset(self._after), self._write,
                tuple(c._key() for c in self._contained))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AliasInfo) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        text = "|".join(self._before) + ("!" if self._write else "")
        if set(self._after) != set(self._before):
            text += " -> " + "|".join(self._after)
        return f"({text})"


class Argument:
    """One argument or return of a schema. ``type`` is what the value is at run time
    (``int`` for ``ScalarType``, ``SymInt``, ``Layout``), ``real_type`` what the schema says."""

    def __init__(self, name: str, arg_type: T.Type, N: int | None = None,
                 default_value: Any = None, kwarg_only: bool = False,
                 alias_info: AliasInfo | None = None, *, real_type: T.Type | None = None,
                 has_default: bool | None = None) -> None:
        self.name, self.type, self.N = name, arg_type, None if N is None else int(N)
        self.real_type = arg_type if real_type is None else real_type
        self.default_value = default_value
        self._has_default = default_value is not None if has_default is None else has_default
        self.kwarg_only = bool(kwarg_only)
        self.alias_info = alias_info

    def has_default_value(self) -> bool:
        return self._has_default

    @property
    def is_write(self) -> bool:
        return self.alias_info is not None and self.alias_info.is_write

    @property
    def is_out(self) -> bool:
        """An ``out=`` argument: keyword-only and written."""
        return self.kwarg_only and self.is_write

    def _backward_compatible_with(self, old: Argument) -> bool:
        """c10's Argument::isBackwardCompatibleWith: same name, size and aliasing, not newly
        keyword-only, a type at least as general, and the old default kept."""
        if (self.name, self.N, self.alias_info) != (old.name, old.N, old.alias_info):
            return False
        if self.kwarg_only and not old.kwarg_only:
            return False
        if not old.type.isSubtypeOf(self.type):
            return False
        return not old._has_default or (
            self._has_default and repr(self.default_value) == repr(old.default_value))

    def _key(self) -> tuple:
        alias = None if self.alias_info is None else self.alias_info._key()
        return (self.name, self.real_type.str(), self.N, self._has_default,
                repr(self.default_value), self.kwarg_only, alias)

    def __str__(self) -> str:
        from ._schema_parser import format_argument
        return format_argument(self)


class FunctionSchema:
    """A parsed operator schema: ``name`` (``aten::add``), ``overload_name`` (``Tensor``),
    ``arguments``, ``returns``, and whether either list ends in ``...``."""

    def __init__(self, name: str, overload_name: str, arguments: Sequence[Argument],
                 returns: Sequence[Argument], is_vararg: bool = False,
                 is_varret: bool = False) -> None:
        self.name, self.overload_name = name, overload_name
        self.arguments, self.returns = list(arguments), list(returns)
        self.is_vararg, self.is_varret = bool(is_vararg), bool(is_varret)
        seen_default = False
        for a in self.arguments:  # c10's checkSchema
            if seen_default and not a.kwarg_only and not a._has_default:
                raise RuntimeError("Non-default positional argument follows default argument. "
                                   f"Parameter {a.name} in {self}")
            seen_default = seen_default or a._has_default

    @property
    def is_mutable(self) -> bool:
        """Whether some argument is written (``Tensor(a!)``)."""
        return any(a.is_write for a in self.arguments)

    def _is_view_op(self) -> bool:
        """Whether some argument is aliased, not written, by the result (``Tensor(a)``)."""
        return any(a.alias_info is not None and not a.alias_info.is_write
                   for a in self.arguments)

    def is_backward_compatible_with(self, old: FunctionSchema) -> bool:
        """c10's rule: a call written against ``old`` still binds to this schema (arguments
        as general, returns as specific, each new argument before the outs defaulted)."""
        if ((self.name, self.overload_name, self.is_vararg, self.is_varret, len(self.returns))
                != (old.name, old.overload_name, old.is_vararg, old.is_varret,
                    len(old.returns)) or len(self.arguments) < len(old.arguments)):
            return False
        if not all(o._backward_compatible_with(n) for o, n in zip(old.returns, self.returns)):
            return False
        old_out, new_out = _first_out(old.arguments), _first_out(self.arguments)
        args, old_args = self.arguments, old.arguments
        if not all(args[i]._backward_compatible_with(old_args[i]) for i in range(old_out)):
            return False
        if not all(args[i]._has_default for i in range(old_out, new_out)):
            return False
        return all(args[i - old_out + new_out]._backward_compatible_with(old_args[i])
                   for i in range(old_out, len(old_args)))

    def _key(self) -> tuple:
        return (self.name, self.overload_name, tuple(a._key() for a in self.arguments),
                tuple(a._key() for a in self.returns), self.is_vararg, self.is_varret)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FunctionSchema) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self.name, self.overload_name, len(self.arguments), len(self.returns)))

    def __str__(self) -> str:
        from ._schema_parser import format_schema
        return format_schema(self)

    __repr__ = __str__


def _first_out(args: Sequence[Argument]) -> int:
    return next((i for i, a in enumerate(args) if a.is_out), len(args))


def parse_schema(schema: str) -> FunctionSchema:
    """Parse an operator schema (``ns::name.overload(args) -> returns``)."""
    from ._schema_parser import SchemaParser
    return SchemaParser(schema).schema()
