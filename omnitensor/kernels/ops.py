"""The elementwise op table: one C expression per (op, dtype kind), for every C dialect.

Unary expressions read ``x``, binary ones ``a`` and ``b``, all in the compute type. Template
fields: ``{T}`` compute type, ``{W}`` wide unsigned type (wrapping integer math), ``{K}`` the
dtype key (helper prefix: ``fdiv_i32``, ``c64_exp``), ``{V}`` the complex literal
constructor (``(float2)`` in OpenCL C, ``make_float2`` in CUDA), ``{RS}`` the type a real
constant multiplying a complex value is cast to. Kinds: ``b`` bool (uchar 0/1), ``i``
signed, ``u`` unsigned, ``f`` real float (float16 computes in float), ``c`` complex.
A kind missing from a row means the backend does not compute that op for that kind (core's
dtype rules never ask for it).

``OUT`` says the result dtype: ``same``, ``bool`` (predicates) or ``real`` (abs/real/imag of
complex). ``FAMILY`` groups ops into programs: one program per (family, dtype) is built on
first use, so a PoCL build (~0.2 s) covers several ops.
"""
from __future__ import annotations

_WRAP_NEG = "({T})(0 - ({W})x)"

UNARY: dict[str, dict[str, str]] = {
    "negative": {"b": "x", "i": _WRAP_NEG, "u": _WRAP_NEG, "f": "-x", "c": "-x"},
    "positive": {k: "x" for k in "biufc"},
    "abs": {"b": "x", "i": "(x < 0 ? " + _WRAP_NEG + " : x)", "u": "x", "f": "fabs(x)",
            "c": "{K}_abs(x)"},
    "square": {"b": "x", "i": "({T})(({W})x * ({W})x)", "u": "({T})(({W})x * ({W})x)",
               "f": "x * x", "c": "{K}_mul(x, x)"},
    "sign": {"b": "x", "i": "({T})((x > 0) - (x < 0))", "u": "({T})(x > 0)",
             "f": "sign_{K}(x)", "c": "{K}_sign(x)"},
    "floor": {"b": "x", "i": "x", "u": "x", "f": "floor(x)"},
    "ceil": {"b": "x", "i": "x", "u": "x", "f": "ceil(x)"},
    "trunc": {"b": "x", "i": "x", "u": "x", "f": "trunc(x)"},
    "round": {"b": "x", "i": "x", "u": "x", "f": "rint(x)", "c": "{V}(rint(x.x), rint(x.y))"},
    "reciprocal": {"f": "({T})1 / x", "c": "{K}_div({V}(1, 0), x)"},
    "isnan": {"b": "0", "i": "0", "u": "0", "f": "isnan(x)", "c": "(isnan(x.x) || isnan(x.y))"},
    "isinf": {"b": "0", "i": "0", "u": "0", "f": "isinf(x)", "c": "(isinf(x.x) || isinf(x.y))"},
    "isfinite": {"b": "1", "i": "1", "u": "1", "f": "isfinite(x)",
                 "c": "(isfinite(x.x) && isfinite(x.y))"},
    "signbit": {"b": "0", "i": "(x < 0)", "u": "0", "f": "signbit(x)"},
    "logical_not": {"b": "(x == 0)", "i": "(x == 0)", "u": "(x == 0)", "f": "(x == 0)",
                    "c": "(x.x == 0 && x.y == 0)"},
    "bitwise_invert": {"b": "(x ^ 1)", "i": "({T})~x", "u": "({T})~x"},
    "conj": {"b": "x", "i": "x", "u": "x", "f": "x", "c": "{V}(x.x, -x.y)"},
    "real": {"b": "x", "i": "x", "u": "x", "f": "x", "c": "x.x"},
    "imag": {"b": "0", "i": "0", "u": "0", "f": "0", "c": "x.y"},
    "sigmoid": {"f": "({T})1 / (({T})1 + exp(-x))",
                "c": "{K}_div({V}(1, 0), {V}(1, 0) + {K}_exp(-x))"},
    "rsqrt": {"f": "rsqrt(x)", "c": "{K}_div({V}(1, 0), {K}_sqrt(x))"},
    "erf": {"f": "erf(x)"},
    "erfc": {"f": "erfc(x)"},
}
# transcendental functions: the OpenCL builtin for reals, our helper for complex
for _name, _cl in [("exp", "exp"), ("expm1", "expm1"), ("log", "log"), ("log1p", "log1p"),
                   ("sqrt", "sqrt"), ("sin", "sin"), ("cos", "cos"), ("tan", "tan"),
                   ("asin", "asin"), ("acos", "acos"), ("atan", "atan"), ("sinh", "sinh"),
                   ("cosh", "cosh"), ("tanh", "tanh"), ("asinh", "asinh"), ("acosh", "acosh"),
                   ("atanh", "atanh")]:
    UNARY[_name] = {"f": f"{_cl}(x)", "c": f"{{K}}_{_name}(x)"}
