"""OpenCLBackend's primitives against the NumPy backend, on ``opencl:0``.

Every primitive of the contract (``omnitensor/backends/base.py``) is called directly on
CLArrays and compared with NumPy on the same host data: float results in float64 with
rtol 2e-5 (float32/complex64) or 1e-11 (float64/complex128), integer and bool results
exactly (wrapping, Python-style ``//``/``%``, NumPy's shift rules). Layout tests cover
strided, broadcast (stride 0), flipped (negative stride), permuted, 0-d and empty arrays.

The OpenCL backend compiles its kernels on first use (PoCL: ~0.1-0.2 s per kernel, cached
on disk in ``~/.cache/pocl`` afterwards), so a cold run of this module is dominated by
compilation and a warm one takes seconds.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

pytest.importorskip("pyopencl", reason="pyopencl is not installed: pip install 'omnitensor[opencl]'")

from omnitensor.backends import registry  # noqa: E402
from omnitensor.backends.base import BINARY, PREDICATES, UNARY  # noqa: E402
from omnitensor.backends.philox import philox_bits  # noqa: E402
from omnitensor.errors import BackendError, UnsupportedDTypeError  # noqa: E402

CL, WHY = registry.try_backend("opencl")
if CL is None:
    pytest.skip(f"no OpenCL device: {WHY}", allow_module_level=True)

from omnitensor.backends.opencl import CLArray, ewops  # noqa: E402

NP = registry.get_backend("cpu")
ALL = [np.dtype(d) for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                             "uint32", "uint64", "float16", "float32", "float64", "complex64",
                             "complex128")]
DTYPES = [d for d in ALL if CL.supports_dtype(d, 0)]
NO_FP16 = "float16 needs cl_khr_fp16: " + (CL.dtype_unsupported_reason(np.dtype("float16"), 0)
                                           or "")
RTOL = {"e": 2e-3, "f": 2e-5, "d": 1e-11, "F": 2e-5, "D": 1e-11}
rng = np.random.default_rng(1234)


# ----------------------------------------------------------------------------- helpers
def dev(a) -> CLArray:
    return CL.from_numpy(np.asarray(a), 0)


def host(x) -> np.ndarray:
    assert isinstance(x, CLArray), f"expected a CLArray, got {type(x)}"
    return CL.to_numpy(x)


def skip_dtype(dtype) -> None:
    if not CL.supports_dtype(np.dtype(dtype), 0):
        pytest.skip(NO_FP16 if np.dtype(dtype) == np.float16 else f"no {dtype} on opencl:0")


def check(got, expected, *, exact=False, rtol=None, dtype=None, atol=None) -> None:
    """``got`` (CLArray) equals ``expected`` (NumPy) in dtype, shape and value."""
    g = host(got)
    e = np.asarray(expected)
    assert g.dtype == (dtype or e.dtype), f"dtype {g.dtype} != {dtype or e.dtype}"
    assert g.shape == e.shape, f"shape {g.shape} != {e.shape}"
    if exact or g.dtype.kind in "biu":
        np.testing.assert_array_equal(g, e.astype(g.dtype) if e.dtype != g.dtype else e)
        return
    r = RTOL[g.dtype.char] if rtol is None else rtol
    wide = np.complex128 if g.dtype.kind == "c" else np.float64
    np.testing.assert_allclose(g.astype(wide), e.astype(wide), rtol=r,
                               atol=r * 0.1 if atol is None else atol, equal_nan=True)


def rand(shape, dtype, lo=-5.0, hi=5.0) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    if dtype.kind == "c":
        return (rng.uniform(lo, hi, shape) + 1j * rng.uniform(lo, hi, shape)).astype(dtype)
    return rng.uniform(lo, hi, shape).astype(dtype)


def wide(a: np.ndarray) -> np.ndarray:
    """The float64/complex128 copy NumPy computes references in."""
    if a.dtype.kind == "f":
        return a.astype(np.float64)
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    return a


def result_dtype(name: str, dtype: np.dtype) -> np.dtype:
    if name in PREDICATES:
        return np.dtype(bool)
    if name in ("real", "imag", "abs") and dtype.kind == "c":
        return np.dtype(dtype.char.lower())
    return dtype


def kinds_of(table, name):
    return set(table.get(name, {}))


def _core_calls(name: str, dtype: np.dtype) -> bool:
    """Whether core ever hands primitive ``name`` operands of ``dtype`` (its dtype rule
    computes in that dtype); primitives are only called that way."""
    from omnitensor.core import dtypes as _dt
    from omnitensor.core.ops.elementwise import BINARY_OPS, UNARY_OPS
    from omnitensor.errors import DTypeError
    op = UNARY_OPS.get(name) or BINARY_OPS.get(name)
    if op is None:
        return True
    d = _dt.as_dtype(dtype)
    try:
        cd, _ = op.rule(name, d) if name in UNARY_OPS else op.rule(name, d, d)
    except DTypeError:
        return False
    if dtype.kind in _FORWARDED.get(name, ""):
        return False  # core's forward handles this kind without the primitive
    return cd is d


# kinds for which core's op row answers without calling the primitive (integers are their
# own floor; predicates of integers are constants; conj/real of reals are the input)
_FORWARDED = {"floor": "biu", "ceil": "biu", "trunc": "biu", "round": "biu",
              "isnan": "biu", "isinf": "biu", "isfinite": "biu", "signbit": "bui",
              "conj": "biuf", "real": "biuf", "imag": "biuf", "positive": "biufc"}


def ew_cases(table, names):
    out = []
    for name in names:
        ks = kinds_of(table, name)
        for d in ALL:
            if d.kind in ks and not (d == np.float16 and name in ewops.NO_HALF) and \
                    _core_calls(name, d):
                marks = [] if CL.supports_dtype(d, 0) else [pytest.mark.skip(reason=NO_FP16)]
                out.append(pytest.param(name, d, id=f"{name}-{d}", marks=marks))
    return out


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


# -------------------------------------------------------------------------- identity
def test_device_identity_and_info():
    n = CL.device_count()
    assert n >= 1
    import pyopencl as cl
    expected = [d for p in cl.get_platforms() for d in p.get_devices()]
    assert n == len(expected)
    info = CL.device_info(0)
    for key in ("name", "platform", "vendor", "compute_units", "memory", "fp16", "fp64",
                "driver"):
        assert key in info
    assert info["name"] == expected[0].name.strip()
    assert "pyopencl" in CL.version()
    assert CL.name == "opencl" and CL.asynchronous is True
    assert CL.unavailable_reason() is None


def test_float16_reason_names_the_extension():
    if CL.supports_dtype(np.dtype("float16"), 0):
        pytest.skip("this device has cl_khr_fp16")
    why = CL.dtype_unsupported_reason(np.dtype("float16"), 0)
    assert "cl_khr_fp16" in why and CL.device_info(0)["name"] in why
    with pytest.raises(UnsupportedDTypeError):
        CL.empty((2,), np.dtype("float16"), 0)


def test_import_omnitensor_does_not_import_pyopencl():
    import subprocess
    import sys
    code = "import sys, omnitensor; print('pyopencl' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def test_out_of_memory_is_a_clear_error():
    with pytest.raises(BackendError, match=r"opencl:0.*(allocat|memory)"):
        CL.empty((1 << 40,), np.dtype("float32"), 0)


# ------------------------------------------------------------------------- memory
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_roundtrip_full_arange(dtype):
    skip_dtype(dtype)
    a = rand((3, 4), dtype)
    x = dev(a)
    check(x, a, exact=True)
    check(CL.full((2, 3), 1, dtype, 0), np.full((2, 3), 1, dtype), exact=True)
    if dtype.kind in "iuf":
        check(CL.arange(2, 3, 5, dtype, 0), NP.arange(2, 3, 5, dtype, 0), exact=True)
    check(CL.copy(x), a, exact=True)
    check(CL.empty((0, 3), dtype, 0), np.empty((0, 3), dtype))


def test_arange_float_matches_numpy_rounding():
    check(CL.arange(0.1, 0.3, 17, np.dtype("float32"), 0),
          NP.arange(0.1, 0.3, 17, np.dtype("float32"), 0), exact=True)
    check(CL.arange(-3, -7, 9, np.dtype("int64"), 0),
          NP.arange(-3, -7, 9, np.dtype("int64"), 0), exact=True)


@pytest.mark.parametrize("src", ALL, ids=str)
def test_astype_all_pairs(src):
    skip_dtype(src)
    base = rng.uniform(-100, 100, (5, 7))
    if src.kind in "bu":
        base = np.abs(base)
    a = base.astype(src) if src.kind != "c" else (base + 1j * base[::-1]).astype(src)
    for dst in DTYPES:
        if src.kind in "fc" and dst.kind == "u" and src.kind != "b":
            a2 = np.abs(a.real).astype(src) if src.kind == "c" else np.abs(a)
        else:
            a2 = a
        with np.errstate(all="ignore"):
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exp = a2.astype(dst)
        check(CL.astype(dev(a2), dst), exp, exact=dst.kind in "biu",
              rtol=1e-6 if dst.kind in "fc" and np.dtype(dst).itemsize < 8 else None)


def test_astype_strided_and_to_bool():
    a = np.array([[0.0, -0.0, 2.5], [np.nan, 1e-30, 0]], np.float32)
    check(CL.astype(CL.permute(dev(a), (1, 0)), np.dtype(bool)), a.T.astype(bool))


# ------------------------------------------------------------------------ unary
UNARY_NAMES = list(UNARY) + ["sigmoid", "rsqrt"]


@pytest.mark.parametrize("name,dtype", ew_cases(ewops.UNARY, UNARY_NAMES))
def test_unary(name, dtype):
    lo, hi = _DOMAIN.get(name, (-5.0, 5.0))
    if dtype.kind == "c":
        lo, hi = -2.0, 2.0
    a = rand((5, 7), dtype, lo, hi)
    if name == "round" and dtype.kind in "fc":
        a = (np.round(a * 2) / 2).astype(dtype)  # exercise ties: half to even
    got = getattr(CL, name)(dev(a))
    exp = _unary_ref(name, a)
    check(got, exp, dtype=result_dtype(name, dtype),
          exact=name in _SAME_DTYPE and dtype.kind not in "c" and name != "square")


def test_unary_special_values():
    for dt in (np.float32, np.float64):
        a = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -2.5, 0.5, -0.5, 2.5, 1e-40],
                     dt)
        for name in ("isnan", "isinf", "isfinite", "signbit", "sign", "floor", "ceil",
                     "round", "trunc", "abs", "negative", "exp", "log", "sqrt", "expm1",
                     "log1p", "erf", "tanh"):
            with np.errstate(all="ignore"):
                exp = _unary_ref(name, a)
            check(getattr(CL, name)(dev(a)), exp, dtype=result_dtype(name, np.dtype(dt)))


def test_expm1_log1p_accuracy_near_zero():
    a = np.array([1e-10, -3e-9, 1e-5, -1e-7], np.float64)
    check(CL.expm1(dev(a)), np.expm1(a), rtol=1e-14)
    check(CL.log1p(dev(a)), np.log1p(a), rtol=1e-14)
    f = a.astype(np.float32)
    check(CL.expm1(dev(f)), np.expm1(f.astype(np.float64)), rtol=2e-6, dtype=f.dtype)


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
def test_complex_special_values(name, dtype):
    z = np.array([complex(r, i) for r in _CPARTS for i in _CPARTS], dtype)
    got = host(getattr(CL, name)(dev(z)))
    ref = _complex_ref(name, z)
    rtol = 2e-6 if dtype == "complex64" else 1e-14
    bad = [(z[k], got[k], ref[k]) for k in range(z.size)
           if not (_same_part(got[k].real, ref[k].real, rtol)
                   and _same_part(got[k].imag, ref[k].imag, rtol))]
    assert not bad, f"{name}: {len(bad)} wrong (input, got, expected): {bad[:6]}"


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_functions_near_overflow_and_branch_points(dtype):
    """Finite values the Annex G branches must not disturb: exp/cosh/sinh whose exp(x)
    overflows but whose result does not; atanh near +-1 with a tiny imaginary part and
    of huge arguments (~1/z), compared with NumPy."""
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
        check(getattr(CL, name)(dev(z)), exp.astype(dtype),
              rtol=1e-5 if dtype == "complex64" else 1e-13, atol=0)


# ------------------------------------------------------------------------ binary
_BDOMAIN = {"divide": ((-5, 5), (0.5, 5)), "pow": ((0.1, 3), (-3, 3)),
            "logaddexp": ((-30, 30), (-30, 30)), "floor_divide": ((-50, 50), (0.5, 7)),
            "remainder": ((-50, 50), (0.5, 7))}


def _binary_data(name, dtype):
    (alo, ahi), (blo, bhi) = _BDOMAIN.get(name, ((-5, 5), (-5, 5)))
    a, b = rand((4, 6), dtype, alo, ahi), rand((4, 6), dtype, blo, bhi)
    if dtype.kind in "fc" and name in ("divide", "floor_divide", "remainder"):
        b = b * np.where(rng.random(b.shape) < 0.5, -1, 1).astype(dtype)
    if name == "pow" and dtype.kind in "iu":
        a = rng.integers(-4 if dtype.kind == "i" else 0, 5, (4, 6)).astype(dtype)
        b = rng.integers(0, 9, (4, 6)).astype(dtype)
        b[0, :3] = (70, 63, 1)
    if name in ("bitwise_left_shift", "bitwise_right_shift"):
        bits = 8 * dtype.itemsize
        b = rng.integers(-2 if dtype.kind == "i" else 0, bits + 3, (4, 6)).astype(dtype)
    if name in ("floor_divide", "remainder") and dtype.kind in "iu":
        b[0, :2] = 0  # division by zero gives 0 (NumPy), never a trap
        if dtype.kind == "i":
            info = np.iinfo(dtype)
            a[1, 0], b[1, 0] = info.min, -1  # MIN // -1 wraps
            b[2] = rng.integers(-9, 10, 6)
    if name in ("maximum", "minimum", "equal", "less", "not_equal") and dtype.kind in "fc":
        b[0, :2] = a[0, :2]
    return a, b


@pytest.mark.parametrize("name,dtype", ew_cases(ewops.BINARY, BINARY))
def test_binary(name, dtype):
    a, b = _binary_data(name, dtype)
    same = name in _SAME_DTYPE or dtype.kind in "biu" or name in PREDICATES
    with np.errstate(all="ignore"):
        exp = getattr(NP, name)(a, b) if same else getattr(NP, name)(wide(a), wide(b))
    exact = same and dtype.kind != "c" and name not in ("floor_divide", "remainder")
    check(getattr(CL, name)(dev(a), dev(b)), exp, dtype=result_dtype(name, dtype),
          exact=exact)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "pow", "maximum",
                                  "less", "remainder", "atan2"])
@pytest.mark.parametrize("dtype", ["float32", "int64", "complex64"])
def test_binary_python_scalars(name, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind not in kinds_of(ewops.BINARY, name):
        pytest.skip(f"core never calls {name} on {dtype}")
    a = rand((3, 5), dtype, 0.5, 4)
    if dtype.kind == "i":
        a = rng.integers(1, 5, (3, 5)).astype(dtype)
    s = {"f": 1.5, "i": 3, "c": 1.5 - 0.5j}[dtype.kind]
    x = dev(a)
    with np.errstate(all="ignore"):
        check(getattr(CL, name)(x, s), getattr(NP, name)(a, np.asarray(s, dtype)),
              dtype=result_dtype(name, dtype))
        check(getattr(CL, name)(s, x), getattr(NP, name)(np.asarray(s, dtype), a),
              dtype=result_dtype(name, dtype))


def test_float_division_family_special_values():
    a = np.array([1.0, 0.0, -1.0, np.inf, 5.0, -7.5, 7.5, -0.0, np.nan], np.float64)
    b = np.array([0.0, 0.0, 0.0, 2.0, np.inf, 2.0, -2.0, 3.0, 1.0], np.float64)
    for name in ("floor_divide", "remainder", "divide", "copysign", "nextafter", "maximum",
                 "minimum", "hypot", "atan2", "logaddexp"):
        for dt in (np.float64, np.float32):
            with np.errstate(all="ignore"):
                exp = getattr(NP, name)(a.astype(dt), b.astype(dt))
            check(getattr(CL, name)(dev(a.astype(dt)), dev(b.astype(dt))), exp)


def test_nan_propagates_through_maximum_minimum():
    a = np.array([np.nan, 1.0, 2.0, np.nan], np.float32)
    b = np.array([1.0, np.nan, 1.0, np.nan], np.float32)
    check(CL.maximum(dev(a), dev(b)), np.maximum(a, b))
    check(CL.minimum(dev(a), dev(b)), np.minimum(a, b))


def test_out_argument_and_inplace_aliasing():
    a = rand((4, 5), np.float32)
    x = dev(a)
    r = CL.add(x, 1.0, out=x)
    assert r is x
    check(x, a + 1)
    # out is a strided view of its own input: writes reach the base
    y = dev(a)
    v = CL.index(y, (slice(0, 4, 2), slice(0, 5, 1)))
    CL.multiply(v, 2.0, out=v)
    exp = a.copy()
    exp[::2] *= 2
    check(y, exp)
    # partial overlap: out shifted against its input
    z = dev(np.arange(6, dtype=np.float32))
    CL.add(CL.index(z, (slice(0, 5, 1),)), 0.0, out=CL.index(z, (slice(1, 6, 1),)))
    check(z, np.array([0, 0, 1, 2, 3, 4], np.float32))


# ------------------------------------------------------------------------ layouts
def _views(a: np.ndarray):
    """(description, numpy view, matching CLArray view) of one 3-D array."""
    x = dev(a)
    yield "contiguous", a, x
    yield "permuted", a.transpose(2, 0, 1), CL.permute(x, (2, 0, 1))
    yield "flipped", a[::-1, :, ::-1], CL.flip(x, (0, 2))
    yield "sliced", a[1:, ::2, 1:4], CL.index(x, (slice(1, 3, 1), slice(0, 5, 2),
                                                  slice(1, 4, 1)))
    yield "negative step", a[:, ::-2], CL.index(x, (slice(0, 3, 1), slice(4, None, -2)))
    yield "broadcast", np.broadcast_to(a[:, :1], (3, 5, 6)), CL.broadcast_to(
        CL.index(x, (slice(0, 3, 1), slice(0, 1, 1))), (3, 5, 6))
    yield "new axis", a[None, 1], CL.index(x, (None, 1))
    yield "diagonal", np.diagonal(a, 1, 1, 2), CL.diagonal(x, 1, 1, 2)
    yield "0-d", a[1, 2, 3], CL.index(x, (1, 2, 3))
    yield "empty", a[:, 2:2], CL.index(x, (slice(0, 3, 1), slice(2, 2, 1)))


@pytest.mark.parametrize("dtype", ["float32", "int16", "complex128"])
def test_ops_on_every_layout(dtype):
    a = rand((3, 5, 6), dtype, -3, 3)
    for what, av, xv in _views(a):
        check(xv, av, exact=True)
        check(CL.negative(xv), -av, exact=True)
        check(CL.add(xv, xv), av + av, exact=dtype != "complex128")
        check(CL.multiply(xv, 2), av * 2, exact=dtype != "complex128")
        check(CL.equal(xv, xv), av == av)
        check(CL.contiguous(xv), av, exact=True)
        assert CL.strides(CL.contiguous(xv)) == tuple(
            s // av.itemsize for s in np.ascontiguousarray(av).strides) or av.size <= 1
        check(CL.where(CL.greater(xv, CL.multiply(xv, 0)) if dtype != "complex128"
                       else CL.not_equal(xv, 0), xv, 0),
              np.where(av > 0 if dtype != "complex128" else av != 0, av, 0), exact=True)


def test_binary_mixed_layouts():
    a = rand((4, 5, 6), np.float32)
    b = rand((6,), np.float32)
    x, y = dev(a), dev(b)
    check(CL.add(x, CL.broadcast_to(y, (4, 5, 6))), a + b)  # bias add, inner unit stride
    check(CL.subtract(CL.permute(x, (0, 2, 1)), CL.broadcast_to(CL.reshape(
        dev(b), (1, 6, 1)), (4, 6, 5))), a.transpose(0, 2, 1) - b[None, :, None])
    check(CL.maximum(CL.flip(x, (1,)), x), np.maximum(a[:, ::-1], a))


def test_views_share_memory_and_writes_reach_base():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = dev(a)
    v = CL.permute(x, (2, 1, 0))
    assert v.data is x.data
    CL.assign(CL.index(v, (slice(0, 4, 2),)), 7.0)
    exp = a.copy()
    exp[:, :, ::2] = 7
    check(x, exp)
    d = CL.diagonal(CL.reshape(x, (6, 4)), 0, 0, 1)
    CL.assign(d, dev(np.array([-1, -2, -3, -4], np.float32)))
    exp2 = exp.reshape(6, 4).copy()
    np.fill_diagonal(exp2, [-1, -2, -3, -4])
    check(x, exp2.reshape(2, 3, 4))
    f = CL.flip(x, (0, 1, 2))
    CL.assign(f, CL.copy(x))  # overlapping self-assignment through a reversed view
    check(x, exp2.reshape(2, 3, 4)[::-1, ::-1, ::-1])


def test_reshape_copy_semantics():
    a = np.arange(24, dtype=np.int32).reshape(4, 6)
    x = dev(a)
    v = CL.reshape(x, (2, 2, 6))
    assert v.data is x.data
    t = CL.permute(x, (1, 0))
    with pytest.raises(ValueError):
        CL.reshape(t, (24,), copy=False)
    check(CL.reshape(t, (24,)), a.T.reshape(24))
    c = CL.reshape(x, (24,), copy=True)
    assert c.data is not x.data
    check(CL.reshape(CL.index(x, (slice(0, 4, 1), slice(0, 6, 2))), (4, 3, 1)),
          a[:, ::2].reshape(4, 3, 1))
    check(CL.reshape(CL.index(x, (slice(0, 4, 2),)), (2, 2, 3)), a[::2].reshape(2, 2, 3))
    s = CL.index(x, (1, 2))
    assert CL.reshape(s, (1, 1)).shape == (1, 1)
    for bad in ((-1, 6), (5, 6), (2, -2, -6)):  # core resolves -1: the backend checks
        with pytest.raises(ValueError, match="resolved shape of 24 elements"):
            CL.reshape(x, bad)
    assert CL.reshape(dev(np.zeros((0, 3), np.float32)), (3, 0)).shape == (3, 0)


def test_concat_pad_diagonal():
    a, b = rand((2, 3), np.float64), rand((4, 3), np.float64)
    check(CL.concat([dev(a), dev(b)], 0), np.concatenate([a, b], 0), exact=True)
    check(CL.concat([CL.permute(dev(b), (1, 0)), dev(a.T)], 1),
          np.concatenate([b.T, a.T], 1), exact=True)
    check(CL.pad(dev(a), ((1, 2), (0, 3)), -1.5),
          np.pad(a, ((1, 2), (0, 3)), constant_values=-1.5), exact=True)
    c = rand((3, 4, 5), np.int32)
    check(CL.diagonal(dev(c), -1, 2, 0), np.diagonal(c, -1, 2, 0), exact=True)


# --------------------------------------------------------------------- reductions
_AXES3 = [ax for r in (1, 2, 3) for ax in itertools.combinations(range(3), r)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint64", "complex64",
                                   "int32", "float16"])
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min"])
def test_reductions_every_axes_subset(op, dtype):
    dtype = np.dtype(dtype)
    skip_dtype(dtype)
    if dtype.kind == "c" and op in ("max", "min"):
        pytest.skip("complex numbers are not ordered")
    a = rand((4, 3, 5), dtype, 0.5, 1.5) if op == "prod" else rand((4, 3, 5), dtype)
    if dtype.kind in "iu" and op in ("sum", "prod"):
        a = rng.integers(0 if dtype.kind == "u" else -3, 4, (4, 3, 5)).astype(dtype)
    for view in (a, a.transpose(2, 0, 1)):
        x = dev(a)
        xv = x if view is a else CL.permute(x, (2, 0, 1))
        for axes in _AXES3:
            for keep in (False, True):
                exp = getattr(NP, op)(wide(view), axes, keep)
                check(getattr(CL, op)(xv, axes, keep), exp.astype(dtype),
                      exact=dtype.kind in "iu", rtol=2e-3 if dtype == np.float16 else None)


@pytest.mark.parametrize("op", ["any", "all"])
def test_any_all_every_axes_subset(op):
    a = rng.random((4, 3, 5)) < (0.2 if op == "any" else 0.9)
    for axes in _AXES3:
        check(getattr(CL, op)(dev(a), axes, True), getattr(NP, op)(a, axes, True))
        check(getattr(CL, op)(CL.flip(dev(a), (1,)), axes, False),
              getattr(NP, op)(a[:, ::-1], axes, False))


@pytest.mark.parametrize("shape,axes", [((300000,), (0,)), ((3, 70000), (1,)),
                                        ((70000, 40), (0,)), ((50, 3000, 3), (0, 2)),
                                        ((20000, 9), (1,))])
def test_large_reductions_split_and_outer_paths(shape, axes):
    a = rng.standard_normal(shape).astype(np.float32)
    x = dev(a)
    # a float32 sum with cancellation is only as exact as its terms: error relative to
    # sum(|a|) (NumPy's own float32 column sums are ~100x worse than this bound)
    check(CL.sum(x, axes, False), np.sum(a.astype(np.float64), axis=axes), rtol=2e-5,
          dtype=a.dtype, atol=2e-7 * np.sum(np.abs(a), axis=axes).max())
    check(CL.max(x, axes, False), np.max(a, axis=axes), exact=True)
    i = rng.integers(-100, 100, shape)
    check(CL.sum(dev(i), axes, False), np.sum(i, axis=axes))


def test_reduction_nan_and_empty():
    a = rand((3, 4), np.float32)
    a[1, 2] = np.nan
    check(CL.max(dev(a), (1,), False), np.max(a, axis=1))
    check(CL.min(dev(a), (0, 1), False), np.min(a))
    e = np.zeros((0, 3), np.float32)
    check(CL.sum(dev(e), (0,), False), np.zeros(3, np.float32))
    check(CL.prod(dev(e), (0,), True), np.ones((1, 3), np.float32))
    check(CL.sum(dev(e), (1,), False), np.zeros(0, np.float32))
    check(CL.all(dev(np.zeros((2, 0), bool)), (1,), False), np.ones(2, bool))


def test_sum_precision_of_a_long_float32_row():
    a = rng.random(1 << 21).astype(np.float32)
    got = float(host(CL.sum(dev(a), (0,), False)))
    assert abs(got - a.astype(np.float64).sum()) <= 2e-6 * a.sum()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "int64", "float16"])
def test_argmax_argmin_ties_and_nan(dtype):
    dtype = np.dtype(dtype)
    skip_dtype(dtype)
    a = rng.integers(0, 4, (5, 6, 7)).astype(dtype)  # many ties: first occurrence wins
    x = dev(a)
    for op in ("argmax", "argmin"):
        for axis in (None, 0, 1, 2):
            for keep in (False, True):
                check(getattr(CL, op)(x, axis, keep and axis is not None),
                      getattr(NP, op)(a, axis, keep and axis is not None))
        check(getattr(CL, op)(CL.permute(x, (2, 0, 1)), 1, False),
              getattr(NP, op)(a.transpose(2, 0, 1), 1, False))
    if dtype.kind == "f":
        b = a.copy()
        b[1, 2, 3] = b[1, 2, 5] = np.nan
        b[4, 0, 1] = np.nan
        for op in ("argmax", "argmin"):
            check(getattr(CL, op)(dev(b), 2, False), getattr(NP, op)(b, 2, False))
            check(getattr(CL, op)(dev(b), None, False), getattr(NP, op)(b, None, False))
    big = rng.standard_normal(300001).astype(dtype) if dtype.kind == "f" else \
        rng.integers(0, 100, 300001).astype(dtype)
    check(CL.argmax(dev(big), None, False), np.argmax(big))
    check(CL.argmin(dev(big), 0, False), np.argmin(big))


# -------------------------------------------------------------------------- scans
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex64", "uint64",
                                   "float16"])
def test_cumsum_cumprod(dtype):
    dtype = np.dtype(dtype)
    skip_dtype(dtype)
    a = rand((3, 4, 5), dtype, 0.5, 1.5)
    if dtype.kind in "iu":
        a = rng.integers(0, 5, (3, 4, 5)).astype(dtype)
    for axis in range(3):
        check(CL.cumsum(dev(a), axis), np.cumsum(wide(a), axis=axis).astype(dtype))
        check(CL.cumprod(dev(a), axis), np.cumprod(wide(a), axis=axis).astype(dtype))
        check(CL.cumsum(CL.flip(dev(a), (axis,)), axis),
              np.cumsum(wide(a)[::-1] if axis == 0 else np.flip(wide(a), axis), axis=axis)
              .astype(dtype))


def test_long_scan_parallel_path():
    a = rng.integers(-5, 6, 400000).astype(np.int64)
    check(CL.cumsum(dev(a), 0), np.cumsum(a))
    f = rng.random(300000).astype(np.float64)
    check(CL.cumsum(dev(f), 0), np.cumsum(f), rtol=1e-9)


@pytest.mark.parametrize("dtype", ["bool", "float32", "int8", "complex64"])
def test_nonzero(dtype):
    dtype = np.dtype(dtype)
    a = rand((6, 7, 3), dtype)
    if dtype.kind != "b":
        a = np.where(rng.random(a.shape) < 0.6, 0, a).astype(dtype)
    for view, xv in ((a, dev(a)), (a.transpose(1, 2, 0), CL.permute(dev(a), (1, 2, 0)))):
        got = CL.nonzero(xv)
        exp = np.nonzero(view)
        assert len(got) == len(exp)
        for g, e in zip(got, exp):
            check(g, e.astype(np.int64))
    big = rng.random(100000) < 0.3
    check(CL.nonzero(dev(big))[0], np.nonzero(big)[0].astype(np.int64))
    assert host(CL.nonzero(dev(np.zeros((3, 4), bool)))[1]).shape == (0,)


# -------------------------------------------------------------------------- sorting
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "int64", "bool",
                                   "float16"])
def test_sort_argsort_stable_with_nan(dtype):
    dtype = np.dtype(dtype)
    skip_dtype(dtype)
    a = rng.integers(0, 5, (4, 37)).astype(dtype)  # ties everywhere
    if dtype.kind == "f":
        a[0, [3, 10]] = np.nan
        a[1, 5] = -0.0
    x = dev(a)
    for axis in (0, 1):
        for desc in (False, True):
            check(CL.argsort(x, axis, desc, True), NP.argsort(a, axis, desc, True))
            check(CL.sort(x, axis, desc, True), NP.sort(a, axis, desc, True))


def test_sort_long_rows_and_views():
    a = rng.standard_normal((3, 5000)).astype(np.float32)
    a[0, ::7] = np.nan
    x = dev(a)
    check(CL.sort(x, 1, False, True), np.sort(a, 1))
    check(CL.argsort(CL.permute(x, (1, 0)), 0, True, True), NP.argsort(a.T, 0, True, True))
    b = rng.integers(0, 50, 100003).astype(np.int64)
    check(CL.argsort(dev(b), 0, False, True), np.argsort(b, kind="stable"))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side):
    s = np.sort(rng.integers(0, 20, 50)).astype(np.float64)
    s[-3:] = np.nan
    v = np.array([-1, 0, 3, 3.5, 19, 25, np.nan], np.float64)
    check(CL.searchsorted(dev(s), dev(v), side), NP.searchsorted(s, v, side))
    v2 = rng.integers(-2, 22, (4, 3)).astype(np.float64)
    check(CL.searchsorted(dev(s), dev(v2), side), NP.searchsorted(s, v2, side))
    sb = np.sort(rng.integers(0, 10, (2, 3, 8)), axis=-1).astype(np.int32)
    vb = rng.integers(-1, 11, (2, 3, 5)).astype(np.int32)
    check(CL.searchsorted(dev(sb), dev(vb), side), NP.searchsorted(sb, vb, side))


# ------------------------------------------------------------------- gather/scatter
@pytest.mark.parametrize("dtype", [d for d in ("bool", "int8", "int16", "int32", "int64",
                                               "uint16", "float32", "float64", "complex64",
                                               "complex128", "float16")])
def test_gather_scatter_with_duplicates(dtype):
    dtype = np.dtype(dtype)
    skip_dtype(dtype)
    a = rand((5, 6), dtype, -3, 3)
    i0 = np.array([[0, 4, 4], [2, 2, 2]], np.int64)
    i1 = np.array([[5, 1, 1], [3, 3, 0]], np.int64)
    x = dev(a)
    check(CL.gather_nd(x, (dev(i0), dev(i1))), a[i0, i1], exact=True)
    v = rand((2, 3), dtype, -3, 3)
    if dtype.kind in "iu":
        v = rng.integers(0, 5, (2, 3)).astype(dtype)
    y = dev(a)
    CL.scatter_nd(y, (dev(i0), dev(i1)), dev(v), True)
    exp = a.copy()
    NP.scatter_nd(exp, (i0, i1), v, True)
    check(y, exp)
    z = dev(a)
    ud0, ud1 = np.array([0, 1, 4], np.int64), np.array([2, 2, 5], np.int64)
    CL.scatter_nd(z, (dev(ud0), dev(ud1)), dev(v[0]), False)
    exp = a.copy()
    exp[ud0, ud1] = v[0]
    check(z, exp, exact=True)


def test_scatter_accumulate_many_duplicates_and_views():
    n = 200000
    idx = rng.integers(0, 17, n).astype(np.int64)
    vals = rng.random(n).astype(np.float32)
    acc = dev(np.zeros(17, np.float32))
    CL.scatter_nd(acc, (dev(idx),), dev(vals), True)
    check(acc, np.bincount(idx, vals.astype(np.float64), 17), rtol=1e-4, dtype=vals.dtype)
    ia = dev(np.zeros(17, np.int64))
    CL.scatter_nd(ia, (dev(idx),), CL.broadcast_to(dev(np.array(1, np.int64)), (n,)), True)
    check(ia, np.bincount(idx, minlength=17))
    # into a strided view: the writes reach the base
    base = dev(np.zeros((4, 6), np.int32))
    view = CL.index(base, (slice(0, 4, 1), slice(5, None, -2)))
    CL.scatter_nd(view, (dev(np.array([0, 3, 3])), dev(np.array([1, 2, 2]))),
                  dev(np.array([1, 2, 3], np.int32)), True)
    exp = np.zeros((4, 6), np.int32)
    exp[0, 3] += 1
    exp[3, 1] += 5
    check(base, exp)


def test_gather_with_broadcast_indices():
    a = rand((4, 5), np.float32)
    r = CL.broadcast_to(CL.reshape(dev(np.arange(4)), (4, 1)), (4, 3))
    c = dev(np.array([[0, 4, 2]] * 4, np.int64))
    check(CL.gather_nd(dev(a), (r, c)), a[np.arange(4)[:, None], [[0, 4, 2]] * 4],
          exact=True)


# ------------------------------------------------------------------------ matmul
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (7, 5, 3), (65, 33, 17), (129, 65, 130),
                                   (2, 200, 1), (1, 7, 129)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_sizes(m, k, n, dtype):
    a, b = rand((m, k), dtype, -1, 1), rand((k, n), dtype, -1, 1)
    check(CL.matmul(dev(a), dev(b)), wide(a) @ wide(b),
          rtol=1e-4 if dtype == "float32" else 1e-10, dtype=np.dtype(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "complex64",
                                   "complex128", "uint8", "bool", "float16"])
def test_matmul_batched_and_transposed(dtype):
    dtype = np.dtype(dtype)
    skip_dtype(dtype)
    a, b = rand((3, 9, 6), dtype, -1, 1), rand((3, 8, 6), dtype, -1, 1)
    if dtype.kind in "iu":
        a, b = a % 7, b % 7
    bt = np.swapaxes(b, 1, 2)
    exp = np.matmul(wide(a), wide(bt))
    if dtype.kind in "iub":
        exp = np.matmul(a, bt)
    tol = {"e": 5e-3, "f": 1e-4, "d": 1e-10, "F": 1e-4, "D": 1e-10}.get(dtype.char)
    check(CL.matmul(dev(a), CL.permute(dev(b), (0, 2, 1))), exp.astype(dtype), rtol=tol)
    at = np.ascontiguousarray(np.swapaxes(a, 1, 2))
    check(CL.matmul(CL.permute(dev(at), (0, 2, 1)), CL.permute(dev(b), (0, 2, 1))),
          exp.astype(dtype), rtol=tol)
    # broadcast batch (stride 0) and a sliced operand
    w = rand((6, 5), dtype, -1, 1)
    if dtype.kind in "iu":
        w = w % 7
    wb = CL.broadcast_to(dev(w), (3, 6, 5))
    exp2 = np.matmul(a, w) if dtype.kind in "iub" else np.matmul(wide(a), wide(w))
    check(CL.matmul(dev(a), wb), exp2.astype(dtype), rtol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_slices_are_bitwise_equal(dtype):
    """A product's rows and columns equal the products of the operand's rows and columns
    exactly (the Array API's tensordot/matmul stack checks): the small generic kernel and
    the register-blocked one fuse multiply-adds alike and sum k in one order."""
    from omnitensor.backends.opencl import gemm
    a, b = rand((50, 37), dtype, -1, 1), rand((37, 45), dtype, -1, 1)
    assert a.shape[0] * a.shape[1] * b.shape[1] > gemm._SMALL  # the full product is "fast"
    full = host(CL.matmul(dev(a), dev(b)))
    for i in (0, 7, 49):
        np.testing.assert_array_equal(host(CL.matmul(dev(a[i:i + 1]), dev(b))), full[i:i + 1])
    col = host(CL.matmul(dev(a), dev(np.ascontiguousarray(b[:, 3:4]))))
    np.testing.assert_array_equal(col[:, 0], full[:, 3])
    check(CL.matmul(dev(a), dev(b)), wide(a) @ wide(b), rtol=1e-4 if dtype == "float32"
          else 1e-10, dtype=np.dtype(dtype))


def test_matmul_large_matches_numpy():
    a = rng.standard_normal((300, 257)).astype(np.float32)
    b = rng.standard_normal((257, 190)).astype(np.float32)
    check(CL.matmul(dev(a), dev(b)), a.astype(np.float64) @ b, rtol=2e-4, dtype=a.dtype)


# ------------------------------------------------------------------------- random
@pytest.mark.parametrize("shape", [(1,), (3, 7), (1001,), (0,), (4, 4, 4)])
def test_random_bits_match_philox(shape):
    key, counter = (0xDEADBEEF, 12345), (1 << 32) - 3  # counter crosses a 32-bit boundary
    n = math.prod(shape)
    exp = philox_bits(np, n, key, counter).reshape(shape)
    check(CL.random_bits(shape, key, counter, 0), exp)
    check(CL.random_bits(shape, key, counter, 0), NP.random_bits(shape, key, counter, 0))


# ------------------------------------------------------------------ async semantics
def test_ops_are_asynchronous_and_to_numpy_waits():
    a = rng.random((512, 512)).astype(np.float32)
    x = dev(a)
    for _ in range(5):
        x = CL.add(x, 1.0)
    CL.synchronize(0)
    check(x, a + 5)


# -------------------------------------------------------------------------- DLPack
def _capsule_name(cap) -> str:
    return repr(cap).split('"')[1]


@pytest.mark.parametrize("dtype", [d for d in DTYPES])
def test_dlpack_export_every_dtype(dtype):
    import omnitensor as ot
    a = rand((3, 4), dtype)
    t = ot.asarray(a, device="opencl:0")
    assert t.__dlpack_device__() == (1, 0)  # PoCL exports host memory
    assert CL.dlpack_device(t._data) == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(t), a)
    for kw in ({}, {"copy": True}, {"copy": False}, {"max_version": (0, 0)},
               {"max_version": (1, 0), "dl_device": (1, 0), "copy": False},
               {"max_version": (2, 0), "dl_device": (1, 0), "copy": True}):
        cap = t.__dlpack__(**kw)
        mv = kw.get("max_version")
        assert _capsule_name(cap) == ("dltensor_versioned" if mv and mv[0] >= 1
                                      else "dltensor")


def test_dlpack_zero_copy_views_and_lifetime():
    import gc

    import omnitensor as ot
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = ot.asarray(a, device="opencl:0")
    shared = np.from_dlpack(t)
    t.add_(100)                      # device writes are seen by the consumer (once done)
    CL.synchronize(0)
    np.testing.assert_array_equal(shared, a + 100)
    shared[0, 0, 0] = -1             # ... and the consumer's writes by the device
    assert t[0, 0, 0].item() == -1
    copied = np.from_dlpack(t, copy=True)
    copied[1, 1, 1] = 7
    assert t[1, 1, 1].item() == a[1, 1, 1] + 100
    # strided, flipped, broadcast, 0-d and empty views
    ref = shared.copy()
    v = t.permute(2, 0, 1).flip(0)[1:, :, ::2]
    np.testing.assert_array_equal(np.from_dlpack(v), ref.transpose(2, 0, 1)[::-1][1:, :, ::2])
    np.testing.assert_array_equal(np.from_dlpack(t[1, 2, 3]), ref[1, 2, 3])
    np.testing.assert_array_equal(np.from_dlpack(t[0, :1].broadcast_to((5, 4))),
                                  np.broadcast_to(ref[0, :1], (5, 4)))
    assert np.from_dlpack(ot.ones((0, 3), device="opencl:0")).shape == (0, 3)
    # the capsule keeps the mapping and the buffer alive: the pool cannot reuse the memory
    u = ot.arange(5, dtype=ot.float64, device="opencl:0") * 2
    cap = u.__dlpack__(max_version=(1, 0))
    del u, t, v
    gc.collect()
    junk = [ot.full((5,), 7.0, dtype=ot.float64, device="opencl:0") for _ in range(20)]

    class Holder:
        def __dlpack__(self, **kw):
            return cap

        def __dlpack_device__(self):
            return (1, 0)

    np.testing.assert_array_equal(np.from_dlpack(Holder()), np.arange(5.0) * 2)
    assert len(junk) == 20 and shared[1, 2, 3] == a[1, 2, 3] + 100


def test_dlpack_errors_and_from_dlpack():
    import omnitensor as ot
    t = ot.arange(4, device="opencl:0")
    with pytest.raises(BufferError, match="kDLCPU"):
        t.__dlpack__(dl_device=(2, 0))

    class Wrapper:  # a foreign producer exporting an opencl tensor
        def __dlpack__(self, **kw):
            return t.__dlpack__(**kw)

        def __dlpack_device__(self):
            return t.__dlpack_device__()

    for kw in ({}, {"device": "opencl:0"}, {"copy": True}):
        y = ot.from_dlpack(Wrapper(), **kw)
        assert y.tolist() == [0, 1, 2, 3]
        assert str(y.device) == kw.get("device", "cpu")


def test_dlpack_device_memory_exports_only_host_copies(monkeypatch):
    """A GPU (not host-memory) device reports kDLOpenCL and exports a host copy only when
    asked for dl_device=(1, 0) with a copy allowed (simulated on PoCL)."""
    import omnitensor as ot
    t = ot.arange(6, dtype=ot.float32, device="opencl:0").reshape(2, 3)
    monkeypatch.setattr(CL.state(0), "dlpack_host", False, raising=False)
    assert t.__dlpack_device__() == (4, 0)
    with pytest.raises(BufferError, match="dl_device=\\(1, 0\\)"):
        t.__dlpack__()
    with pytest.raises(BufferError, match="copy=False"):
        t.__dlpack__(dl_device=(1, 0), copy=False)
    for copy in (None, True):
        cap = t.__dlpack__(dl_device=(1, 0), copy=copy, max_version=(1, 0))
        assert _capsule_name(cap) == "dltensor_versioned"
    np.testing.assert_array_equal(np.from_dlpack(t, device="cpu"),
                                  np.arange(6, dtype=np.float32).reshape(2, 3))
