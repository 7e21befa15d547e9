"""The Python "dialect" of the op table: fused kernels on ``cpu`` are Python loop nests
compiled by numba's ``njit`` (``omnitensor.backends.cpu.fused``).

:class:`NumbaPython` answers :class:`~.dialect.Language`'s per-element API in Python: NumPy's
scalar ufuncs, which numba implements with NumPy's semantics, each result converted to the
op's result dtype (``np.float32(...)``) so a chain rounds after every op as NumPy does.
Compile it with ``error_model="numpy"`` (division by zero gives inf/nan, not an exception).
Complex and float16 are not rendered (the cpu fused path keeps NumPy for them).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import ops
from .dialect import Language
from .exprs import checked_names, ctype_of, np_of, result_dtype, subst

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


class NumbaPython(Language):
    """Python source for numba (``cpu``'s fused kernels): a statement per line, no types
    declared, every value a NumPy scalar of its dtype."""

    name = "numba"
    prelude = "import math\n\nimport numba\nimport numpy as np\n"

    def expr(self, op: str, dtype: Any, operands: Sequence[str]) -> str | None:
        names = checked_names(op, operands)
        t = ctype_of(dtype)
        if t.half or t.kind not in _NUMBA_KINDS.get(op, ""):
            return None
        ptmpl = (_N1 if op in ops.UNARY else _N2)[op].replace(
            "{T}", f"np.{_np_name(np_of(t))}")
        bits = 8 * t.itemsize  # NumPy: counts outside [0, bits) give 0 (-1 right of a < 0)
        if op == "bitwise_left_shift":
            ptmpl = f"(np.left_shift(a, b) if 0 <= b < {bits} else a * 0)"
        if op == "bitwise_right_shift":
            ptmpl = (f"(np.right_shift(a, b) if 0 <= b < {bits} else "
                     f"(a * 0 - 1 if a < 0 else a * 0))")
        if t.kind == "u" and op == "sign":  # numba's np.sign treats uint8 as signed
            ptmpl = "(x > 0)"
        if t.kind == "f" and op in ("floor_divide", "remainder"):
            ptmpl = "ot_fdiv(a, b)" if op == "floor_divide" else "ot_fmod(a, b)"
        res = result_dtype(op, dtype)
        return f"np.{_np_name(res)}({subst(ptmpl, names, operands)})"

    def helpers(self, dtype: Any) -> str:
        # jitted Python functions after the prelude; the same text for every float dtype
        return _NUMBA_FLOAT_HELPERS if ctype_of(dtype).kind == "f" else ""

    def compute_type(self, dtype: Any) -> str:
        return f"np.{_np_name(np_of(ctype_of(dtype)))}"

    def storage_type(self, dtype: Any) -> str:
        return self.compute_type(dtype)  # a NumPy array holds the dtype itself

    def load(self, dtype: Any, ptr: str, idx: str) -> str:
        return f"{ptr}[{idx}]"

    def store(self, dtype: Any, ptr: str, idx: str, val: str) -> str:
        return f"{ptr}[{idx}] = {val}"

    def cast(self, src: Any, dst: Any, x: str) -> str | None:
        ts, td = ctype_of(src), ctype_of(dst)
        if ts.half or td.half or "c" in (ts.kind, td.kind):
            return None
        if td.kind == "b":
            return f"np.bool_(({x}) != 0)"
        return f"np.{_np_name(np_of(td))}({x})"

    def where(self, cond: str, a: str, b: str) -> str:
        return f"(({a}) if ({cond}) else ({b}))"

    def literal(self, value: object, dtype: Any) -> str:
        t = ctype_of(dtype)
        dt = np_of(t)
        v = dt.type(value)
        if t.kind == "b":
            return "True" if v else "False"
        if t.kind == "f":
            f = float(v)
            if f != f:
                return f"np.{dt.name}(np.nan)"
            if f in (float("inf"), float("-inf")):
                return f"{'-' if f < 0 else ''}np.{dt.name}(np.inf)"
            return f"np.{dt.name}({f!r})"
        if t.kind in "iu":
            return f"np.{dt.name}({int(v)})"
        raise KeyError(f"no scalar literal for dtype {dt}")


#: the Python dialect (one value: dialects are compared by identity)
NUMBA = NumbaPython()
