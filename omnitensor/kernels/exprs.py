"""The op table's scalar expressions in C (what every C :class:`~.dialect.Dialect` answers
through its per-element API), and what the Python dialect shares with them: the dtype
lookup, the result dtype of an op and the substitution of operands into a template.

Imported by :mod:`.dialect` at its first call (this module builds on :mod:`.ctype`,
:mod:`.helpers` and :mod:`.elementwise`, which import :mod:`.dialect`).
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from . import ops
from .ctype import BY_NP, CType
from .elementwise import fill_template, out_type
from .helpers import helpers as _c_helpers

if TYPE_CHECKING:
    from .dialect import Dialect


def ctype_of(dtype: Any) -> CType:
    """The CType of ``dtype`` (a NumPy dtype or its name); KeyError for none."""
    t = BY_NP.get(np.dtype(dtype))
    if t is None or t.np is None:
        raise KeyError(f"no kernel type for dtype {dtype}")
    return t


def np_of(t: CType) -> np.dtype:
    """The NumPy dtype of value type ``t``."""
    assert t.np is not None  # ctype_of only returns value types
    return t.np


def subst(text: str, names: Sequence[str], operands: Sequence[str]) -> str:
    """Replace the template's operand identifiers (not member accesses like ``a.x``)."""
    table = dict(zip(names, operands))
    return re.sub(r"(?<![.\w])(" + "|".join(names) + r")\b",
                  lambda m: f"({table[m.group(1)]})", text)


def operand_names(op: str) -> tuple[str, ...]:
    """The operand names of ``op``'s templates; KeyError for an op not in the table."""
    if op in ops.UNARY:
        return ("x",)
    if op in ops.BINARY:
        return ("a", "b")
    raise KeyError(f"{op!r} is not an elementwise op of the table")


def checked_names(op: str, operands: Sequence[str]) -> tuple[str, ...]:
    """:func:`operand_names`, checking that ``operands`` has one expression for each."""
    names = operand_names(op)
    if len(operands) != len(names):
        raise ValueError(f"{op} takes {len(names)} operand(s), got {len(operands)}")
    return names


def result_dtype(op: str, dtype: Any) -> np.dtype:
    """The dtype of ``op``'s result on operands of ``dtype`` (bool for predicates, the real
    dtype for abs/real/imag of complex)."""
    operand_names(op)
    res = out_type(op, ctype_of(dtype)).np
    assert res is not None
    return res


def expr(op: str, dtype: Any, operands: Sequence[str], d: Dialect) -> str | None:
    """``op`` of ``operands`` in C dialect ``d`` (in the result's compute type), or None."""
    names = checked_names(op, operands)
    t = ctype_of(dtype)
    table = ops.UNARY if op in ops.UNARY else ops.BINARY
    tmpl = ops.expr(table, op, t.kind)
    if tmpl is None or (t.half and op in ops.NO_HALF):
        return None
    return subst(fill_template(tmpl, t, d), names, operands)


def helpers(dtype: Any, d: Dialect) -> str:
    """The C helper functions :func:`expr`'s results for ``dtype`` may call."""
    return _c_helpers(ctype_of(dtype), d)


def compute_type(dtype: Any) -> str:
    """The C type ``dtype`` is computed in (``float`` for float16)."""
    return ctype_of(dtype).comp


def cast(src: Any, dst: Any, x: str, d: Dialect) -> str:
    """``x`` converted as the eager cast kernels convert (anything -> bool is ``!= 0``)."""
    ts, td = ctype_of(src), ctype_of(dst)
    e = ops.cast_expr(ts.kind, td.kind, td.c, td.comp, td.real, d.vec_ctor(td.c))
    return subst(e, ("x",), (x,))


def literal(value: object, dtype: Any) -> str:
    """The C constant ``value`` of ``dtype`` (converted to ``dtype`` first)."""
    t = ctype_of(dtype)
    v = np_of(t).type(value)
    if t.kind == "b":
        return "1" if v else "0"
    if t.kind == "f":
        f = float(v)
        if f != f:
            return "NAN"
        if f in (float("inf"), float("-inf")):
            return f"({'-' if f < 0 else ''}INFINITY)"
        return f"{f!r}f" if t.comp == "float" else f"(({t.comp}){f!r})"
    if t.kind in "iu":
        return f"(({t.comp}){int(v)})"
    raise KeyError(f"no scalar literal for dtype {np_of(t)}")
