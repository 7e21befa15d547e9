"""The primitive table: one row per elementwise primitive, the one place its facts live.

Each row (:class:`Primitive`) holds what every consumer needs to know of one primitive:

- ``name`` (the Array API name: the backend attribute, the IR node's op) and ``arity``;
- ``family``: the program family of the eager OpenCL kernels (ops of one family and one
  dtype share one program build; see :mod:`.elementwise`);
- ``c``: the C expression template per dtype kind (the kinds it computes): ``b`` bool
  (uchar 0/1), ``i`` signed, ``u`` unsigned, ``f`` real float (float16 computes in float),
  ``c`` complex; template fields as in :mod:`.ops`;
- ``numba``: the Python (numba) template of ``cpu``'s fused kernels, and ``numba_kinds``, the
  kinds it renders (complex and float16 are never rendered for numba);
- ``onnx``: the ONNX operator it maps to one for one, or :data:`DECOMPOSED` (a rule in
  ``onnx/_prims.py``), :data:`ALIAS` (its result is its operand's values) or a string
  starting with ``"none: "`` giving the reason it is not exported;
- ``fuse``: which fused-kernel class it belongs to (``compiler/fusion/table.py``), or
  :data:`NOT_FUSED`;
- ``autocast``: :data:`FP32` where torch's CUDA autocast runs it in float32
  (``core/autocast_state.py``' ``FP32_GPU``), else ``""``;
- ``out``: ``same``, ``bool`` (predicates) or ``real`` (abs/real/imag of complex);
- ``sign_agnostic``: integer results do not depend on signedness (two's complement), so int*
  operands run the uint* kernel of the same width; ``no_half``: float16 would be wrong
  computed in float and rounded (the kernels call a float16 helper, fused ones do not fuse
  it); ``hook``: an optional backend hook (``backends/base.py``'s ``OPTIONAL_HOOKS``), not a
  primitive every backend provides.

Consumers derive their lists from these rows: ``backends/base.py`` (``UNARY``, ``BINARY``,
``PREDICATES``), :mod:`.ops` (the C tables), :mod:`.numba_dialect`, the fusion table, the ONNX
mapping and the jit loader's rules. ``tests/test_primitive_table.py`` proves every row complete
and every consumer covering every row. Rows are in program-family order (the order of the
kernels in a family's program).
"""
from __future__ import annotations

from dataclasses import dataclass, field

#: ``onnx`` of a primitive exported by a rule of its own in ``onnx/_prims.py``
DECOMPOSED = "decomposed"
#: ``onnx`` of a primitive whose result is its operand's values (no ONNX node)
ALIAS = "alias"
#: ``onnx`` of a primitive the exporter refuses (it names the op)
NO_ONNX = "none: no ONNX operator matches it exactly; export refuses it, naming the op"
#: ``onnx`` of a hook: recorded as ``hook:<name>``, which the exporter does not map
HOOK = "none: an optional backend hook, recorded as hook:<name>; export refuses it"
#: fusion classes (``compiler/fusion/table.py``): float -> float math, float predicates,
#: comparisons on any real dtype, logical ops on bools
MATH, PREDICATE, COMPARISON, LOGICAL = "math", "predicate", "comparison", "logical"
NOT_FUSED = ""
#: ``autocast`` of a primitive torch's CUDA autocast computes in float32
FP32 = "fp32"
FUSION_CLASSES = (MATH, PREDICATE, COMPARISON, LOGICAL)
#: the eager kernels' program families
FAMILIES = ("arith", "compare", "int", "math")
#: result dtypes: the operands', bool, or the real dtype of a complex operand
OUTS = ("same", "bool", "real")


@dataclass(frozen=True)
class Primitive:
    """One elementwise primitive (see the module docstring for each field)."""

    name: str
    arity: int
    family: str
    c: dict[str, str]
    numba: str
    onnx: str
    numba_kinds: str = "f"
    fuse: str = NOT_FUSED
    autocast: str = ""
    out: str = "same"
    sign_agnostic: bool = False
    no_half: bool = False
    hook: bool = False
    kinds: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kinds", "".join(self.c))


_P = Primitive


def _all(kinds: str, tmpl: str) -> dict[str, str]:
    """The same template for every kind in ``kinds``."""
    return {k: tmpl for k in kinds}


