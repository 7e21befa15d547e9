"""The backend contract, elementwise primitives (see ``test_backend_contract.py``): every
unary and binary op on every dtype core hands it (its dtype rules), float results against
NumPy in float64, special values (IEEE and C99 Annex G for complex), Python scalar operands,
``out=`` aliasing an input or a view, and ``where``; on every registered backend with a
device here."""
import math

import numpy as np
import pytest

from omnitensor.backends.base import BINARY, PREDICATES, UNARY

from contract_helpers import ALL, NP, Probe, core_calls, rand, result_dtype, rng, wide


@pytest.fixture
def bk(device) -> Probe:
    return Probe(device)


# ------------------------------------------------------------------------ unary
UNARY_NAMES = list(UNARY) + ["sigmoid", "rsqrt"]
# domains (lo, hi) per unary op for real floats; complex data is in [-2, 2]^2
_DOMAIN = {"log": (0.05, 10), "log2": (0.05, 10), "log10": (0.05, 10), "sqrt": (0.0, 10),
           "rsqrt": (0.05, 10), "log1p": (-0.9, 10), "acosh": (1.0, 10), "asin": (-0.95, 0.95),
           "acos": (-0.95, 0.95), "atanh": (-0.95, 0.95), "tan": (-1.4, 1.4),
           "expm1": (-3, 3), "reciprocal": (0.1, 10)}
# ops whose float result NumPy must compute in the same dtype (rounding-exact functions)
_SAME_DTYPE = {"floor", "ceil", "trunc", "round", "sign", "negative", "positive", "abs",
               "conj", "real", "imag", "square", "nextafter", "copysign", "maximum",
               "minimum", "floor_divide", "remainder"}


def _unary_ref(name: str, a: np.ndarray) -> np.ndarray:
    if name in ("floor", "ceil", "trunc", "round") and a.dtype.kind in "biu":
        return a  # integers are their own rounding (core copies them; NumPy makes floats)
    x = a if name in _SAME_DTYPE or a.dtype.kind in "biu" else wide(a)
    if name == "sigmoid":
        return 1 / (1 + np.exp(-x))
    if name == "rsqrt":
        return 1 / np.sqrt(x)
    return getattr(NP, name)(x)


def _ew_cases(names):
    return [pytest.param(n, d, id=f"{n}-{d}") for n in names for d in ALL
            if core_calls(n, d) or n in ("sigmoid", "rsqrt") and d.kind == "f"]


def _sweep_or_skip(bk, name, dtype) -> None:
    bk.skip_dtype(dtype)
    if dtype not in bk.sweep():
        pytest.skip(f"{bk.type} sweeps one dtype per kernel family (contract_helpers.SWEEP)")
    if name in ("sigmoid", "rsqrt") and bk.be.hook(name) is None:
        pytest.skip(f"{bk.type} has no native {name} (core's composite runs)")


def _sizes(bk) -> tuple:
    """Operand shapes: a small one, and on a backend with a caching pool for large results
    (sycl) one big enough for the pool, the same kernels through another allocation."""
    if bk.type == "sycl":
        from omnitensor.backends.sycl.pool import MIN_BYTES
        return ((5, 7), (MIN_BYTES // 8 + 5,))
    return ((5, 7),)


@pytest.mark.parametrize("name,dtype", _ew_cases(UNARY_NAMES))
def test_unary(bk, name, dtype):
    _sweep_or_skip(bk, name, dtype)
    lo, hi = _DOMAIN.get(name, (-5.0, 5.0))
    if dtype.kind == "c":
        lo, hi = -2.0, 2.0
    for shape in _sizes(bk):
        a = rand(shape, dtype, lo, hi)
        if name in ("round", "floor", "ceil", "trunc") and dtype.kind in "fc":
            a = (np.round(a * 2) / 2).astype(dtype)  # exercise ties: half to even
        got = getattr(bk.be, name)(bk.dev(a))
        with np.errstate(all="ignore"):
            exp = _unary_ref(name, a)
        bk.check(got, exp, dtype=result_dtype(name, dtype),
                 exact=name in _SAME_DTYPE and dtype.kind not in "c" and name != "square")


def test_unary_special_values(bk):
    for dt in (np.float32, np.float64):
        if not bk.supports(dt):
            continue
        a = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -2.5, 0.5, -0.5, 2.5, 1e-40],
                     dt)
        for name in ("isnan", "isinf", "isfinite", "signbit", "sign", "floor", "ceil",
                     "round", "trunc", "abs", "negative", "exp", "log", "sqrt", "expm1",
                     "log1p", "erf", "tanh"):
            with np.errstate(all="ignore"):
                exp = _unary_ref(name, a)
            bk.check(getattr(bk.be, name)(bk.dev(a)), exp,
                     dtype=result_dtype(name, np.dtype(dt)))


