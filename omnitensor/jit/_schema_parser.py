"""The schema language: a recursive-descent parser (c10's SchemaParser and
SchemaTypeParser) and the printer (c10's FunctionSchema ``operator<<``).

Grammar: ``name[.overload](arg, ..., *, kwarg, ...) -> ret | (ret, ...)``; an argument is
``type [name] [= default]``; a type is a base type or ``(T1, T2)`` tuple, followed by an
alias annotation ``(a)``/``(a!)``/``(a -> *)`` and any of the suffixes ``[]``, ``[N]``,
``?``, each of which may carry an annotation of its own.
"""
from __future__ import annotations

import re
from typing import Any

from . import types as T
from .schema import AliasInfo, Argument, FunctionSchema

_TOKEN = re.compile(r"""\s*(?:(?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
    |(?P<num>-?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?))
    |(?P<op>\.\.\.|->|::|[()\[\],*?!|=.])
    |(?P<id>[A-Za-z_][A-Za-z0-9_]*))""", re.X)


def _named(name: str, kind: str) -> T.Type:
    return T._Named(name, kind)


def _base_types() -> dict[str, tuple[T.Type, T.Type]]:
    """Base type name -> (type at run time, type the schema names)."""
    plain = {"Tensor": T.TensorType.get(), "int": T.IntType.get(), "float": T.FloatType.get(),
             "bool": T.BoolType.get(), "str": T.StringType.get(),
             "complex": T.ComplexType.get(), "Scalar": T.NumberType.get(),
             "Device": T.DeviceObjType.get(), "Stream": T.StreamObjType.get(),
             "Any": T.AnyType.get(), "NoneType": T.NoneType.get(),
             "Generator": _named("Generator", "GeneratorType"),
             "Storage": _named("Storage", "StorageType"),
             "QScheme": _named("QScheme", "QSchemeType"),
             "AnyEnumType": _named("AnyEnumType", "AnyEnumType"),
             "AnyClassType": _named("AnyClassType", "AnyClassType"),
             "ConstQuantizerPtr": T.IntType.get(), "SymBool": T.SymBoolType.get()}
    out = {k: (v, v) for k, v in plain.items()}
    for name in ("ScalarType", "Layout", "MemoryFormat"):  # enums passed as ints
        out[name] = (T.IntType.get(), _named(name, name + "Type"))
    out["SymInt"] = (T.IntType.get(), T.SymIntType.get())
    return out


