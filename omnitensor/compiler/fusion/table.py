"""Which primitives a fused kernel computes, and their per-element expressions per dialect.

Only what can be rendered with the backends' exact per-element semantics fuses: real
floating dtypes (float32, float64) for arithmetic and math functions, comparisons on
floats, integers and bools, logical ops on bools, ``where`` and the casts whose C and NumPy
semantics agree (anything to float, anything to bool). Integer arithmetic (wrapping rules),
float16/bfloat16 and complex stay primitive calls.

Two dialects: ``"py"`` (Python scalar source for numba, NumPy semantics: ``np.<fn>`` on
float32 scalars stays float32 under numba) and ``"c"`` (OpenCL C / CUDA C expressions over
the compute type; ``maximum``/``minimum`` written out so NaN propagates as in NumPy).
"""
from __future__ import annotations

FLOATS = frozenset(("float32", "float64"))
INTS = frozenset(("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"))
ANY = FLOATS | INTS | {"bool"}

# float math: op -> (python template, C template) over {x} or {a}, {b}
_FLOAT_UNARY = {
    "negative": ("(-{x})", "(-{x})"),
    "positive": ("{x}", "{x}"),
    "abs": ("np.abs({x})", "fabs({x})"),
    "square": ("({x} * {x})", "({x} * {x})"),
    "sqrt": ("np.sqrt({x})", "sqrt({x})"),
    "exp": ("np.exp({x})", "exp({x})"),
    "expm1": ("np.expm1({x})", "expm1({x})"),
    "log": ("np.log({x})", "log({x})"),
    "log1p": ("np.log1p({x})", "log1p({x})"),
    "log2": ("np.log2({x})", "log2({x})"),
    "log10": ("np.log10({x})", "log10({x})"),
    "sin": ("np.sin({x})", "sin({x})"),
    "cos": ("np.cos({x})", "cos({x})"),
    "tan": ("np.tan({x})", "tan({x})"),
    "tanh": ("np.tanh({x})", "tanh({x})"),
    "sinh": ("np.sinh({x})", "sinh({x})"),
    "cosh": ("np.cosh({x})", "cosh({x})"),
    "floor": ("np.floor({x})", "floor({x})"),
    "ceil": ("np.ceil({x})", "ceil({x})"),
    "trunc": ("np.trunc({x})", "trunc({x})"),
    "round": ("np.rint({x})", "rint({x})"),
    "sign": ("np.sign({x})", "({x} > 0 ? ({T})1 : ({x} < 0 ? ({T})-1 : {x}))"),
    "reciprocal": ("({one} / {x})", "(({T})1 / {x})"),
    "sigmoid": ("({one} / ({one} + np.exp(-{x})))", "(({T})1 / (({T})1 + exp(-{x})))"),
}
_FLOAT_BINARY = {
    "add": ("({a} + {b})", "({a} + {b})"),
    "subtract": ("({a} - {b})", "({a} - {b})"),
    "multiply": ("({a} * {b})", "({a} * {b})"),
    "divide": ("({a} / {b})", "({a} / {b})"),
    "pow": ("np.power({a}, {b})", "pow({a}, {b})"),
    # NumPy: NaN if either is NaN, else the larger; on a tie the second operand
    "maximum": ("({a} if ({a} > {b} or {a} != {a}) else {b})",
                "(({a} > {b} || isnan({a})) ? {a} : {b})"),
    "minimum": ("({a} if ({a} < {b} or {a} != {a}) else {b})",
                "(({a} < {b} || isnan({a})) ? {a} : {b})"),
}
_PRED_FLOAT = {
    "isnan": ("np.isnan({x})", "isnan({x})"),
    "isinf": ("np.isinf({x})", "isinf({x})"),
    "isfinite": ("np.isfinite({x})", "isfinite({x})"),
}
_CMP = {"equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=",
        "greater": ">", "greater_equal": ">="}