def test_expm1_log1p_accuracy_near_zero(bk):
    a = np.array([1e-10, -3e-9, 1e-5, -1e-7], np.float64)
    if bk.supports(np.float64):
        bk.check(bk.expm1(bk.dev(a)), np.expm1(a), rtol=1e-14)
        bk.check(bk.log1p(bk.dev(a)), np.log1p(a), rtol=1e-14)
    f = a.astype(np.float32)
    bk.check(bk.expm1(bk.dev(f)), np.expm1(f.astype(np.float64)), rtol=2e-6, dtype=f.dtype)


# C99 Annex G / Array API special values of complex functions: every pair of these parts
_CPARTS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 2.0, 30.0, -30.0, np.inf, -np.inf, np.nan]
_CFUNCS = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "sin", "sinh",
           "tan", "tanh", "exp", "expm1", "log", "log1p", "sqrt"]


def _same_part(got: float, exp: float, rtol: float) -> bool:
    """NaN matches NaN (any sign); zeros and infinities match with their sign."""
    if math.isnan(exp) or math.isnan(got):
        return math.isnan(exp) and math.isnan(got)
    if exp == 0 or got == 0 or math.isinf(exp) or math.isinf(got):
        return got == exp and math.copysign(1, got) == math.copysign(1, exp)
    return abs(got - exp) <= rtol * abs(exp)


def _complex_ref(name: str, z: np.ndarray) -> np.ndarray:
    """NumPy's (glibc's) values, except where the Array API fixes what NumPy leaves out."""
    with np.errstate(all="ignore"):
        ref = getattr(np, name)(z)
        if name == "expm1":  # NumPy's complex expm1 has no special values: exp(z) - 1
            ref = np.where(np.isfinite(z), ref, np.exp(z) - 1)
            ref.real[z == 0] = 0.0  # expm1(-0 + 0j) is +0 + 0j
    if name == "tanh":  # tanh(+-inf + iy), y finite: +-1 + 0j with the sign of y (C99: sin 2y)
        hit = np.isinf(z.real) & np.isfinite(z.imag)
        ref.real[hit] = np.sign(z.real[hit])
        ref.imag[hit] = np.copysign(0.0, z.imag[hit])
    return ref


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", _CFUNCS)
def test_complex_special_values(bk, name, dtype):
    bk.skip_dtype(dtype)
    z = np.array([complex(r, i) for r in _CPARTS for i in _CPARTS], dtype)
    with np.errstate(all="ignore"):
        got = bk.host(getattr(bk.be, name)(bk.dev(z)))
    ref = _complex_ref(name, z)
    rtol = 2e-6 if dtype == "complex64" else 1e-14
    bad = [(z[k], got[k], ref[k]) for k in range(z.size)
           if not (_same_part(got[k].real, ref[k].real, rtol)
                   and _same_part(got[k].imag, ref[k].imag, rtol))]
    assert not bad, f"{name}: {len(bad)} wrong (input, got, expected): {bad[:6]}"


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_functions_near_overflow_and_branch_points(bk, dtype):
    """Finite values the Annex G branches must not disturb: exp/cosh/sinh whose exp(x)
    overflows but whose result does not; atanh near +-1 with a tiny imaginary part and
    of huge arguments (~1/z), compared with NumPy."""
    bk.skip_dtype(dtype)
    # exp(x) (cosh x) overflows by ~10%: a result of modulus ~0.8 * exp(x) stays finite
    ex, ch = (88.8, 89.5) if dtype == "complex64" else (709.9, 710.6)
    cases = {"exp": [ex + 0.785j, ex - 2.356j, -ex + 0.785j],
             "cosh": [ch + 0.785j, -ch + 2.356j, ch - 0.785j],
             "sinh": [ch + 0.785j, -ch - 2.356j, ch - 0.785j],
             "atanh": [1 + 1e-30j, -1 + 1e-30j, 1e30 + 1j, 3e20 + 2e20j, 0.5 + 1e30j,
                       -1e-3 + 0.5j, 0.3 - 0.2j],
             "atan": [1e-30 + 1j, 1 + 1e30j, 2e20 - 3e20j]}
    for name, vals in cases.items():
        z = np.array(vals, dtype)
        with np.errstate(all="ignore"):
            exp = getattr(np, name)(z.astype(np.complex128))
        assert np.all(np.isfinite(exp)), (name, exp)
        with np.errstate(all="ignore"):
            got = getattr(bk.be, name)(bk.dev(z))
        bk.check(got, exp.astype(dtype), rtol=1e-5 if dtype == "complex64" else 1e-13, atol=0)


