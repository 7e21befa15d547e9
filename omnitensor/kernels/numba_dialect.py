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

from .dialect import Language
from .exprs import checked_names, ctype_of, np_of, result_dtype, subst
from .primitives import PRIMITIVES

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

#: the Python template of each op and the dtype kinds (bool, signed, unsigned, float) it
#: is rendered for: every op on floats, the integer-exact ones on integers and bool; complex
#: and float16 are not rendered for numba (the cpu fused path keeps NumPy for them)
_TEMPLATES: dict[str, str] = {p.name: p.numba for p in PRIMITIVES}
_NUMBA_KINDS: dict[str, str] = {p.name: p.numba_kinds for p in PRIMITIVES}


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
        ptmpl = _TEMPLATES[op].replace(
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