#: every elementwise primitive, in program-family order
PRIMITIVES: tuple[Primitive, ...] = (
    _P("negative", 1, "arith", c={"b": "x", "i": "({T})(0 - ({W})x)", "u": "({T})(0 - ({W})x)",
       "f": "-x", "c": "-x"}, numba="-x", numba_kinds="iuf", onnx="Neg", fuse=MATH,
       sign_agnostic=True),
    _P("positive", 1, "arith", c=_all("biufc", "x"), numba="x", numba_kinds="biuf", onnx=ALIAS,
       fuse=MATH, sign_agnostic=True),
    _P("abs", 1, "arith", c={"b": "x", "i": "(x < 0 ? ({T})(0 - ({W})x) : x)", "u": "x",
       "f": "fabs(x)", "c": "{K}_abs(x)"}, numba="np.abs(x)", numba_kinds="biuf", onnx="Abs",
       fuse=MATH, out="real"),
    _P("square", 1, "arith", c={"b": "x", "i": "({T})(({W})x * ({W})x)",
       "u": "({T})(({W})x * ({W})x)", "f": "x * x", "c": "{K}_mul(x, x)"}, numba="x * x",
       numba_kinds="biuf", onnx=DECOMPOSED, fuse=MATH, sign_agnostic=True),
    _P("add", 2, "arith", c={"b": "(a | b)", "i": "({T})(({W})a + ({W})b)",
       "u": "({T})(({W})a + ({W})b)", "f": "a + b", "c": "a + b"}, numba="a + b",
       numba_kinds="biuf", onnx="Add", fuse=MATH, sign_agnostic=True),
    _P("subtract", 2, "arith", c={"b": "(a ^ b)", "i": "({T})(({W})a - ({W})b)",
       "u": "({T})(({W})a - ({W})b)", "f": "a - b", "c": "a - b"}, numba="a - b",
       numba_kinds="biuf", onnx="Sub", fuse=MATH, sign_agnostic=True),
    _P("multiply", 2, "arith", c={"b": "(a & b)", "i": "({T})(({W})a * ({W})b)",
       "u": "({T})(({W})a * ({W})b)", "f": "a * b", "c": "{K}_mul(a, b)"}, numba="a * b",
       numba_kinds="biuf", onnx="Mul", fuse=MATH, sign_agnostic=True),
    _P("divide", 2, "arith", c={"f": "a / b", "c": "{K}_div(a, b)"}, numba="a / b", onnx="Div",
       fuse=MATH),
    _P("maximum", 2, "arith", c={"b": "(a | b)", "i": "(a > b ? a : b)", "u": "(a > b ? a : b)",
       "f": "max_{K}(a, b)"}, numba="np.maximum(a, b)", numba_kinds="biuf", onnx="Max", fuse=MATH),
    _P("minimum", 2, "arith", c={"b": "(a & b)", "i": "(a < b ? a : b)", "u": "(a < b ? a : b)",
       "f": "min_{K}(a, b)"}, numba="np.minimum(a, b)", numba_kinds="biuf", onnx="Min", fuse=MATH),
    _P("sign", 1, "arith", c={"b": "x", "i": "({T})((x > 0) - (x < 0))", "u": "({T})(x > 0)",
       "f": "sign_{K}(x)", "c": "{K}_sign(x)"}, numba="np.sign(x)", numba_kinds="iuf", onnx="Sign",
       fuse=MATH),
    _P("reciprocal", 1, "arith", c={"f": "({T})1 / x", "c": "{K}_div({V}(1, 0), x)"},
       numba="{T}(1) / x", onnx="Reciprocal", fuse=MATH, autocast=FP32),
    _P("exp", 1, "arith", c={"f": "exp(x)", "c": "{K}_exp(x)"}, numba="np.exp(x)", onnx="Exp",
       fuse=MATH, autocast=FP32),
    _P("log", 1, "arith", c={"f": "log(x)", "c": "{K}_log(x)"}, numba="np.log(x)", onnx="Log",
       fuse=MATH, autocast=FP32),
    _P("sqrt", 1, "arith", c={"f": "sqrt(x)", "c": "{K}_sqrt(x)"}, numba="np.sqrt(x)", onnx="Sqrt",
       fuse=MATH),
    _P("rsqrt", 1, "arith", c={"f": "rsqrt(x)", "c": "{K}_div({V}(1, 0), {K}_sqrt(x))"},
       numba="{T}(1) / np.sqrt(x)", onnx=HOOK, autocast=FP32, hook=True),
    _P("sigmoid", 1, "arith", c={"f": "({T})1 / (({T})1 + exp(-x))",
       "c": "{K}_div({V}(1, 0), {V}(1, 0) + {K}_exp(-x))"}, numba="{T}(1) / ({T}(1) + np.exp(-x))",
       onnx=HOOK, fuse=MATH, hook=True),
    _P("tanh", 1, "arith", c={"f": "tanh(x)", "c": "{K}_tanh(x)"}, numba="np.tanh(x)", onnx="Tanh",
       fuse=MATH),
    _P("pow", 2, "arith", c={"i": "ipow_{K}(a, b)", "u": "ipow_{K}(a, b)", "f": "pow(a, b)",
       "c": "{K}_pow(a, b)"}, numba="np.power(a, b)", onnx="Pow", fuse=MATH, autocast=FP32),
    _P("conj", 1, "arith", c={"b": "x", "i": "x", "u": "x", "f": "x", "c": "{V}(x.x, -x.y)"},
       numba="x", numba_kinds="biuf", onnx=ALIAS, sign_agnostic=True),
    _P("real", 1, "arith", c={"b": "x", "i": "x", "u": "x", "f": "x", "c": "x.x"}, numba="x",
       numba_kinds="biuf", onnx=ALIAS, out="real", sign_agnostic=True),
    _P("imag", 1, "arith", c={"b": "0", "i": "0", "u": "0", "f": "0", "c": "x.y"}, numba="{T}(0)",
       numba_kinds="biuf", onnx=NO_ONNX, out="real"),
    _P("equal", 2, "compare", c={"b": "(a == b)", "i": "(a == b)", "u": "(a == b)",
       "f": "(a == b)", "c": "(a.x == b.x && a.y == b.y)"}, numba="(a == b)", numba_kinds="biuf",
       onnx="Equal", fuse=COMPARISON, out="bool", sign_agnostic=True),
    _P("not_equal", 2, "compare", c={"b": "(a != b)", "i": "(a != b)", "u": "(a != b)",
       "f": "(a != b)", "c": "(a.x != b.x || a.y != b.y)"}, numba="(a != b)", numba_kinds="biuf",
       onnx=DECOMPOSED, fuse=COMPARISON, out="bool", sign_agnostic=True),
    _P("less", 2, "compare", c=_all("biuf", "(a < b)"), numba="(a < b)", numba_kinds="biuf",
       onnx="Less", fuse=COMPARISON, out="bool"),
    _P("less_equal", 2, "compare", c=_all("biuf", "(a <= b)"), numba="(a <= b)",
       numba_kinds="biuf", onnx="LessOrEqual", fuse=COMPARISON, out="bool"),
    _P("greater", 2, "compare", c=_all("biuf", "(a > b)"), numba="(a > b)", numba_kinds="biuf",
       onnx="Greater", fuse=COMPARISON, out="bool"),
    _P("greater_equal", 2, "compare", c=_all("biuf", "(a >= b)"), numba="(a >= b)",
       numba_kinds="biuf", onnx="GreaterOrEqual", fuse=COMPARISON, out="bool"),
    _P("logical_and", 2, "compare", c={"b": "((a != 0) && (b != 0))",
       "i": "((a != 0) && (b != 0))", "u": "((a != 0) && (b != 0))", "f": "((a != 0) && (b != 0))",
       "c": "(((a.x != 0) || (a.y != 0)) && ((b.x != 0) || (b.y != 0)))"},
       numba="((a != 0) and (b != 0))", numba_kinds="biuf", onnx="And", fuse=LOGICAL, out="bool",
       sign_agnostic=True),
    _P("logical_or", 2, "compare", c={"b": "((a != 0) || (b != 0))", "i": "((a != 0) || (b != 0))",
       "u": "((a != 0) || (b != 0))", "f": "((a != 0) || (b != 0))",
       "c": "(((a.x != 0) || (a.y != 0)) || ((b.x != 0) || (b.y != 0)))"},
       numba="((a != 0) or (b != 0))", numba_kinds="biuf", onnx="Or", fuse=LOGICAL, out="bool",
       sign_agnostic=True),
    _P("logical_xor", 2, "compare", c={"b": "((a != 0) != (b != 0))",
       "i": "((a != 0) != (b != 0))", "u": "((a != 0) != (b != 0))", "f": "((a != 0) != (b != 0))",
       "c": "(((a.x != 0) || (a.y != 0)) != ((b.x != 0) || (b.y != 0)))"},
       numba="((a != 0) != (b != 0))", numba_kinds="biuf", onnx="Xor", fuse=LOGICAL, out="bool",
       sign_agnostic=True),
    _P("logical_not", 1, "compare", c={"b": "(x == 0)", "i": "(x == 0)", "u": "(x == 0)",
       "f": "(x == 0)", "c": "(x.x == 0 && x.y == 0)"}, numba="(x == 0)", numba_kinds="biuf",
       onnx="Not", fuse=LOGICAL, out="bool", sign_agnostic=True),
    _P("isnan", 1, "compare", c={"b": "0", "i": "0", "u": "0", "f": "isnan(x)",
       "c": "(isnan(x.x) || isnan(x.y))"}, numba="np.isnan(x)", numba_kinds="biuf", onnx="IsNaN",
       fuse=PREDICATE, out="bool", sign_agnostic=True),
    _P("isinf", 1, "compare", c={"b": "0", "i": "0", "u": "0", "f": "isinf(x)",
       "c": "(isinf(x.x) || isinf(x.y))"}, numba="np.isinf(x)", numba_kinds="biuf", onnx="IsInf",
       fuse=PREDICATE, out="bool", sign_agnostic=True),
    _P("isfinite", 1, "compare", c={"b": "1", "i": "1", "u": "1", "f": "isfinite(x)",
       "c": "(isfinite(x.x) && isfinite(x.y))"}, numba="np.isfinite(x)", numba_kinds="biuf",
       onnx=DECOMPOSED, fuse=PREDICATE, out="bool", sign_agnostic=True),
    _P("signbit", 1, "compare", c={"b": "0", "i": "(x < 0)", "u": "0", "f": "signbit(x)"},
       numba="np.signbit(x)", onnx=NO_ONNX, out="bool"),
    _P("floor_divide", 2, "int", c=_all("iuf", "fdiv_{K}(a, b)"), numba="np.floor_divide(a, b)",
       numba_kinds="iuf", onnx=DECOMPOSED),
    _P("remainder", 2, "int", c=_all("iuf", "fmod_{K}(a, b)"), numba="np.remainder(a, b)",
       numba_kinds="iuf", onnx=DECOMPOSED),
    _P("bitwise_and", 2, "int", c=_all("biu", "(a & b)"), numba="(a & b)", numba_kinds="biu",
       onnx="BitwiseAnd", sign_agnostic=True),
    _P("bitwise_or", 2, "int", c=_all("biu", "(a | b)"), numba="(a | b)", numba_kinds="biu",
       onnx="BitwiseOr", sign_agnostic=True),
    _P("bitwise_xor", 2, "int", c=_all("biu", "(a ^ b)"), numba="(a ^ b)", numba_kinds="biu",
       onnx="BitwiseXor", sign_agnostic=True),
    _P("bitwise_invert", 1, "int", c={"b": "(x ^ 1)", "i": "({T})~x", "u": "({T})~x"}, numba="~x",
       numba_kinds="biu", onnx="BitwiseNot", sign_agnostic=True),
    _P("bitwise_left_shift", 2, "int", c=_all("iu", "shl_{K}(a, b)"), numba="np.left_shift(a, b)",
       numba_kinds="iu", onnx=NO_ONNX),
    _P("bitwise_right_shift", 2, "int", c=_all("iu", "shr_{K}(a, b)"),
       numba="np.right_shift(a, b)", numba_kinds="iu", onnx=NO_ONNX),
    _P("floor", 1, "int", c={"b": "x", "i": "x", "u": "x", "f": "floor(x)"}, numba="np.floor(x)",
       numba_kinds="biuf", onnx="Floor", fuse=MATH),
    _P("ceil", 1, "int", c={"b": "x", "i": "x", "u": "x", "f": "ceil(x)"}, numba="np.ceil(x)",
       numba_kinds="biuf", onnx="Ceil", fuse=MATH),
    _P("trunc", 1, "int", c={"b": "x", "i": "x", "u": "x", "f": "trunc(x)"}, numba="np.trunc(x)",
       numba_kinds="biuf", onnx=DECOMPOSED, fuse=MATH),
    _P("round", 1, "int", c={"b": "x", "i": "x", "u": "x", "f": "rint(x)",
       "c": "{V}(rint(x.x), rint(x.y))"}, numba="np.rint(x)", numba_kinds="biuf", onnx="Round",
       fuse=MATH),
    _P("erf", 1, "math", c={"f": "erf(x)"}, numba="math.erf(x)", onnx="Erf"),
    _P("erfc", 1, "math", c={"f": "erfc(x)"}, numba="math.erfc(x)", onnx=DECOMPOSED),
    _P("expm1", 1, "math", c={"f": "expm1(x)", "c": "{K}_expm1(x)"}, numba="np.expm1(x)",
       onnx=DECOMPOSED, fuse=MATH, autocast=FP32),
    _P("log1p", 1, "math", c={"f": "log1p(x)", "c": "{K}_log1p(x)"}, numba="np.log1p(x)",
       onnx=DECOMPOSED, fuse=MATH, autocast=FP32),
    _P("sin", 1, "math", c={"f": "sin(x)", "c": "{K}_sin(x)"}, numba="np.sin(x)", onnx="Sin",
       fuse=MATH),
    _P("cos", 1, "math", c={"f": "cos(x)", "c": "{K}_cos(x)"}, numba="np.cos(x)", onnx="Cos",
       fuse=MATH),
    _P("tan", 1, "math", c={"f": "tan(x)", "c": "{K}_tan(x)"}, numba="np.tan(x)", onnx="Tan",
       fuse=MATH, autocast=FP32),
    _P("asin", 1, "math", c={"f": "asin(x)", "c": "{K}_asin(x)"}, numba="np.arcsin(x)",
       onnx="Asin", autocast=FP32),
    _P("acos", 1, "math", c={"f": "acos(x)", "c": "{K}_acos(x)"}, numba="np.arccos(x)",
       onnx="Acos", autocast=FP32),
    _P("atan", 1, "math", c={"f": "atan(x)", "c": "{K}_atan(x)"}, numba="np.arctan(x)",
       onnx="Atan"),
    _P("sinh", 1, "math", c={"f": "sinh(x)", "c": "{K}_sinh(x)"}, numba="np.sinh(x)", onnx="Sinh",
       fuse=MATH, autocast=FP32),
    _P("cosh", 1, "math", c={"f": "cosh(x)", "c": "{K}_cosh(x)"}, numba="np.cosh(x)", onnx="Cosh",
       fuse=MATH, autocast=FP32),
    _P("asinh", 1, "math", c={"f": "asinh(x)", "c": "{K}_asinh(x)"}, numba="np.arcsinh(x)",
       onnx="Asinh"),
    _P("acosh", 1, "math", c={"f": "acosh(x)", "c": "{K}_acosh(x)"}, numba="np.arccosh(x)",
       onnx="Acosh"),
    _P("atanh", 1, "math", c={"f": "atanh(x)", "c": "{K}_atanh(x)"}, numba="np.arctanh(x)",
       onnx="Atanh"),
    _P("log2", 1, "math", c={"f": "log2(x)",
       "c": "({RS})1.442695040888963407359924681001892137 * {K}_log(x)"}, numba="np.log2(x)",
       onnx=DECOMPOSED, fuse=MATH, autocast=FP32),
    _P("log10", 1, "math", c={"f": "log10(x)",
       "c": "({RS})0.434294481903251827651128918916605082 * {K}_log(x)"}, numba="np.log10(x)",
       onnx=DECOMPOSED, fuse=MATH, autocast=FP32),
    _P("atan2", 2, "math", c={"f": "atan2(a, b)"}, numba="np.arctan2(a, b)", onnx=NO_ONNX),
    _P("hypot", 2, "math", c={"f": "hypot(a, b)"}, numba="np.hypot(a, b)", onnx=DECOMPOSED),
    _P("logaddexp", 2, "math", c={"f": "logaddexp_{K}(a, b)"}, numba="np.logaddexp(a, b)",
       onnx=DECOMPOSED),
    _P("copysign", 2, "math", c={"f": "copysign(a, b)"}, numba="np.copysign(a, b)",
       onnx=NO_ONNX),
    _P("nextafter", 2, "math", c={"f": "nextafter_{K}(a, b)"}, numba="np.nextafter(a, b)",
       onnx=NO_ONNX, no_half=True),
)


def names(arity: int, hooks: bool = True) -> tuple[str, ...]:
    """The primitives of ``arity`` operands, in table order (``hooks=False``: only those
    every backend provides)."""
    return tuple(p.name for p in PRIMITIVES if p.arity == arity and (hooks or not p.hook))


def where(**facts: object) -> frozenset[str]:
    """The names of the rows whose fields equal ``facts`` (``where(out="bool")``)."""
    return frozenset(p.name for p in PRIMITIVES
                     if all(getattr(p, k) == v for k, v in facts.items()))


def onnx_direct() -> dict[str, str]:
    """Each primitive an ONNX operator computes one for one -> that operator (the rows
    whose ``onnx`` names one): the exporter writes them and the ONNX runtime runs them."""
    return {p.name: p.onnx for p in PRIMITIVES if p.onnx[:1].isupper()}