class SchemaParser:
    """One schema string, parsed left to right."""

    def __init__(self, text: str) -> None:
        self.text, self.toks, self.i = text, self._lex(text), 0
        self.bases = _base_types()

    def _lex(self, text: str) -> list[tuple[str, str]]:
        toks, pos = [], 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                if text[pos:].strip() == "":
                    break
                raise RuntimeError(f"schema parse error at {pos}: {text!r}")
            kind = m.lastgroup or "op"
            toks.append((kind, m.group(kind)))
            pos = m.end()
        return toks

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.toks[j][1] if j < len(self.toks) else ""

    def next(self) -> str:
        tok = self.peek()
        if not tok:
            raise RuntimeError(f"unexpected end of schema: {self.text!r}")
        self.i += 1
        return tok

    def expect(self, tok: str) -> None:
        got = self.next()
        if got != tok:
            raise RuntimeError(f"expected {tok!r} but found {got!r} in schema {self.text!r}")

    def accept(self, tok: str) -> bool:
        if self.peek() == tok:
            self.i += 1
            return True
        return False

    def schema(self) -> FunctionSchema:
        name = self.next()
        while self.accept("::"):
            name += "::" + self.next()
        overload = self.next() if self.accept(".") else ""
        args, vararg = self.arg_list(is_return=False)
        self.expect("->")
        if self.peek() == "(":
            rets, varret = self.arg_list(is_return=True)
        elif self.accept("..."):
            rets, varret = [], True
        else:
            rets, varret = [self.argument(True, False)], False
        if self.peek():
            raise RuntimeError(f"trailing text {self.peek()!r} in schema {self.text!r}")
        return FunctionSchema(name, overload, args, rets, vararg, varret)

    def arg_list(self, is_return: bool) -> tuple[list[Argument], bool]:
        self.expect("(")
        out: list[Argument] = []
        kwarg_only = variadic = False
        while not self.accept(")"):
            if out or kwarg_only:
                self.expect(",")
            if self.accept("..."):
                variadic = True
            elif not is_return and self.accept("*"):
                kwarg_only = True
            else:
                out.append(self.argument(is_return, kwarg_only))
        return out, variadic

    def argument(self, is_return: bool, kwarg_only: bool) -> Argument:
        fake, real, alias, n = self.parse_type()
        name = ""
        if self.toks[self.i:self.i + 1] and self.toks[self.i][0] == "id":
            name = self.next()
        elif not is_return:
            raise RuntimeError(f"argument without a name in schema {self.text!r}")
        default, has_default = None, False
        if not is_return and self.accept("="):
            default, has_default = self.default(fake, n), True
        return Argument(name, fake, n, default, kwarg_only, alias, real_type=real,
                        has_default=has_default)

    def parse_type(self) -> tuple[T.Type, T.Type, AliasInfo | None, int | None]:
        fake, real = self.base_type()
        alias = self.alias()
        n: int | None = None
        while self.peek() in ("[", "?"):
            if self.accept("?"):
                fake, real = T.OptionalType(fake), T.OptionalType(real)
            else:
                self.next()
                n = int(self.next()) if self.peek() != "]" else None
                self.expect("]")
                fake, real = T.ListType(fake), T.ListType(real)
                if alias is not None:  # the element's annotation, held by the list's
                    alias = AliasInfo((), (), alias.is_write, [alias])
            inner = self.alias()
            if inner is not None:
                alias = inner if alias is None else AliasInfo(
                    inner._before, inner._after, inner.is_write, alias._contained)
        return fake, real, alias, n

    def base_type(self) -> tuple[T.Type, T.Type]:
        if self.accept("("):
            parts: list[tuple[T.Type, T.Type]] = []
            while not self.accept(")"):
                if parts:
                    self.expect(",")
                fake, real, _, _ = self.parse_type()
                parts.append((fake, real))
            return T.TupleType([p[0] for p in parts]), T.TupleType([p[1] for p in parts])
        name = self.next()
        if name in ("Future", "RRef", "Await"):
            cls = {"Future": T.FutureType, "RRef": T.RRefType, "Await": T.AwaitType}[name]
            self.expect("(")
            fake, real, _, _ = self.parse_type()
            self.expect(")")
            return cls(fake), cls(real)
        if name == "Dict":
            self.expect("(")
            kf, kr, _, _ = self.parse_type()
            self.expect(",")
            vf, vr, _, _ = self.parse_type()
            self.expect(")")
            return T.DictType(kf, vf), T.DictType(kr, vr)
        if name in self.bases:
            return self.bases[name]
        if name == "__torch__":
            while self.accept("."):
                name += "." + self.next()
            cls_type = T.ClassType(name)
            return cls_type, cls_type
        if name[:1].islower():  # a type variable: t, t1, tVal
            var = _named(name, "VarType")
            return var, var
        raise RuntimeError(f"unknown type specifier {name!r} in schema {self.text!r}")

    def alias(self) -> AliasInfo | None:
        """An annotation ``(a)``, ``(a!)``, ``(a|b -> *)`` if one comes next."""
        if self.peek() != "(":
            return None
        self.next()
        before = self.alias_set()
        write = self.accept("!")
        after = self.alias_set() if self.accept("->") else None
        write = self.accept("!") or write
        self.expect(")")
        return AliasInfo(before, after, write)

    def alias_set(self) -> list[str]:
        names = [self.next()]
        while self.accept("|"):
            names.append(self.next())
        return names

    def default(self, fake: T.Type, n: int | None) -> Any:
        value = self.literal()
        return convert_default(value, fake, n)

    def literal(self) -> Any:
        kind, tok = self.toks[self.i] if self.i < len(self.toks) else ("", "")
        if tok == "[":
            self.next()
            items: list[Any] = []
            while not self.accept("]"):
                if items:
                    self.expect(",")
                items.append(self.literal())
            return items
        self.next()
        if kind == "str":
            return _unquote(tok)
        if kind == "num":
            return _number(tok)
        if tok in ("True", "False", "None"):  # torch takes no inf or nan here either
            return {"True": True, "False": False, "None": None}[tok]
        raise RuntimeError(f"bad default value {tok!r} in schema {self.text!r}")


def _number(tok: str) -> int | float:
    if re.fullmatch(r"-?\d+", tok):
        return int(tok)
    return float(tok)


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "b": "\b",
            "\\": "\\", "'": "'", '"': '"', "0": "\0"}


