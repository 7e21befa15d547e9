"""Dtype rules of elementwise ops: (input dtypes) -> (compute dtype, result dtype).

Each rule is written once here and memoised per dtype pair by the op that uses it. A rule
raises :class:`DTypeError` naming the op, the dtypes given and the accepted ones.
"""
from __future__ import annotations

from typing import Any

from ...errors import DTypeError
from ..dtypes import DType, bool_, get_default_dtype, int64, promote_types


def _reject(op: str, dtypes: tuple[DType, ...], accepted: str) -> DTypeError:
    given = ", ".join(d.name for d in dtypes)
    return DTypeError(f"{op}: not supported for dtype {given}; it accepts {accepted}")


def to_float(d: DType) -> DType:
    """torch's int-to-float rule: floating and complex dtypes stay, bool and integers
    compute in the default float dtype."""
    return d if d.kind in "fc" else get_default_dtype()


def floating(x: Any) -> Any:
    """Tensor ``x`` in a floating dtype: floating and complex tensors stay, bool and
    integer ones become the default float dtype (torch's rule for float-only ops)."""
    return x if x.dtype.kind in "fc" else x.to(get_default_dtype())


# ------------------------------------------------------------------------- unary rules
def u_float(op: str, d: DType) -> tuple[DType, DType]:
    """Transcendental functions: ints and bools compute in the default float (torch)."""
    c = to_float(d)
    return c, c


def u_real_float(op: str, d: DType) -> tuple[DType, DType]:
    if d.kind == "c":
        raise _reject(op, (d,), "real (non-complex) dtypes")
    c = to_float(d)
    return c, c


def u_numeric(op: str, d: DType) -> tuple[DType, DType]:
    if d is bool_:
        raise _reject(op, (d,), "numeric dtypes (not bool); use logical_not for bool")
    return d, d


def u_sign(op: str, d: DType) -> tuple[DType, DType]:
    """sign: bool tensors are their own sign (torch)."""
    return d, d


def u_square(op: str, d: DType) -> tuple[DType, DType]:
    """square: a bool tensor squares as int64, as torch's ``pow(x, 2)`` promotes it."""
    return (int64, int64) if d is bool_ else (d, d)


def u_abs(op: str, d: DType) -> tuple[DType, DType]:
    if d is bool_:
        raise _reject(op, (d,), "numeric dtypes (not bool)")
    return d, d.to_real()


def u_real_numeric(op: str, d: DType) -> tuple[DType, DType]:
    """relu, floor, ceil, trunc: real numbers only (torch refuses bool, as the Array API
    leaves it out)."""
    if d.kind == "c" or d is bool_:
        raise _reject(op, (d,), "real numeric dtypes (not complex, not bool)")
    return d, d


def u_any(op: str, d: DType) -> tuple[DType, DType]:
    return d, d


def u_predicate(op: str, d: DType) -> tuple[DType, DType]:
    return d, bool_


def u_real_predicate(op: str, d: DType) -> tuple[DType, DType]:
    if d.kind == "c":
        raise _reject(op, (d,), "real dtypes (not complex)")
    return d, bool_


def u_logical(op: str, d: DType) -> tuple[DType, DType]:
    return bool_, bool_


def u_integer_or_bool(op: str, d: DType) -> tuple[DType, DType]:
    if d.kind not in "biu":
        raise _reject(op, (d,), "integer and bool dtypes")
    return d, d


def u_complex_part(op: str, d: DType) -> tuple[DType, DType]:
    return d, d.to_real()


# ------------------------------------------------------------------------ binary rules
def b_arith(op: str, a: DType, b: DType) -> tuple[DType, DType]:
    r = promote_types(a, b)
    return r, r


def b_subtract(op: str, a: DType, b: DType) -> tuple[DType, DType]:
    """Numbers only: a bool operand (a tensor or a Python bool) is refused, as in torch and
    the Array API, rather than promoted (``mask - 1`` is usually a mistaken ``~mask``)."""
    if a is bool_ and b is bool_:
        raise _reject(op, (a, b), "numeric dtypes; for bool tensors use logical_xor (^)")
    if a is bool_ or b is bool_:
        raise _reject(op, (a, b), "numeric dtypes (not bool); to invert a mask use "
                                  "logical_not (~)")
    r = promote_types(a, b)
    return r, r


def b_true_divide(op: str, a: DType, b: DType) -> tuple[DType, DType]:
    r = to_float(promote_types(a, b))
    return r, r


def b_real_numeric(op: str, a: DType, b: DType) -> tuple[DType, DType]:
    r = promote_types(a, b)
    if r.kind == "c":
        raise _reject(op, (a, b), "real dtypes (not complex)")
    if r is bool_:
        raise _reject(op, (a, b), "numeric dtypes (not bool)")
    return r, r


def b_real(op: str, a: DType, b: DType) -> tuple[DType, DType]:
    r = promote_types(a, b)
    if r.kind == "c":
        raise _reject(op, (a, b), "real dtypes (not complex)")
    return r, r


def b_real_float(op: str, a: DType, b: DType) -> tuple[DType, DType]:
    r = promote_types(a, b)
    if r.kind == "c":
        raise _reject(op, (a, b), "real dtypes (not complex)")
    r = to_float(r)
    return r, r


def b_pow(op: str, a: DType, b: DType) -> tuple[DType, DType]:
    r = promote_types(a, b)
    if r is bool_:
        raise _reject(op, (a, b), "numeric dtypes (not bool)")
    return r, r


def b_equality(op: str, a: DType, b: DType) -> tuple[DType, DType]:
    return promote_types(a, b), bool_


def b_ordering(op: str, a: DType, b: DType) -> tuple[DType, DType]:
    r = promote_types(a, b)
    if r.kind == "c":
        raise _reject(op, (a, b), "real dtypes (complex numbers are not ordered)")
    return r, bool_


def b_logical(op: str, a: DType, b: DType) -> tuple[DType, DType]:
    return bool_, bool_


def b_bitwise(op: str, a: DType, b: DType) -> tuple[DType, DType]:
    r = promote_types(a, b)
    if r.kind not in "biu":
        raise _reject(op, (a, b), "integer and bool dtypes")
    return r, r


def b_shift(op: str, a: DType, b: DType) -> tuple[DType, DType]:
    r = promote_types(a, b)
    if r.kind not in "iu":
        raise _reject(op, (a, b), "integer dtypes")
    return r, r
