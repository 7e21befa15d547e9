"""The elementwise op table as an API: one op's scalar expression over operand expressions,
for any dialect, so fused kernels (``omnitensor.compiler.fusion``) render the same NumPy-exact
formulas the eager OpenCL kernels use.

C dialects (:data:`~.dialect.OPENCL_C`, :data:`~.dialect.CUDA_C`, SYCL) render
:mod:`.ops`' templates; :data:`NUMBA` renders Python source for numba's ``njit`` (NumPy's
scalar ufuncs, which numba implements with NumPy's semantics), each result converted to the
op's result dtype (``np.float32(...)``) so a chain rounds after every op as NumPy does.
Compile it with ``error_model="numpy"`` (division by zero gives inf/nan, not an exception).

    >>> expr("add", np.dtype("float32"), ("x0", "x1"))
    '(x0) + (x1)'

Expressions are in the compute type (float for float16 in C); load with :func:`load`, store
with :func:`store`, put :func:`prelude` and :func:`helpers` of every dtype used once at the
top of the program.
"""
from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from . import ops
from .ctype import BY_NP, CType
from .dialect import OPENCL_C, Dialect
from .elementwise import fill_template, out_type
from .helpers import helpers as _c_helpers

#: the Python/numba "dialect": not a C dialect, recognised by identity
NUMBA = Dialect(
    name="numba", kernel="", func="", glob="", local="", private="", restrict="", gid="",
    lid="", group="", local_size="", barrier="",
    prelude="import math\n\nimport numba\nimport numpy as np\n", vectors=False)

# NumPy's float floor_divide/remainder (npy_divmod): numba's np.floor_divide gives -inf for
# inf // x where NumPy gives nan. Jitted helpers the expressions call (``ot_fdiv(a, b)``).
_NUMBA_FLOAT_HELPERS = """
@numba.njit(error_model="numpy", inline="always")
def ot_fdiv(a, b):
    if b == 0:
        return a / b
    mod = np.fmod(a, b)
    div = (a - mod) / b
    if mod != 0 and (b < 0) != (mod < 0):
        div -= 1
    if div != 0:
        fd = np.floor(div)
        if div - fd > 0.5:
            fd += 1
        return fd
    return np.copysign(div * 0, a / b)


@numba.njit(error_model="numpy", inline="always")
def ot_fmod(a, b):
    mod = np.fmod(a, b)
    if b == 0:
        return mod
    if mod != 0:
        if (b < 0) != (mod < 0):
            mod += b
        return mod
    return np.copysign(mod * 0, b)
"""

UNARY_OPS: tuple[str, ...] = tuple(ops.UNARY)
BINARY_OPS: tuple[str, ...] = tuple(ops.BINARY)

_N1 = {"negative": "-x", "positive": "x", "abs": "np.abs(x)", "square": "x * x",
       "sign": "np.sign(x)", "floor": "np.floor(x)", "ceil": "np.ceil(x)",
       "trunc": "np.trunc(x)", "round": "np.rint(x)", "reciprocal": "{T}(1) / x",
       "isnan": "np.isnan(x)", "isinf": "np.isinf(x)", "isfinite": "np.isfinite(x)",
       "signbit": "np.signbit(x)", "logical_not": "(x == 0)", "bitwise_invert": "~x",
       "conj": "x", "real": "x", "imag": "{T}(0)",
       "sigmoid": "{T}(1) / ({T}(1) + np.exp(-x))", "rsqrt": "{T}(1) / np.sqrt(x)",
       "erf": "math.erf(x)", "erfc": "math.erfc(x)", "log2": "np.log2(x)",
       "log10": "np.log10(x)"}
for _n, _np in [("exp", "exp"), ("expm1", "expm1"), ("log", "log"), ("log1p", "log1p"),
                ("sqrt", "sqrt"), ("sin", "sin"), ("cos", "cos"), ("tan", "tan"),
                ("asin", "arcsin"), ("acos", "arccos"), ("atan", "arctan"), ("sinh", "sinh"),
                ("cosh", "cosh"), ("tanh", "tanh"), ("asinh", "arcsinh"),
                ("acosh", "arccosh"), ("atanh", "arctanh")]:
    _N1[_n] = f"np.{_np}(x)"