@pytest.mark.parametrize("name", ["exp", "negative", "isnan", "erf", "abs"])
def test_unary_out(bk, name):
    a = rand((9,), np.float32, -3, 3)
    x = bk.dev(a)
    out = x if name not in PREDICATES else bk.dev(np.zeros(a.shape, bool))
    r = getattr(bk.be, name)(x, out=out)
    want = getattr(NP, name)(a)
    bk.check(out, want)
    assert r is out or bk.host(r).tolist() == want.tolist()


def test_zero_d_results_are_arrays(bk):
    x = bk.dev(np.float32(2.0))
    for r in (bk.exp(x), bk.add(x, x), bk.less(x, 1.0), bk.add(x, 1.0),
              bk.sum(bk.dev(np.ones(3, np.float32)), (0,), False)):
        assert bk.host(r).shape == ()  # host() checks the array type: never a scalar


# ------------------------------------------------------------------------ binary
_BDOMAIN = {"divide": ((-5, 5), (0.5, 5)), "pow": ((0.1, 3), (-3, 3)),
            "logaddexp": ((-30, 30), (-30, 30)), "floor_divide": ((-50, 50), (0.5, 7)),
            "remainder": ((-50, 50), (0.5, 7))}


def _binary_data(name, dtype, shape=(4, 6)):
    (alo, ahi), (blo, bhi) = _BDOMAIN.get(name, ((-5, 5), (-5, 5)))
    a, b = rand(shape, dtype, alo, ahi), rand(shape, dtype, blo, bhi)
    a2, b2 = a.reshape(-1, shape[-1]), b.reshape(-1, shape[-1])  # views for the edits
    if dtype.kind in "fc" and name in ("divide", "floor_divide", "remainder"):
        b = b * np.where(rng.random(b.shape) < 0.5, -1, 1).astype(dtype)
        b2 = b.reshape(-1, shape[-1])
    if name == "pow" and dtype.kind in "iu":
        a = rng.integers(-4 if dtype.kind == "i" else 0, 5, shape).astype(dtype)
        b = rng.integers(0, 9, shape).astype(dtype)
        b2 = b.reshape(-1, shape[-1])
        b2[0, :3] = (70, 63, 1)
    if name in ("bitwise_left_shift", "bitwise_right_shift"):
        bits = 8 * dtype.itemsize
        b = rng.integers(-2 if dtype.kind == "i" else 0, bits + 3, shape).astype(dtype)
    if name in ("floor_divide", "remainder") and dtype.kind in "iu":
        a2, b2 = a.reshape(-1, shape[-1]), b.reshape(-1, shape[-1])
        b2[0, :2] = 0  # division by zero gives 0 (NumPy), never a trap
        if dtype.kind == "i":
            info = np.iinfo(dtype)
            a2[1, 0], b2[1, 0] = info.min, -1  # MIN // -1 wraps
            b2[2] = rng.integers(-9, 10, shape[-1])
    if name in ("maximum", "minimum", "equal", "less", "not_equal") and dtype.kind in "fc":
        b.reshape(-1, shape[-1])[0, :2] = a.reshape(-1, shape[-1])[0, :2]
    return a, b


