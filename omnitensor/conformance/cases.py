"""The cross-vendor op suite: each case is an omnitensor call and its NumPy reference.

The elementwise and reduction rows are here, the matmul, convolution and ``nn.functional``
rows in ``nn_cases.py``; ``table.py`` joins them. The same table drives the test suite
(``tests/core/test_conformance.py``) and the ``omnitensor conformance`` command users run
to certify a device. References are computed in float64 (complex128) on the host; results
are compared with the tolerance of the result dtype (``omnitensor.testing.TOLERANCES``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

FLOATS = ("float16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INTS = SIGNED + UNSIGNED
REAL = INTS + FLOATS
NUMERIC = REAL + COMPLEX
ALL = ("bool",) + NUMERIC

_SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])


@dataclass
class Case:
    """One op: ``call(ot, *tensors)`` vs ``ref(*arrays)`` over ``dtypes``."""
    name: str
    call: Callable[..., Any]
    ref: Callable[..., Any]
    dtypes: tuple[str, ...]
    arity: int = 1
    domain: tuple[float, float] = (-3.0, 3.0)
    specials: bool = True            # add NaN/inf/signed zeros to float inputs
    nonzero_rhs: bool = False        # integer divisors must not be 0
    rtol_scale: float = 1.0          # looser tolerance for ill-conditioned functions
    shapes: tuple = field(default_factory=lambda: ((), (0,), (7,), (3, 4), (2, 3, 4)))
    #: instead of ``shapes``: ``(label, operands, keywords)`` triples (``nn_cases.py``)
    variants: tuple = ()


def _u(name: str, ref: Callable, dtypes: tuple, **kw: Any) -> Case:
    return Case(name, lambda ot, x: getattr(ot, name)(x), ref, dtypes, 1, **kw)


def _b(name: str, ref: Callable, dtypes: tuple, **kw: Any) -> Case:
    return Case(name, lambda ot, a, b: getattr(ot, name)(a, b), ref, dtypes, 2, **kw)


def _special(name: str) -> Callable[[np.ndarray], np.ndarray]:
    """SciPy's special function ``name`` (exact in float64), else ``math``'s vectorised."""
    def ref(x: np.ndarray) -> np.ndarray:
        try:
            import scipy.special
            return getattr(scipy.special, name)(x)
        except ImportError:  # pragma: no cover
            return np.vectorize(getattr(math, name))(x)
    return ref


_erf = _special("erf")


FLOAT_C = FLOATS + COMPLEX
UNARY = [
    _u("abs", np.abs, NUMERIC),
    _u("negative", np.negative, NUMERIC),
    _u("positive", np.positive, NUMERIC),
    _u("exp", np.exp, FLOAT_C),
    _u("expm1", np.expm1, FLOAT_C, domain=(-1, 1)),
    _u("log", np.log, FLOAT_C, domain=(0.01, 10)),
    _u("log1p", np.log1p, FLOAT_C, domain=(-0.9, 5)),
    _u("log2", np.log2, FLOAT_C, domain=(0.01, 10)),
    _u("log10", np.log10, FLOAT_C, domain=(0.01, 10)),
    _u("sqrt", np.sqrt, FLOAT_C, domain=(0, 10)),
    _u("rsqrt", lambda x: 1 / np.sqrt(x), FLOATS, domain=(0.1, 10)),
    _u("square", np.square, NUMERIC),
    _u("sin", np.sin, FLOAT_C),
    _u("cos", np.cos, FLOAT_C),
    _u("tan", np.tan, FLOAT_C, domain=(-1.2, 1.2)),
    _u("asin", np.arcsin, FLOAT_C, domain=(-0.99, 0.99)),
    _u("acos", np.arccos, FLOAT_C, domain=(-0.99, 0.99)),
    _u("atan", np.arctan, FLOAT_C),
    _u("sinh", np.sinh, FLOAT_C),
    _u("cosh", np.cosh, FLOAT_C),
    _u("tanh", np.tanh, FLOAT_C),
    _u("asinh", np.arcsinh, FLOAT_C),
    _u("acosh", np.arccosh, FLOAT_C, domain=(1.01, 10)),
    _u("atanh", np.arctanh, FLOAT_C, domain=(-0.99, 0.99)),
    _u("erf", _erf, FLOATS),
    _u("erfc", _special("erfc"), FLOATS),
    _u("sigmoid", lambda x: 1 / (1 + np.exp(-x)), FLOATS),
    _u("relu", lambda x: np.maximum(x, 0), REAL),
    _u("sign", np.sign, REAL + COMPLEX, specials=False),
    _u("floor", np.floor, REAL),
    _u("ceil", np.ceil, REAL),
    _u("round", np.round, REAL + COMPLEX, domain=(-10, 10)),
    _u("trunc", np.trunc, REAL),
    _u("reciprocal", np.reciprocal, FLOAT_C, domain=(0.1, 5)),
    _u("isnan", np.isnan, NUMERIC),
    _u("isinf", np.isinf, NUMERIC),
    _u("isfinite", np.isfinite, NUMERIC),
    _u("signbit", np.signbit, REAL),
    _u("logical_not", np.logical_not, ALL),
    _u("bitwise_invert", np.invert, ("bool",) + INTS),
    _u("conj", np.conj, NUMERIC),
    _u("real", np.real, COMPLEX + FLOATS),
    _u("imag", np.imag, COMPLEX),
]

BINARY = [
    _b("add", np.add, NUMERIC),
    _b("subtract", np.subtract, NUMERIC),
    _b("multiply", np.multiply, NUMERIC),
    _b("divide", np.divide, FLOAT_C, domain=(0.5, 3)),
    _b("floor_divide", np.floor_divide, REAL, nonzero_rhs=True, specials=False),
    _b("remainder", np.remainder, REAL, nonzero_rhs=True, specials=False),
    _b("pow", np.power, FLOAT_C, domain=(0.1, 2.5)),
    _b("maximum", np.maximum, REAL),
    _b("minimum", np.minimum, REAL),
    _b("atan2", np.arctan2, FLOATS),
    _b("hypot", np.hypot, FLOATS),
    _b("logaddexp", np.logaddexp, FLOATS),
    _b("copysign", np.copysign, FLOATS),
    _b("equal", np.equal, ALL),
    _b("not_equal", np.not_equal, ALL),
    _b("less", np.less, ("bool",) + REAL),
    _b("less_equal", np.less_equal, ("bool",) + REAL),
    _b("greater", np.greater, ("bool",) + REAL),
    _b("greater_equal", np.greater_equal, ("bool",) + REAL),
    _b("logical_and", np.logical_and, ALL),
    _b("logical_or", np.logical_or, ALL),
    _b("logical_xor", np.logical_xor, ALL),
    _b("bitwise_and", np.bitwise_and, ("bool",) + INTS),
    _b("bitwise_or", np.bitwise_or, ("bool",) + INTS),
    _b("bitwise_xor", np.bitwise_xor, ("bool",) + INTS),
    _b("bitwise_left_shift", np.left_shift, INTS, domain=(0, 5)),
    _b("bitwise_right_shift", np.right_shift, INTS, domain=(0, 5)),
]


def _red(name: str, ref: Callable, dtypes: tuple, call: Callable | None = None,
         **kw: Any) -> Case:
    kw.setdefault("specials", False)
    kw.setdefault("shapes", ((5,), (3, 4), (2, 3, 4)))
    return Case(name, call or (lambda ot, x: getattr(ot, name)(x, axis=-1)), ref, dtypes, 1,
                **kw)


REDUCTIONS = [
    _red("sum", lambda x: np.sum(x, axis=-1), NUMERIC),
    _red("prod", lambda x: np.prod(x, axis=-1), FLOATS + COMPLEX, domain=(0.5, 1.5)),
    _red("mean", lambda x: np.mean(x, axis=-1), FLOAT_C),
    _red("max", lambda x: np.max(x, axis=-1), REAL),
    _red("min", lambda x: np.min(x, axis=-1), REAL),
    _red("argmax", lambda x: np.argmax(x, axis=-1), REAL),
    _red("argmin", lambda x: np.argmin(x, axis=-1), REAL),
    _red("any", lambda x: np.any(x, axis=-1), ALL),
    _red("all", lambda x: np.all(x, axis=-1), ALL),
    _red("var", lambda x: np.var(x, axis=-1), FLOATS),
    _red("std", lambda x: np.std(x, axis=-1, ddof=1), FLOATS,
         call=lambda ot, x: ot.std(x, axis=-1, correction=1)),
    _red("logsumexp", lambda x: np.log(np.sum(np.exp(x), axis=-1)), FLOATS,
         call=lambda ot, x: ot.logsumexp(x, dim=-1)),
    _red("cumsum", lambda x: np.cumsum(x, axis=-1), NUMERIC,
         call=lambda ot, x: ot.cumsum(x, -1)),
    _red("cumprod", lambda x: np.cumprod(x, axis=-1), FLOATS, domain=(0.5, 1.5),
         call=lambda ot, x: ot.cumprod(x, -1)),
    _red("sort", lambda x: np.sort(x, axis=-1), REAL, specials=True),
    _red("argsort", lambda x: np.argsort(x, axis=-1, kind="stable"), REAL),
    _red("norm", lambda x: np.sqrt(np.sum(np.abs(x) ** 2, axis=-1)), FLOATS,
         call=lambda ot, x: ot.linalg.vector_norm(x, axis=-1)),
]

# ------------------------------------------------------------------------- inputs
def make_input(case: Case, dtype: str, shape: tuple, seed: int, rhs: bool = False) -> np.ndarray:
    """Deterministic input of ``dtype`` and ``shape`` inside the case's domain."""
    rng = np.random.default_rng(seed)
    lo, hi = case.domain
    n = int(np.prod(shape)) if shape else 1
    arr: np.ndarray
    if dtype == "bool":
        arr = rng.random(n) < 0.5
    elif dtype in INTS:
        info = np.iinfo(dtype)
        ilo, ihi = max(int(math.floor(lo * 10)), int(info.min)), min(int(math.ceil(hi * 10)),
                                                                         int(info.max))
        if case.name.startswith("bitwise_") and "shift" in case.name:
            ilo, ihi = (0, 5) if rhs else (0, 100)
        if dtype.startswith("u"):
            ilo = max(ilo, 0)
        if ihi <= ilo:
            ihi = ilo + 5
        arr = rng.integers(ilo, ihi + 1, n).astype(dtype)
        if rhs and case.nonzero_rhs:
            arr[arr == 0] = 1
    else:
        real = np.float64 if dtype in COMPLEX else np.dtype(dtype)
        arr = rng.uniform(lo, hi, n)
        if dtype in COMPLEX:
            arr = arr + 1j * rng.uniform(lo, hi, n)
        if case.specials and n >= 8 and dtype in FLOATS:
            arr[: len(_SPECIAL)] = _SPECIAL
        arr = arr.astype(dtype if dtype in COMPLEX else real)
    return arr.reshape(shape)


def reference(case: Case, arrays: list[np.ndarray | None], out_dtype: np.dtype,
              keywords: dict[str, Any] | None = None) -> np.ndarray:
    """The NumPy result in float64/complex128 (exact dtype for integer results); an absent
    optional operand (None) stays None."""
    import warnings
    hi: list[np.ndarray | None] = []
    for a in arrays:
        k = None if a is None else a.dtype.kind
        hi.append(a.astype(np.complex128) if k == "c" and a is not None else
                  a.astype(np.float64) if k == "f" and a is not None else a)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = np.asarray(case.ref(*hi, **(keywords or {})))
    if out_dtype.kind in "biu":
        return r.astype(out_dtype)
    return r