_N2 = {"add": "a + b", "subtract": "a - b", "multiply": "a * b", "divide": "a / b",
       "floor_divide": "np.floor_divide(a, b)", "remainder": "np.remainder(a, b)",
       "pow": "np.power(a, b)", "maximum": "np.maximum(a, b)", "minimum": "np.minimum(a, b)",
       "atan2": "np.arctan2(a, b)", "hypot": "np.hypot(a, b)",
       "logaddexp": "np.logaddexp(a, b)", "copysign": "np.copysign(a, b)",
       "nextafter": "np.nextafter(a, b)", "equal": "(a == b)", "not_equal": "(a != b)",
       "less": "(a < b)", "less_equal": "(a <= b)", "greater": "(a > b)",
       "greater_equal": "(a >= b)", "logical_and": "((a != 0) and (b != 0))",
       "logical_or": "((a != 0) or (b != 0))", "logical_xor": "((a != 0) != (b != 0))",
       "bitwise_and": "(a & b)", "bitwise_or": "(a | b)", "bitwise_xor": "(a ^ b)",
       "bitwise_left_shift": "np.left_shift(a, b)",
       "bitwise_right_shift": "np.right_shift(a, b)"}
#: the dtype kinds (bool, signed, unsigned, float) the numba table computes each op for:
#: every op on floats, the integer-exact ones on integers and bool; complex and float16 are
#: not rendered for numba (the cpu fused path keeps NumPy for them)
_NUMBA_KINDS: dict[str, str] = {op: "f" for op in (*_N1, *_N2)}
for _ops, _kinds in (
        (("positive", "abs", "square", "floor", "ceil", "trunc", "round", "isnan", "isinf",
          "isfinite", "logical_not", "conj", "real", "imag", "add", "subtract", "multiply",
          "maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater",
          "greater_equal", "logical_and", "logical_or", "logical_xor"), "biuf"),
        (("negative", "sign", "floor_divide", "remainder"), "iuf"),
        (("bitwise_left_shift", "bitwise_right_shift"), "iu"),
        (("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert"), "biu")):
    for _op in _ops:
        _NUMBA_KINDS[_op] = _kinds


def _np_name(dt: np.dtype) -> str:
    return "bool_" if dt.kind == "b" else dt.name


def _ct(dtype: np.dtype | str) -> CType:
    t = BY_NP.get(np.dtype(dtype))
    if t is None or t.np is None:
        raise KeyError(f"no kernel type for dtype {dtype}")
    return t


def _dt(t: CType) -> np.dtype:
    assert t.np is not None  # _ct only returns value types
    return t.np


def _subst(text: str, names: Sequence[str], operands: Sequence[str]) -> str:
    """Replace the template's operand identifiers (not member accesses like ``a.x``)."""
    table = dict(zip(names, operands))
    return re.sub(r"(?<![.\w])(" + "|".join(names) + r")\b",
                  lambda m: f"({table[m.group(1)]})", text)


def _names(op: str) -> tuple[str, ...]:
    if op in ops.UNARY:
        return ("x",)
    if op in ops.BINARY:
        return ("a", "b")
    raise KeyError(f"{op!r} is not an elementwise op of the table")


def result_dtype(op: str, dtype: np.dtype | str) -> np.dtype:
    """The dtype of ``op``'s result on operands of ``dtype`` (bool for predicates, the real
    dtype for abs/real/imag of complex)."""
    _names(op)
    res = out_type(op, _ct(dtype)).np
    assert res is not None
    return res


def expr(op: str, dtype: np.dtype | str, operands: Sequence[str],
         d: Dialect = OPENCL_C) -> str | None:
    """``op`` of ``operands`` (expressions in ``dtype``'s compute type), or None where the
    op is not computed for ``dtype`` in dialect ``d``. For C dialects the result is in the
    compute type of :func:`result_dtype`; for :data:`NUMBA` it is converted to it."""
    names = _names(op)
    if len(operands) != len(names):
        raise ValueError(f"{op} takes {len(names)} operand(s), got {len(operands)}")
    t = _ct(dtype)
    if d is NUMBA:
        if t.half or t.kind not in _NUMBA_KINDS.get(op, ""):
            return None
        ptmpl = (_N1 if op in ops.UNARY else _N2)[op].replace("{T}", f"np.{_np_name(_dt(t))}")
        bits = 8 * t.itemsize  # NumPy: counts outside [0, bits) give 0 (-1 right of a < 0)
        if op == "bitwise_left_shift":
            ptmpl = f"(np.left_shift(a, b) if 0 <= b < {bits} else a * 0)"
        if op == "bitwise_right_shift":
            ptmpl = f"(np.right_shift(a, b) if 0 <= b < {bits} else (a * 0 - 1 if a < 0 else a * 0))"
        if t.kind == "u" and op == "sign":  # numba's np.sign treats uint8 as signed
            ptmpl = "(x > 0)"
        if t.kind == "f" and op in ("floor_divide", "remainder"):
            ptmpl = "ot_fdiv(a, b)" if op == "floor_divide" else "ot_fmod(a, b)"
        res = result_dtype(op, dtype)
        return f"np.{_np_name(res)}({_subst(ptmpl, names, operands)})"
    table = ops.UNARY if op in ops.UNARY else ops.BINARY
    tmpl = ops.expr(table, op, t.kind)
    if tmpl is None or (t.half and op in ops.NO_HALF):
        return None
    return _subst(fill_template(tmpl, t, d), names, operands)