@pytest.mark.parametrize("name,dtype", _ew_cases(BINARY))
def test_binary(bk, name, dtype):
    _sweep_or_skip(bk, name, dtype)
    same = name in _SAME_DTYPE or dtype.kind in "biu" or name in PREDICATES
    exact = same and dtype.kind != "c" and name not in ("floor_divide", "remainder")
    for shape in _sizes(bk):
        shape = shape if len(shape) == 2 else (shape[0] // 6 + 3, 6)
        a, b = _binary_data(name, dtype, shape)
        with np.errstate(all="ignore"):
            exp = getattr(NP, name)(a, b) if same else getattr(NP, name)(wide(a), wide(b))
            got = getattr(bk.be, name)(bk.dev(a), bk.dev(b))
        bk.check(got, exp, dtype=result_dtype(name, dtype), exact=exact)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "pow", "maximum",
                                  "less", "remainder", "atan2"])
@pytest.mark.parametrize("dtype", ["float32", "int64", "complex64"])
def test_binary_python_scalars(bk, name, dtype):
    dtype = np.dtype(dtype)
    if not core_calls(name, dtype):
        pytest.skip(f"core never calls {name} on {dtype}")
    a = rand((3, 5), dtype, 0.5, 4)
    if dtype.kind == "i":
        a = rng.integers(1, 5, (3, 5)).astype(dtype)
    s = {"f": 1.5, "i": 3, "c": 1.5 - 0.5j}[dtype.kind]
    x = bk.dev(a)
    with np.errstate(all="ignore"):
        bk.check(getattr(bk.be, name)(x, s), getattr(NP, name)(a, np.asarray(s, dtype)),
                 dtype=result_dtype(name, dtype))
        bk.check(getattr(bk.be, name)(s, x), getattr(NP, name)(np.asarray(s, dtype), a),
                 dtype=result_dtype(name, dtype))


@pytest.mark.parametrize("name,dtype,scalar", [
    ("add", "float32", 1.5), ("multiply", "int64", -3), ("subtract", "uint64", 2**63),
    ("pow", "float16", 2.0), ("less", "int8", 5), ("logical_or", "bool", True),
    ("add", "complex64", 1 - 2j), ("maximum", "uint8", 200), ("floor_divide", "int32", -3),
    ("remainder", "int16", 4), ("bitwise_right_shift", "uint32", 3)])
def test_binary_with_edge_python_scalars(bk, name, dtype, scalar):
    """Scalars at the edge of the operand dtype (2**63 for uint64, 200 for uint8)."""
    dtype = np.dtype(dtype)
    bk.skip_dtype(dtype)
    a = rand((9,), dtype, 0.5, 3) if dtype.kind in "fc" else \
        (rng.random(9) < 0.5 if dtype.kind == "b" else rng.integers(0, 50, 9).astype(dtype))
    if dtype == np.uint64:
        a = a + np.uint64(2**63)
    with np.errstate(all="ignore"):
        bk.check(getattr(bk.be, name)(bk.dev(a), scalar), getattr(NP, name)(a, scalar))
        bk.check(getattr(bk.be, name)(scalar, bk.dev(a)), getattr(NP, name)(scalar, a))


