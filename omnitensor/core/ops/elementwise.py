"""Elementwise ops: the op table, and the public functions made from its rows.

Each op is one row: its name, its dtype rule (``dtype_rules``), how it runs (a backend
primitive of the same Array API name, or a small forward over primitives) and its backward
formula, written with Tensor ops so that it runs on every backend and is itself
differentiable (higher-order gradients). The functions ``omnitensor.exp``, ``add``... and
the methods/operators of Tensor are generated from these rows; ``elementwise_dispatch``
runs them.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable

from .. import dtypes as _dt
from ..autocast_state import FP32_GPU, autocast_operands, state as _autocast
from ..tensor import Tensor
from . import dtype_rules as R
from .elementwise_dispatch import BinaryOp, UnaryOp, _binary, _unary
from .elementwise_dispatch import (  # noqa: F401  (the dispatch names ops import from here)
    _backend_failure, _binary_inplace, _mixed_devices, _unary_inplace)
from .elementwise_forwards import (_identity_for_integers, _float_predicate, _signbit,
                                  _positive, _real_part, _imag_part, _conj_forward, _rsqrt,
                                  _sigmoid, _sign, _relu, _floor_divide, _expm1, _tanh, _pow,
                                  pow_exponent, _PY_OF_KIND)  # noqa: F401


# ----------------------------------------------------------------- formula helpers
def _conj(t: Any) -> Any:
    if isinstance(t, complex):  # a Python scalar operand (``u * 1j``) is conjugated too
        return t.conjugate()
    return t.conj() if isinstance(t, Tensor) and t._dtype.kind == "c" else t


def _zeros_like(g: Tensor) -> Tensor:
    return g * 0


_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _sgn(x: Tensor) -> Tensor:
    """sign for reals, x/|x| for complex (0 at 0): the derivative of abs."""
    if x._dtype.kind != "c":
        return x.sign()
    a = x.abs()
    return where(a == 0, 0, x / where(a == 0, 1, a))


# ----------------------------------------------------------------------- the table
U = UnaryOp
UNARY_OPS: dict[str, UnaryOp] = {op.name: op for op in [
    U("negative", R.u_numeric, lambda g, x, y: -g),
    U("positive", R.u_numeric, lambda g, x, y: g, forward=_positive),
    U("abs", R.u_abs, lambda g, x, y: g * _sgn(x), "x"),
    U("exp", R.u_float, lambda g, x, y: g * _conj(y), "out"),
    U("expm1", R.u_float, lambda g, x, y: g * _conj(y + 1), "out", forward=_expm1),
    U("log", R.u_float, lambda g, x, y: g / _conj(x), "x"),
    U("log1p", R.u_float, lambda g, x, y: g / _conj(x + 1), "x"),
    U("log2", R.u_float, lambda g, x, y: g / (_conj(x) * _LN2), "x"),
    U("log10", R.u_float, lambda g, x, y: g / (_conj(x) * _LN10), "x"),
    U("sqrt", R.u_float, lambda g, x, y: g / (2 * _conj(y)), "out"),
    U("rsqrt", R.u_float, lambda g, x, y: g * (-0.5) * _conj(y * y * y), "out",
      forward=_rsqrt),
    U("square", R.u_square, lambda g, x, y: g * 2 * _conj(x), "x"),
    U("sin", R.u_float, lambda g, x, y: g * _conj(x.cos()), "x"),
    U("cos", R.u_float, lambda g, x, y: -g * _conj(x.sin()), "x"),
    U("tan", R.u_float, lambda g, x, y: g * _conj(1 + y * y), "out"),
    U("asin", R.u_float, lambda g, x, y: g / _conj((1 - x * x).sqrt()), "x"),
    U("acos", R.u_float, lambda g, x, y: -g / _conj((1 - x * x).sqrt()), "x"),
    U("atan", R.u_float, lambda g, x, y: g / _conj(1 + x * x), "x"),
    U("sinh", R.u_float, lambda g, x, y: g * _conj(x.cosh()), "x"),
    U("cosh", R.u_float, lambda g, x, y: g * _conj(x.sinh()), "x"),
    U("tanh", R.u_float, lambda g, x, y: g * _conj(1 - y * y), "out", forward=_tanh),
    U("asinh", R.u_float, lambda g, x, y: g / _conj((x * x + 1).sqrt()), "x"),
    U("acosh", R.u_float, lambda g, x, y: g / _conj((x - 1).sqrt() * (x + 1).sqrt()), "x"),
    U("atanh", R.u_float, lambda g, x, y: g / _conj(1 - x * x), "x"),
    U("erf", R.u_real_float, lambda g, x, y: g * _TWO_OVER_SQRT_PI * (-(x * x)).exp(), "x"),
    U("erfc", R.u_real_float, lambda g, x, y: g * -_TWO_OVER_SQRT_PI * (-(x * x)).exp(), "x"),
    U("sigmoid", R.u_float, lambda g, x, y: g * _conj(y * (1 - y)), "out",
      forward=_sigmoid),
    U("relu", R.u_real_numeric, lambda g, x, y: g * (y > 0), "out", forward=_relu),
    U("sign", R.u_sign, lambda g, x, y: _zeros_like(g), forward=_sign),
    U("floor", R.u_real_numeric, lambda g, x, y: _zeros_like(g),
      forward=_identity_for_integers("floor")),
    U("ceil", R.u_real_numeric, lambda g, x, y: _zeros_like(g),
      forward=_identity_for_integers("ceil")),
    U("round", R.u_numeric, lambda g, x, y: _zeros_like(g),
      forward=_identity_for_integers("round")),
    U("trunc", R.u_real_numeric, lambda g, x, y: _zeros_like(g),
      forward=_identity_for_integers("trunc")),
    U("reciprocal", R.u_float, lambda g, x, y: -g * _conj(y * y), "out"),
    U("isnan", R.u_predicate, forward=_float_predicate("isnan", False)),
    U("isinf", R.u_predicate, forward=_float_predicate("isinf", False)),
    U("isfinite", R.u_predicate, forward=_float_predicate("isfinite", True)),
    U("signbit", R.u_real_predicate, forward=_signbit),
    U("logical_not", R.u_logical),
    U("bitwise_invert", R.u_integer_or_bool),
    U("conj", R.u_any, lambda g, x, y: _conj(g), forward=_conj_forward),
    U("real", R.u_complex_part, lambda g, x, y: g, forward=_real_part),
    U("imag", R.u_complex_part, lambda g, x, y: g * 1j, forward=_imag_part),
]}


def _pow_grads(g: Tensor, a: Any, b: Any, out: Any) -> tuple:
    ga = gb = None
    if isinstance(a, Tensor) and a.requires_grad:
        if isinstance(b, (int, float)) and b == 0:
            ga = g * 0
        elif isinstance(b, Tensor):  # torch: 0 where b == 0, even at a == 0 (0 * inf)
            ga = where(b == 0, 0, g * _conj(b * a ** (b - 1)))
        else:
            ga = g * _conj(b * a ** (b - 1))
    if isinstance(b, Tensor) and b.requires_grad:
        base = a if isinstance(a, Tensor) else b * 0 + a
        # d/db a**b = a**b * log(a); defined as 0 where a == 0 and b >= 0 (torch)
        log_a = where((base == 0) & (b >= 0), 0, base.log()) if base._dtype.kind != "c" \
            else base.log()
        gb = g * _conj(out * log_a)
    return ga, gb


def _max_grads(g: Tensor, a: Any, b: Any, out: Any, pick_a: Callable) -> tuple:
    # ties split the gradient in half, as torch does
    half = g / 2
    ga = where(a == b, half, where(pick_a(a, b), g, 0))
    gb = where(a == b, half, where(pick_a(a, b), 0, g))
    return ga, gb


B = BinaryOp
BINARY_OPS: dict[str, BinaryOp] = {op.name: op for op in [
    B("add", R.b_arith, lambda g, a, b, y: (g, g)),
    B("subtract", R.b_subtract, lambda g, a, b, y: (g, -g)),
    B("multiply", R.b_arith, lambda g, a, b, y: (
        None if b is None else g * _conj(b), None if a is None else g * _conj(a)), "a,b",
      save_when={"a": "b", "b": "a"}),
    B("divide", R.b_true_divide, lambda g, a, b, y: (
        g / _conj(b), None if y is None else -g * _conj(y) / _conj(b)), "b,out",
      save_when={"out": "b"}),
    B("floor_divide", R.b_real_numeric, lambda g, a, b, y: (g * 0, g * 0),
      forward=_floor_divide, divides=True),
    B("remainder", R.b_real_numeric,
      lambda g, a, b, y: (g, -g * (a // b) if isinstance(b, Tensor) else None), "a,b",
      divides=True),
    B("pow", R.b_pow, _pow_grads, "a,b,out", forward=_pow),
    B("maximum", R.b_real, lambda g, a, b, y: _max_grads(g, a, b, y, lambda p, q: p > q),
      "a,b"),
    B("minimum", R.b_real, lambda g, a, b, y: _max_grads(g, a, b, y, lambda p, q: p < q),
      "a,b"),
    B("atan2", R.b_real_float,
      lambda g, a, b, y: (g * b / (a * a + b * b), -g * a / (a * a + b * b)), "a,b"),
    B("hypot", R.b_real_float, lambda g, a, b, y: (g * a / y, g * b / y), "a,b,out"),
    B("logaddexp", R.b_real_float,
      lambda g, a, b, y: (g * (a - y).exp(), g * (b - y).exp()), "a,b,out"),
    B("copysign", R.b_real_float,
      lambda g, a, b, y: (g * where(a == 0, 0, y / where(a == 0, 1, a)), g * 0), "a,out"),
    B("nextafter", R.b_real_float, lambda g, a, b, y: (g, _zeros_like(g))),
    B("equal", R.b_equality),
    B("not_equal", R.b_equality),
    B("less", R.b_ordering),
    B("less_equal", R.b_ordering),
    B("greater", R.b_ordering),
    B("greater_equal", R.b_ordering),
    B("logical_and", R.b_logical),
    B("logical_or", R.b_logical),
    B("logical_xor", R.b_logical),
    B("bitwise_and", R.b_bitwise),
    B("bitwise_or", R.b_bitwise),
    B("bitwise_xor", R.b_bitwise),
    B("bitwise_left_shift", R.b_shift),
    B("bitwise_right_shift", R.b_shift),
]}


# ---------------------------------------------------------- public functions from rows
def _make_unary(op: UnaryOp) -> Callable[..., Tensor]:
    name = op.name
    if name in FP32_GPU:  # autocast runs these in float32 on accelerators (torch's CUDA list)
        def fn(x: Tensor, /) -> Tensor:
            if _autocast.active:
                x, = autocast_operands(name, x)
            return _unary(op, x)
    else:
        def fn(x: Tensor, /) -> Tensor:
            return _unary(op, x)
    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"Elementwise {op.name} (Array API / torch semantics)."
    return fn


def _binary_autocast(op: BinaryOp, a: Any, b: Any) -> Tensor:
    """:func:`_binary` for the ops autocast runs in float32 on accelerators (pow)."""
    if op.name == "pow":
        b = pow_exponent(a, b)
    if _autocast.active:
        a, b = autocast_operands(op.name, a, b)
    return _binary(op, a, b)


def binary_entry(op: BinaryOp) -> Callable[[BinaryOp, Any, Any], Tensor]:
    """The dispatcher a public entry (function or operator) of ``op`` calls."""
    return _binary_autocast if op.name in FP32_GPU else _binary


def _make_binary(op: BinaryOp) -> Callable[..., Tensor]:
    binary = binary_entry(op)

    def fn(x1: Any, x2: Any, /) -> Tensor:
        return binary(op, x1, x2)
    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"Elementwise {op.name} with broadcasting and type promotion."
    return fn


for _uop in UNARY_OPS.values():
    globals()[_uop.name] = _make_unary(_uop)
for _bop in BINARY_OPS.values():
    globals()[_bop.name] = _make_binary(_bop)
del _uop, _bop


if TYPE_CHECKING:
    # The loop above makes the op functions at runtime; type checkers do not run it, so each
    # one is declared here (tests/core/test_elementwise_decls.py keeps this equal to the table).
    # add and subtract are defined below with torch's alpha.
    def negative(x: Tensor, /) -> Tensor: ...
    def positive(x: Tensor, /) -> Tensor: ...
    def abs(x: Tensor, /) -> Tensor: ...  # noqa: A001
    def exp(x: Tensor, /) -> Tensor: ...
    def expm1(x: Tensor, /) -> Tensor: ...
    def log(x: Tensor, /) -> Tensor: ...
    def log1p(x: Tensor, /) -> Tensor: ...
    def log2(x: Tensor, /) -> Tensor: ...
    def log10(x: Tensor, /) -> Tensor: ...
    def sqrt(x: Tensor, /) -> Tensor: ...
    def rsqrt(x: Tensor, /) -> Tensor: ...
    def square(x: Tensor, /) -> Tensor: ...
    def sin(x: Tensor, /) -> Tensor: ...
    def cos(x: Tensor, /) -> Tensor: ...
    def tan(x: Tensor, /) -> Tensor: ...
    def asin(x: Tensor, /) -> Tensor: ...
    def acos(x: Tensor, /) -> Tensor: ...
    def atan(x: Tensor, /) -> Tensor: ...
    def sinh(x: Tensor, /) -> Tensor: ...
    def cosh(x: Tensor, /) -> Tensor: ...
    def tanh(x: Tensor, /) -> Tensor: ...
    def asinh(x: Tensor, /) -> Tensor: ...
    def acosh(x: Tensor, /) -> Tensor: ...
    def atanh(x: Tensor, /) -> Tensor: ...
    def erf(x: Tensor, /) -> Tensor: ...
    def erfc(x: Tensor, /) -> Tensor: ...
    def sigmoid(x: Tensor, /) -> Tensor: ...
    def relu(x: Tensor, /) -> Tensor: ...
    def sign(x: Tensor, /) -> Tensor: ...
    def floor(x: Tensor, /) -> Tensor: ...
    def ceil(x: Tensor, /) -> Tensor: ...
    def round(x: Tensor, /) -> Tensor: ...  # noqa: A001
    def trunc(x: Tensor, /) -> Tensor: ...
    def reciprocal(x: Tensor, /) -> Tensor: ...
    def isnan(x: Tensor, /) -> Tensor: ...
    def isinf(x: Tensor, /) -> Tensor: ...
    def isfinite(x: Tensor, /) -> Tensor: ...
    def signbit(x: Tensor, /) -> Tensor: ...
    def logical_not(x: Tensor, /) -> Tensor: ...
    def bitwise_invert(x: Tensor, /) -> Tensor: ...
    def conj(x: Tensor, /) -> Tensor: ...
    def real(x: Tensor, /) -> Tensor: ...
    def imag(x: Tensor, /) -> Tensor: ...

    def multiply(x1: Any, x2: Any, /) -> Tensor: ...
    def divide(x1: Any, x2: Any, /) -> Tensor: ...
    def floor_divide(x1: Any, x2: Any, /) -> Tensor: ...
    def remainder(x1: Any, x2: Any, /) -> Tensor: ...
    def pow(x1: Any, x2: Any, /) -> Tensor: ...  # noqa: A001
    def maximum(x1: Any, x2: Any, /) -> Tensor: ...
    def minimum(x1: Any, x2: Any, /) -> Tensor: ...
    def atan2(x1: Any, x2: Any, /) -> Tensor: ...
    def hypot(x1: Any, x2: Any, /) -> Tensor: ...
    def logaddexp(x1: Any, x2: Any, /) -> Tensor: ...
    def copysign(x1: Any, x2: Any, /) -> Tensor: ...
    def nextafter(x1: Any, x2: Any, /) -> Tensor: ...
    def equal(x1: Any, x2: Any, /) -> Tensor: ...
    def not_equal(x1: Any, x2: Any, /) -> Tensor: ...
    def less(x1: Any, x2: Any, /) -> Tensor: ...
    def less_equal(x1: Any, x2: Any, /) -> Tensor: ...
    def greater(x1: Any, x2: Any, /) -> Tensor: ...
    def greater_equal(x1: Any, x2: Any, /) -> Tensor: ...
    def logical_and(x1: Any, x2: Any, /) -> Tensor: ...
    def logical_or(x1: Any, x2: Any, /) -> Tensor: ...
    def logical_xor(x1: Any, x2: Any, /) -> Tensor: ...
    def bitwise_and(x1: Any, x2: Any, /) -> Tensor: ...
    def bitwise_or(x1: Any, x2: Any, /) -> Tensor: ...
    def bitwise_xor(x1: Any, x2: Any, /) -> Tensor: ...
    def bitwise_left_shift(x1: Any, x2: Any, /) -> Tensor: ...
    def bitwise_right_shift(x1: Any, x2: Any, /) -> Tensor: ...


def _forget_resolved_rules() -> None:
    """Empty every op's rule cache (in place: the trusted fast paths hold the dicts)."""
    ops: list[UnaryOp | BinaryOp] = [*UNARY_OPS.values(), *BINARY_OPS.values()]
    for op in ops:
        op._cache.clear()


_dt.on_default_dtype_change(_forget_resolved_rules)

_ADD, _SUB, _MUL = BINARY_OPS["add"], BINARY_OPS["subtract"], BINARY_OPS["multiply"]


def add(input: Any, other: Any, /, *, alpha: Any = 1) -> Tensor:  # noqa: A002
    """``input + alpha * other`` (torch's ``alpha``), with broadcasting and promotion."""
    if alpha != 1:
        other = _binary(_MUL, other, alpha)
    return _binary(_ADD, input, other)


def subtract(input: Any, other: Any, /, *, alpha: Any = 1) -> Tensor:  # noqa: A002
    """``input - alpha * other``."""
    if alpha != 1:
        other = _binary(_MUL, other, alpha)
    return _binary(_SUB, input, other)


def where(condition: Tensor, x1: Any, x2: Any, /) -> Tensor:
    """``x1`` where ``condition`` else ``x2``, broadcasting all three."""
    from .ternary import where as _where
    return _where(condition, x1, x2)


def clamp(x: Tensor, /, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """Limit values to ``[min, max]`` (tensors or scalars); NaN stays NaN."""
    from .ternary import clamp as _clamp
    return _clamp(x, min, max)