def _unquote(tok: str) -> str:
    body, out, i = tok[1:-1], [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            out.append(_ESCAPES.get(body[i + 1], body[i + 1]))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def convert_default(value: Any, fake: T.Type, n: int | None) -> Any:
    """A default literal as the value torch stores: floats for ``float`` (and its lists),
    a scalar repeated ``N`` times for a sized list (``int[2] stride=1``)."""
    if value is None:
        return None
    if isinstance(fake, T.ListType):
        if not isinstance(value, list):
            if n is None:  # a scalar default needs the list's size, as in int[2] stride=1
                raise RuntimeError(f"scalar default {value!r} for a list without a size")
            value = [value] * n
        return [convert_default(v, fake.getElementType(), None) for v in value]
    if isinstance(fake, T.FloatType) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def format_double(v: float) -> str:
    """c10's printDouble: 17 significant digits, and a ``.`` on whole numbers."""
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    text = "%.17g" % v
    return text + "." if re.fullmatch(r"-?\d+", text) else text


_QUOTE = {"\\": "\\\\", '"': '\\"', "'": "\\'", "\n": "\\n", "\t": "\\t", "\f": "\\f",
          "\v": "\\v", "\r": "\\r", "\a": "\\a", "\b": "\\b"}


def format_value(v: Any) -> str:
    """A default value as the schema prints it."""
    if v is None or isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return format_double(v)
    if isinstance(v, str):
        return '"' + "".join(_QUOTE.get(c, c) for c in v) + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(format_value(x) for x in v) + "]"
    return str(v)


def _schema_type(t: T.Type) -> str:
    """A type as schemas write it: ``t.str()``, except that Future, RRef and Await take
    their element in parentheses there."""
    if isinstance(t, (T.FutureType, T.RRefType, T.AwaitType)):
        return f"{t._name}({_schema_type(t.getElementType())})"
    if isinstance(t, T.OptionalType):
        return _schema_type(t.getElementType()) + "?"
    if isinstance(t, T.ListType):
        return _schema_type(t.getElementType()) + "[]"
    if isinstance(t, T.DictType):
        return f"Dict({_schema_type(t.getKeyType())}, {_schema_type(t.getValueType())})"
    if isinstance(t, T.TupleType):
        return "(" + ", ".join(_schema_type(e) for e in t.elements()) + ")"
    return t.str()


def _type_text(arg: Argument) -> str:
    real = arg.real_type
    is_opt = isinstance(real, T.OptionalType)
    inner = real.getElementType() if is_opt else real  # type: ignore[attr-defined]
    alias = arg.alias_info
    if isinstance(inner, T.ListType):
        text = _schema_type(inner.getElementType())
        if alias is not None and alias._contained:
            text += str(alias._contained[0])
        text += f"[{'' if arg.N is None else arg.N}]"
    else:
        text = _schema_type(inner)
    if alias is not None and alias._before:
        text += str(alias)
    return text + ("?" if is_opt else "")


def format_argument(arg: Argument) -> str:
    """One argument as c10 prints it: the schema's own type (``ScalarType``, ``SymInt[2]``)."""
    text = _type_text(arg) + (f" {arg.name}" if arg.name else "")
    if not arg.has_default_value():
        return text
    value, real = arg.default_value, arg.real_type
    if (isinstance(real, T.ListType) and real.getElementType().kind() == "IntType"
            and isinstance(value, list) and len(value) > 1
            and all(v == value[0] for v in value)):
        return f"{text}={format_value(value[0])}"  # as native_functions.yaml writes int[2]
    return f"{text}={format_value(value)}"


def format_schema(s: FunctionSchema) -> str:
    """The schema as c10 prints it (and parses it back)."""
    name = s.name + (f".{s.overload_name}" if s.overload_name else "")
    args: list[str] = []
    kw = False
    for a in s.arguments:
        if a.kwarg_only and not kw:
            args.append("*")
            kw = True
        args.append(format_argument(a))
    if s.is_vararg:
        args.append("...")
    rets = [format_argument(r) for r in s.returns] + (["..."] if s.is_varret else [])
    single = (len(s.returns) == 1 and not s.is_varret) or (not s.returns and s.is_varret)
    if single and rets[0].startswith("("):
        single = False  # ((str, t)[]) keeps its parentheses, or it would read as a tuple
    ret_text = rets[0] if single else "(" + ", ".join(rets) + ")"
    return f"{name}({', '.join(args)}) -> {ret_text}"