def test_float_division_family_special_values(bk):
    a = np.array([1.0, 0.0, -1.0, np.inf, 5.0, -7.5, 7.5, -0.0, np.nan], np.float64)
    b = np.array([0.0, 0.0, 0.0, 2.0, np.inf, 2.0, -2.0, 3.0, 1.0], np.float64)
    for name in ("floor_divide", "remainder", "divide", "copysign", "nextafter", "maximum",
                 "minimum", "hypot", "atan2", "logaddexp"):
        for dt in (np.float64, np.float32):
            if not bk.supports(dt):
                continue
            with np.errstate(all="ignore"):
                exp = getattr(NP, name)(a.astype(dt), b.astype(dt))
                got = getattr(bk.be, name)(bk.dev(a.astype(dt)), bk.dev(b.astype(dt)))
            bk.check(got, exp)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_floor_divide_near_integer_quotients(bk, dtype):
    """floor(a / b) is one too big when a / b rounds up to an integer: the contract is
    NumPy's fmod-based result."""
    dtype = np.dtype(dtype)
    bk.skip_dtype(dtype)
    b = rng.uniform(0.1, 3, 2000).astype(dtype)
    a = np.nextafter((rng.integers(1, 50, 2000) * b).astype(dtype), dtype.type(0))
    a = np.concatenate([a, np.array([-0.0, 1, -1, np.inf, 5, -7.5, 3], dtype)])
    b = np.concatenate([b, np.array([1, 0, 0, 2, np.inf, 2, -np.inf], dtype)])
    with np.errstate(all="ignore"):
        bk.check(bk.floor_divide(bk.dev(a), bk.dev(b)), NP.floor_divide(a, b), exact=True)
        bk.check(bk.floor_divide(bk.dev(a), 0.75), NP.floor_divide(a, dtype.type(0.75)),
                 exact=True)
        bk.check(bk.floor_divide(2.5, bk.dev(b)), NP.floor_divide(dtype.type(2.5), b),
                 exact=True)


def test_nan_propagates_through_maximum_minimum(bk):
    a = np.array([np.nan, 1.0, 2.0, np.nan, -np.inf], np.float32)
    b = np.array([1.0, np.nan, 1.0, np.nan, 2.0], np.float32)
    bk.check(bk.maximum(bk.dev(a), bk.dev(b)), np.maximum(a, b))
    bk.check(bk.minimum(bk.dev(a), bk.dev(b)), np.minimum(a, b))
    bk.check(bk.maximum(bk.dev(a), 2.0), np.maximum(a, np.float32(2.0)))
    bk.check(bk.minimum(bk.dev(a), 2.0), np.minimum(a, np.float32(2.0)))


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "atan2", "less"])
def test_binary_out_aliasing_an_input(bk, name):
    a, b = rand((9,), np.float32, -3, 3), rand((9,), np.float32, -3, 3)
    x, y = bk.dev(a), bk.dev(b)
    out = x if name not in PREDICATES else bk.dev(np.zeros(a.shape, bool))
    getattr(bk.be, name)(x, y, out=out)
    bk.check(out, getattr(NP, name)(a, b))
    z = bk.dev(a)
    getattr(bk.be, name)(y, z, out=z if name not in PREDICATES else out)  # out is x2
    bk.check(z if name not in PREDICATES else out, getattr(NP, name)(b, a))


def test_out_argument_and_inplace_aliasing(bk):
    a = rand((4, 5), np.float32)
    x = bk.dev(a)
    r = bk.add(x, 1.0, out=x)
    assert r is x
    bk.check(x, a + 1)
    # out is a strided view of its own input: writes reach the base
    y = bk.dev(a)
    v = bk.index(y, (slice(0, 4, 2), slice(0, 5, 1)))
    bk.multiply(v, 2.0, out=v)
    exp = a.copy()
    exp[::2] *= 2
    bk.check(y, exp)
    # partial overlap: out shifted against its input
    z = bk.dev(np.arange(6, dtype=np.float32))
    bk.add(bk.index(z, (slice(0, 5, 1),)), 0.0, out=bk.index(z, (slice(1, 6, 1),)))
    bk.check(z, np.array([0, 0, 1, 2, 3, 4], np.float32))


@pytest.mark.parametrize("dtype", ["float32", "int64", "complex64", "bool"])
def test_where(bk, dtype):
    dtype = np.dtype(dtype)
    for shape in _sizes(bk):
        c = rng.random(shape) < 0.5
        a, b = rand(shape, dtype, -3, 3), rand(shape, dtype, -3, 3)
        bk.check(bk.where(bk.dev(c), bk.dev(a), bk.dev(b)), NP.where(c, a, b))
        s = dtype.type(1).item()
        bk.check(bk.where(bk.dev(c), bk.dev(a), s), NP.where(c, a, s))
        bk.check(bk.where(bk.dev(c), s, bk.dev(b)), NP.where(c, s, b))