UNARY["log2"] = {"f": "log2(x)",
                 "c": "({RS})1.442695040888963407359924681001892137 * {K}_log(x)"}
UNARY["log10"] = {"f": "log10(x)",
                  "c": "({RS})0.434294481903251827651128918916605082 * {K}_log(x)"}


def _cmp(op: str) -> dict[str, str]:
    return {k: f"(a {op} b)" for k in "biuf"}


BINARY: dict[str, dict[str, str]] = {
    "add": {"b": "(a | b)", "i": "({T})(({W})a + ({W})b)", "u": "({T})(({W})a + ({W})b)",
            "f": "a + b", "c": "a + b"},
    "subtract": {"b": "(a ^ b)", "i": "({T})(({W})a - ({W})b)", "u": "({T})(({W})a - ({W})b)",
                 "f": "a - b", "c": "a - b"},
    "multiply": {"b": "(a & b)", "i": "({T})(({W})a * ({W})b)", "u": "({T})(({W})a * ({W})b)",
                 "f": "a * b", "c": "{K}_mul(a, b)"},
    "divide": {"f": "a / b", "c": "{K}_div(a, b)"},
    "floor_divide": {"i": "fdiv_{K}(a, b)", "u": "fdiv_{K}(a, b)", "f": "fdiv_{K}(a, b)"},
    "remainder": {"i": "fmod_{K}(a, b)", "u": "fmod_{K}(a, b)", "f": "fmod_{K}(a, b)"},
    "pow": {"i": "ipow_{K}(a, b)", "u": "ipow_{K}(a, b)", "f": "pow(a, b)", "c": "{K}_pow(a, b)"},
    "maximum": {"b": "(a | b)", "i": "(a > b ? a : b)", "u": "(a > b ? a : b)",
                "f": "max_{K}(a, b)"},
    "minimum": {"b": "(a & b)", "i": "(a < b ? a : b)", "u": "(a < b ? a : b)",
                "f": "min_{K}(a, b)"},
    "atan2": {"f": "atan2(a, b)"},
    "hypot": {"f": "hypot(a, b)"},
    "logaddexp": {"f": "logaddexp_{K}(a, b)"},
    "copysign": {"f": "copysign(a, b)"},
    "nextafter": {"f": "nextafter_{K}(a, b)"},
    "equal": {**_cmp("=="), "c": "(a.x == b.x && a.y == b.y)"},
    "not_equal": {**_cmp("!="), "c": "(a.x != b.x || a.y != b.y)"},
    "less": _cmp("<"),
    "less_equal": _cmp("<="),
    "greater": _cmp(">"),
    "greater_equal": _cmp(">="),
    "logical_and": {k: "((a != 0) && (b != 0))" for k in "biuf"},
    "logical_or": {k: "((a != 0) || (b != 0))" for k in "biuf"},
    "logical_xor": {k: "((a != 0) != (b != 0))" for k in "biuf"},
    "bitwise_and": {k: "(a & b)" for k in "biu"},
    "bitwise_or": {k: "(a | b)" for k in "biu"},
    "bitwise_xor": {k: "(a ^ b)" for k in "biu"},
    "bitwise_left_shift": {"i": "shl_{K}(a, b)", "u": "shl_{K}(a, b)"},
    "bitwise_right_shift": {"i": "shr_{K}(a, b)", "u": "shr_{K}(a, b)"},
}
for _k, _z in (("logical_and", "&&"), ("logical_or", "||")):
    BINARY[_k]["c"] = f"(((a.x != 0) || (a.y != 0)) {_z} ((b.x != 0) || (b.y != 0)))"