def helpers(dtype: np.dtype | str, d: Dialect = OPENCL_C) -> str:
    """The helper functions :func:`expr`'s results for ``dtype`` may call (for numba:
    jitted Python functions, after :func:`prelude`; the same text for every float dtype,
    so put it once)."""
    if d is NUMBA:
        return _NUMBA_FLOAT_HELPERS if _ct(dtype).kind == "f" else ""
    return _c_helpers(_ct(dtype), d)


def prelude(d: Dialect = OPENCL_C) -> str:
    """What a program in dialect ``d`` starts with (pragmas, typedefs; imports for numba)."""
    return d.prelude


def compute_type(dtype: np.dtype | str, d: Dialect = OPENCL_C) -> str:
    """The type expressions of ``dtype`` are computed in (``float`` for float16 in C)."""
    t = _ct(dtype)
    if d is NUMBA:
        return f"np.{_np_name(_dt(t))}"
    return t.comp


def storage_type(dtype: np.dtype | str, d: Dialect = OPENCL_C) -> str:
    """The element type of a buffer of ``dtype`` (``half``, or ``ushort`` bits in CUDA)."""
    return d.ty(_ct(dtype).c)


def load(dtype: np.dtype | str, ptr: str, idx: str, d: Dialect = OPENCL_C) -> str:
    """Element ``idx`` of buffer ``ptr`` in the compute type."""
    if d is NUMBA:
        return f"{ptr}[{idx}]"
    return _ct(dtype).load(ptr, idx, d)


def store(dtype: np.dtype | str, ptr: str, idx: str, val: str, d: Dialect = OPENCL_C) -> str:
    """A statement storing compute-type ``val`` at element ``idx`` of ``ptr``."""
    if d is NUMBA:
        return f"{ptr}[{idx}] = {val}"
    t = _ct(dtype)
    return t.store(ptr, idx, f"({t.comp})({val})", d)


def cast(src: np.dtype | str, dst: np.dtype | str, x: str,
         d: Dialect = OPENCL_C) -> str | None:
    """``x`` (in ``src``'s compute type) converted to ``dst``'s compute type as the eager
    cast kernels convert (anything -> bool is ``!= 0``), or None where ``d`` does not render
    the pair (numba: float16 and complex)."""
    ts, td = _ct(src), _ct(dst)
    if d is NUMBA:
        if ts.half or td.half or "c" in (ts.kind, td.kind):
            return None
        if td.kind == "b":
            return f"np.bool_(({x}) != 0)"
        return f"np.{_np_name(_dt(td))}({x})"
    e = ops.cast_expr(ts.kind, td.kind, td.c, td.comp, td.real, d.vec_ctor(td.c))
    return _subst(e, ("x",), (x,))


def where(cond: str, a: str, b: str, d: Dialect = OPENCL_C) -> str:
    """``a`` where ``cond`` (a bool: 0/1 in C) is true, else ``b``."""
    if d is NUMBA:
        return f"(({a}) if ({cond}) else ({b}))"
    return f"(({cond}) ? ({a}) : ({b}))"


def literal(value: object, dtype: np.dtype | str, d: Dialect = OPENCL_C) -> str:
    """The constant ``value`` of ``dtype`` as an expression in its compute type, exact:
    ``value`` is converted to ``dtype`` first (float32 constants round to float32, as NumPy
    converts a Python scalar operand)."""
    t = _ct(dtype)
    dt = _dt(t)
    v = dt.type(value)
    py = d is NUMBA
    if t.kind == "b":
        return ("True" if v else "False") if py else ("1" if v else "0")
    if t.kind == "f":
        f = float(v)
        if f != f:
            return f"np.{dt.name}(np.nan)" if py else "NAN"
        if f in (float("inf"), float("-inf")):
            s = "-" if f < 0 else ""
            return f"{s}np.{dt.name}(np.inf)" if py else f"({s}INFINITY)"
        if py:
            return f"np.{dt.name}({f!r})"
        return f"{f!r}f" if t.comp == "float" else f"(({t.comp}){f!r})"
    if t.kind in "iu":
        return f"np.{dt.name}({int(v)})" if py else f"(({t.comp}){int(v)})"
    raise KeyError(f"no scalar literal for dtype {dt}")