_LOGICAL = {"logical_and": ("and", "&&"), "logical_or": ("or", "||"),
            "logical_xor": ("!=", "!=")}


def supports(op: str, in_dtype: str, out_dtype: str) -> bool:
    """Whether a fused kernel computes ``op`` on ``in_dtype`` giving ``out_dtype``."""
    if op == "astype":
        return in_dtype in ANY and (out_dtype in FLOATS or out_dtype == "bool")
    if op == "where":
        return out_dtype in ANY
    if op in _FLOAT_UNARY or op in _FLOAT_BINARY:
        return in_dtype in FLOATS and out_dtype == in_dtype
    if op in _PRED_FLOAT:
        return in_dtype in FLOATS
    if op in _CMP:
        return in_dtype in ANY
    if op in _LOGICAL or op == "logical_not":
        return in_dtype == "bool"
    return False


def arity(op: str) -> int:
    if op == "where":
        return 3
    if op in _FLOAT_BINARY or op in _CMP or op in _LOGICAL:
        return 2
    return 1


def render(dialect: str, op: str, xs: list[str], in_dtype: str, out_dtype: str,
           ctype: str = "float") -> str:
    """The expression of ``op`` over operand expressions ``xs`` in ``dialect`` ("py" or
    "c"); ``ctype`` is the C compute type of ``in_dtype`` (for C literals)."""
    d = 0 if dialect == "py" else 1
    if op == "astype":
        if out_dtype == "bool":
            return f"({xs[0]} != 0)"
        return f"np.{out_dtype}({xs[0]})" if d == 0 else f"(({ctype_of(out_dtype)}){xs[0]})"
    if op == "where":
        c, a, b = xs
        return f"({a} if {c} else {b})" if d == 0 else f"({c} ? {a} : {b})"
    if op in _FLOAT_UNARY:
        one = f"np.{in_dtype}(1)"
        return _FLOAT_UNARY[op][d].format(x=xs[0], one=one, T=ctype)
    if op in _FLOAT_BINARY:
        return _FLOAT_BINARY[op][d].format(a=xs[0], b=xs[1])
    if op in _PRED_FLOAT:
        return _PRED_FLOAT[op][d].format(x=xs[0])
    if op in _CMP:
        return f"({xs[0]} {_CMP[op]} {xs[1]})"
    if op in _LOGICAL:
        return f"({xs[0]} {_LOGICAL[op][d]} {xs[1]})"
    if op == "logical_not":
        return f"({xs[0]} == 0)"
    raise KeyError(op)


_C_TYPES = {"float32": "float", "float64": "double", "bool": "uchar", "int8": "char",
            "int16": "short", "int32": "int", "int64": "long", "uint8": "uchar",
            "uint16": "ushort", "uint32": "uint", "uint64": "ulong"}


def ctype_of(dtype: str) -> str:
    """The OpenCL C type holding ``dtype`` (bool as uchar 0/1, as the OpenCL backend)."""
    return _C_TYPES[dtype]


def literal(dialect: str, value: object, dtype: str) -> str:
    """A constant of ``dtype`` in ``dialect``: exact (float32 constants are rounded to
    float32 first, as NumPy converts a Python scalar operand)."""
    import numpy as np
    v = np.dtype(dtype).type(value)
    if dtype == "bool":
        return ("True" if v else "False") if dialect == "py" else ("1" if v else "0")
    if dtype in FLOATS:
        f = float(v)
        if f != f:
            return "np.nan" if dialect == "py" else "NAN"
        if f in (float("inf"), float("-inf")):
            s = "-" if f < 0 else ""
            return f"{s}np.inf" if dialect == "py" else f"{s}INFINITY"
        text = repr(f)
        if dialect == "py":
            return f"np.{dtype}({text})"
        return f"(({ctype_of(dtype)}){text})" if dtype == "float64" else f"{text}f"
    return str(int(v)) if dialect == "py" else f"(({ctype_of(dtype)}){int(v)})"