BINARY["logical_xor"]["c"] = "(((a.x != 0) || (a.y != 0)) != ((b.x != 0) || (b.y != 0)))"

#: ops whose result is bool
BOOL_OUT = frozenset(("isnan", "isinf", "isfinite", "signbit", "logical_not", "equal",
                      "not_equal", "less", "less_equal", "greater", "greater_equal",
                      "logical_and", "logical_or", "logical_xor"))
#: ops whose result on complex input is the real dtype
REAL_OUT = frozenset(("abs", "real", "imag"))
#: integer ops whose result bits do not depend on signedness (two's complement), so int*
#: operands run the uint* kernel of the same width
SIGN_AGNOSTIC = frozenset(("negative", "positive", "square", "add", "subtract", "multiply",
                           "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert",
                           "equal", "not_equal", "conj", "real", "logical_not",
                           "logical_and", "logical_or", "logical_xor", "isnan", "isinf",
                           "isfinite"))
#: float16 ops that would be wrong computed in float and rounded (need half's own ulp):
#: the elementwise kernels call a float16 helper (``helpers._HALF``), fused ones do not
NO_HALF = frozenset(("nextafter",))

#: program families: ops of one family and one dtype share a program
_FAMILIES = {
    "arith": ("negative", "positive", "abs", "square", "add", "subtract", "multiply",
              "divide", "maximum", "minimum", "sign", "reciprocal", "exp", "log", "sqrt",
              "rsqrt", "sigmoid", "tanh", "pow", "conj", "real", "imag"),
    "compare": ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                "logical_and", "logical_or", "logical_xor", "logical_not", "isnan",
                "isinf", "isfinite", "signbit"),
    "int": ("floor_divide", "remainder", "bitwise_and", "bitwise_or", "bitwise_xor",
            "bitwise_invert", "bitwise_left_shift", "bitwise_right_shift", "floor", "ceil",
            "trunc", "round"),
}
FAMILY: dict[str, str] = {}
for _fam, _ops in _FAMILIES.items():
    for _o in _ops:
        FAMILY[_o] = _fam
for _o in list(UNARY) + list(BINARY):
    FAMILY.setdefault(_o, "math")


def expr(table: dict[str, dict[str, str]], op: str, kind: str) -> str | None:
    """The raw expression template of ``op`` for ``kind`` (None when not computed)."""
    row = table.get(op)
    return None if row is None else row.get(kind)


# ------------------------------------------------------------------------- casts
def cast_expr(src_kind: str, dst_kind: str, dst_c: str, dst_comp: str, dst_real: str,
              vec_ctor: str | None = None) -> str:
    """C expression converting ``x`` (source compute type) to the destination compute
    type, as C casts do (float -> int truncates through int64; anything -> bool is != 0;
    complex -> real keeps the real part). ``vec_ctor`` is the dialect's complex literal
    constructor (OpenCL's ``(float2)`` by default)."""
    mk = vec_ctor if vec_ctor is not None else f"({dst_c})"
    if dst_kind == "b":
        return "(x.x != 0 || x.y != 0)" if src_kind == "c" else "(x != 0)"
    src = "x.x" if src_kind == "c" else "x"
    if dst_kind == "c":
        if src_kind == "c":
            return f"{mk}(({dst_real})x.x, ({dst_real})x.y)"
        return f"{mk}(({dst_real}){src}, 0)"
    if dst_kind in "iu" and src_kind in "fc":
        if dst_c == "ulong":
            return (f"({src} >= 9223372036854775808.0 ? (ulong){src} : "
                    f"(ulong)(long){src})")
        return f"({dst_comp})(long){src}"
    return f"({dst_comp}){src}"
