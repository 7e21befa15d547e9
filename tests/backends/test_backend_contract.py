"""The backend contract (``omnitensor/backends/base.py``), checked on every registered
backend that has a device here (the ``device`` fixture: cpu, opencl:0, sycl:0, cuda:0...)
against the NumPy backend and NumPy's float64 values.

This module: identity and the declared hooks, memory, device copies, elementwise
primitives (every unary/binary op on every dtype core hands it), Python scalars, ``out=``
and aliasing, and every layout (strided, broadcast, flipped, permuted, 0-d, empty).
``test_backend_contract_ops.py``: reductions, scans, sorting, indexing, matmul, random.
What only one stack has (OpenCL's DLPack mapping, SYCL's queue and pool) lives in
``test_opencl_backend.py`` and ``test_sycl_backend.py``.
"""
import math

import numpy as np
import pytest

import omnitensor as ot
from omnitensor.backends import registry
from omnitensor.backends.base import (BINARY, FFT, LINALG, OPTIONAL_HOOKS, PREDICATES, UNARY,
                                      Backend, BackendSpec)

from contract_helpers import ALL, NP, Probe, core_calls, rand, result_dtype, rng, wide


@pytest.fixture
def bk(device) -> Probe:
    return Probe(device)


# ------------------------------------------------------------------- identity, hooks
def test_identity_and_declarations(bk):
    be = bk.be
    spec = registry.spec(bk.type)
    assert isinstance(spec, BackendSpec) and be.spec is spec and be.name == bk.type
    assert be.pip_extra == spec.extra and be.packages == spec.packages
    assert be.collective_transport in ("mpi", "nccl")
    assert spec.device_name(bk.idx) == str(bk.device)
    assert be.unavailable_reason() is None and be.device_count() >= 1
    assert isinstance(be.version(), str) and be.version()
    info = be.device_info(bk.idx)
    assert {"name", "memory", "fp16", "fp64"} <= set(info)
    assert isinstance(be.asynchronous, bool) and isinstance(be.host_arrays, bool)
    assert all(isinstance(op, str) for op in be.host_fallback_ops)
    be.synchronize(bk.idx)


def test_declared_hooks_are_consulted_through_hook(bk):
    """Every optional hook is declared on Backend with a None default; ``hook`` answers
    the implementation or None, and refuses names nobody declared."""
    for name in OPTIONAL_HOOKS:
        assert getattr(Backend, name) is None, name
        fn = bk.be.hook(name)
        assert fn is None or callable(fn)
    with pytest.raises(AttributeError, match="not an optional backend hook"):
        bk.be.hook("conv2d_typo")
    assert set(bk.be.native_routines("linalg")) <= set(LINALG)
    assert set(bk.be.native_routines("fft")) <= set(FFT)


@pytest.mark.parametrize("name", ["linalg_inv", "linalg_solve", "fft_fft", "fft_rfft",
                                  "einsum"])
def test_native_library_hooks_match_numpy(bk, name):
    fn = bk.be.hook(name)
    if fn is None:
        pytest.skip(f"{bk.type} has no native {name} (the host path runs)")
    a = rand((4, 4), np.float64, -1, 1) + 4 * np.eye(4)
    if name == "linalg_inv":
        bk.check(fn(bk.dev(a)), np.linalg.inv(a), rtol=1e-9)
    elif name == "linalg_solve":
        b = rand((4, 2), np.float64)
        bk.check(fn(bk.dev(a), bk.dev(b)), np.linalg.solve(a, b), rtol=1e-9)
    elif name == "einsum":
        bk.check(fn("ij,jk->ik", bk.dev(a), bk.dev(a)), a @ a, rtol=1e-12)
    else:
        x = rand((8,), np.float64)
        ref = getattr(np.fft, name[4:])(x)
        bk.check(fn(bk.dev(x)), ref, rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------------- memory
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_roundtrip_full_arange(bk, dtype):
    bk.skip_dtype(dtype)
    a = rand((3, 4), dtype)
    x = bk.dev(a)
    bk.check(x, a, exact=True)
    bk.check(bk.full((2, 3), 1, dtype, bk.idx), np.full((2, 3), 1, dtype), exact=True)
    if dtype.kind in "iuf":
        bk.check(bk.arange(2, 3, 5, dtype, bk.idx), NP.arange(2, 3, 5, dtype, 0),
                 exact=True)
    bk.check(bk.copy(x), a, exact=True)
    bk.check(bk.empty((0, 3), dtype, bk.idx), np.empty((0, 3), dtype))
    assert bk.host(bk.empty((2, 0, 3), dtype, bk.idx)).shape == (2, 0, 3)


def test_arange_float_matches_numpy_rounding(bk):
    bk.check(bk.arange(0.1, 0.3, 17, np.dtype("float32"), bk.idx),
             NP.arange(0.1, 0.3, 17, np.dtype("float32"), 0), exact=True)
    bk.check(bk.arange(0.5, 0.25, 7, np.dtype("float32"), bk.idx),
             NP.arange(0.5, 0.25, 7, np.dtype("float32"), 0), exact=True)
    bk.check(bk.arange(-3, -7, 9, np.dtype("int64"), bk.idx),
             NP.arange(-3, -7, 9, np.dtype("int64"), 0), exact=True)


def test_from_numpy_copies_and_contiguity(bk):
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = bk.from_numpy(host.copy(), bk.idx)
    if not bk.host_arrays:  # a device copy must not follow later host writes
        src = host.copy()
        y = bk.from_numpy(src, bk.idx)
        src[0, 0] = 99
        assert bk.host(y)[0, 0] == 0
    t = bk.permute(x, (1, 0))
    assert bk.strides(t) == (1, 3)
    c = bk.contiguous(t)
    assert bk.strides(c) == (2, 1)
    bk.check(c, host.T, exact=True)
    assert bk.contiguous(x) is x
    bk.check(bk.copy(t), host.T, exact=True)
    bk.assign(bk.index(x, (0, slice(0, 3, 1))), 7.0)
    bk.assign(bk.index(x, (1, slice(2, None, -2))), bk.dev(np.float32([1, 2])))
    bk.check(x, np.float32([[7, 7, 7], [2, 4, 1]]), exact=True)
    big = np.arange(1 << 17, dtype=np.int32)[::-2]  # a strided host array, a large copy
    y = bk.dev(big)
    bk.check(y, big)


@pytest.mark.parametrize("src", ALL, ids=str)
def test_astype_all_pairs(bk, src):
    bk.skip_dtype(src)
    import warnings
    base = rng.uniform(-100, 100, (5, 7))
    if src.kind in "bu":
        base = np.abs(base)
    a = base.astype(src) if src.kind != "c" else (base + 1j * base[::-1]).astype(src)
    for dst in bk.dtypes:
        if src.kind in "fc" and dst.kind == "u":
            a2 = np.abs(a.real).astype(src) if src.kind == "c" else np.abs(a)
        else:
            a2 = a
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exp = a2.astype(dst)
        bk.check(bk.astype(bk.dev(a2), dst), exp, exact=dst.kind in "biu",
                 rtol=1e-6 if dst.kind in "fc" and np.dtype(dst).itemsize < 8 else None)


def test_astype_c_casts_and_views(bk):
    a = np.array([[0.0, -0.0, 2.5], [np.nan, 1e-30, 0]], np.float32)
    bk.check(bk.astype(bk.permute(bk.dev(a), (1, 0)), np.dtype(bool)), a.T.astype(bool))
    for src, dst in (("float32", "int32"), ("float64", "uint8"), ("float32", "bool"),
                     ("int64", "float16"), ("complex64", "complex128"), ("bool", "float32")):
        if not (bk.supports(src) and bk.supports(dst)):
            continue
        a = np.array([-2.7, -0.5, 0.0, 0.4, 3.9, 100.2]).astype(src)
        if np.dtype(dst) == np.uint8:
            a = np.abs(a)
        bk.check(bk.astype(bk.dev(a), np.dtype(dst)), NP.astype(a, np.dtype(dst)))
        big = np.tile(a, 1 << 15)  # large results (pooled allocators), from a flipped view
        bk.check(bk.astype(bk.flip(bk.dev(big), (0,)), np.dtype(dst)),
                 NP.astype(np.flip(big), np.dtype(dst)))


# ------------------------------------------------------------------- device copies
_VIEWS = (("contiguous", lambda p, x: x, lambda a: a),
          ("transposed", lambda p, x: p.permute(x, (1, 0)), lambda a: a.T),
          ("strided", lambda p, x: p.index(x, (slice(3, None, -2), slice(1, 6, 2))),
           lambda a: a[3::-2, 1::2]),
          ("0-d", lambda p, x: p.index(x, (2, 3)), lambda a: a[2, 3]))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64"])
def test_transfer_from_every_source(bk, dtype):
    """``transfer_from(x, src, index)`` gives a new array on this device with x's values
    (never x's memory), or None for "go through the host"; views of every layout."""
    bk.skip_dtype(dtype)
    a = rand((4, 6), dtype, -3, 3)
    zero = np.dtype(dtype).type(0).item()
    for d in ot.devices():
        src = Probe(str(d))
        if not src.supports(dtype):
            continue
        for _what, view_of, ref_of in _VIEWS:
            x = src.dev(a)
            y = bk.transfer_from(view_of(src, x), src.be, bk.idx)
            if y is None:
                continue  # the host path: core copies through NumPy
            bk.check(y, ref_of(a), exact=True)
            src.assign(x, zero)  # a copy: writing the source leaves the result alone
            bk.check(y, ref_of(a), exact=True)


def test_transfer_from_self_is_a_device_copy(bk):
    """Within one backend the copy is direct (opencl: a buffer copy in one context, sycl:
    USM, cuda: device/peer copy); only NumPy answers None (core copies host arrays)."""
    a = rand((3, 5), np.float32)
    x = bk.dev(a)
    bk.add(x, 1.0, out=x)  # pending work on asynchronous backends
    y = bk.transfer_from(x, bk.be, bk.idx)
    if bk.host_arrays:
        assert y is None
        return
    assert y is not None, f"{bk.type} has no direct copy between its own arrays"
    bk.check(y, a + 1)
    bk.assign(x, 0.0)
    bk.check(y, a + 1)


def test_host_view_shares_memory_or_is_none(bk):
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    x = bk.dev(a)
    bk.multiply(x, 2.0, out=x)
    v = bk.be.host_view(x)
    if v is None:
        return
    np.testing.assert_array_equal(v, a * 2)  # pending work finished before the view
    view = bk.be.host_view(bk.index(x, (slice(0, 3, 2), slice(3, None, -1))))
    np.testing.assert_array_equal(view, (a * 2)[0:3:2, ::-1])


def test_core_moves_between_every_pair_of_devices(bk):
    """``Tensor.to`` through transfer_from or the host: values, dtype and device."""
    t = ot.arange(12, dtype=ot.float32).reshape(3, 4).to(bk.device)[:, 1::2]
    for d in ot.devices():
        u = t.to(d)
        assert u.device == d and u.dtype == ot.float32
        np.testing.assert_array_equal(u.cpu().numpy(), np.arange(12.0).reshape(3, 4)[:, 1::2])
        back = u.to(bk.device)
        assert back.device == bk.device
        np.testing.assert_array_equal(back.cpu().numpy(), u.cpu().numpy())


def test_ops_are_ordered_and_to_numpy_waits(bk):
    """Asynchronous or not, results read back after every enqueued op has run."""
    a = rng.random((512, 512)).astype(np.float32)
    x = bk.dev(a)
    for _ in range(5):
        x = bk.add(x, 1.0)
    bk.check(x, a + 5)
    y = bk.dev(a)
    for _ in range(5):
        bk.add(y, 1.0, out=y)
    bk.synchronize(bk.idx)
    bk.check(y, a + 5)


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


# ------------------------------------------------------------------------ layouts
def _views(bk, a: np.ndarray):
    """(description, numpy view, matching device view) of one 3-D array."""
    x = bk.dev(a)
    yield "contiguous", a, x
    yield "permuted", a.transpose(2, 0, 1), bk.permute(x, (2, 0, 1))
    yield "flipped", a[::-1, :, ::-1], bk.flip(x, (0, 2))
    yield "sliced", a[1:, ::2, 1:4], bk.index(x, (slice(1, 3, 1), slice(0, 5, 2),
                                                  slice(1, 4, 1)))
    yield "negative step", a[:, ::-2], bk.index(x, (slice(0, 3, 1), slice(4, None, -2)))
    yield "broadcast", np.broadcast_to(a[:, :1], (3, 5, 6)), bk.broadcast_to(
        bk.index(x, (slice(0, 3, 1), slice(0, 1, 1))), (3, 5, 6))
    yield "new axis", a[None, 1], bk.index(x, (None, 1))
    yield "diagonal", np.diagonal(a, 1, 1, 2), bk.diagonal(x, 1, 1, 2)
    yield "0-d", a[1, 2, 3], bk.index(x, (1, 2, 3))
    yield "empty", a[:, 2:2], bk.index(x, (slice(0, 3, 1), slice(2, 2, 1)))


@pytest.mark.parametrize("dtype", ["float32", "int16", "complex128"])
def test_ops_on_every_layout(bk, dtype):
    bk.skip_dtype(dtype)
    a = rand((3, 5, 6), dtype, -3, 3)
    for _what, av, xv in _views(bk, a):
        bk.check(xv, av, exact=True)
        bk.check(bk.negative(xv), -av, exact=True)
        bk.check(bk.add(xv, xv), av + av, exact=dtype != "complex128")
        bk.check(bk.multiply(xv, 2), av * 2, exact=dtype != "complex128")
        bk.check(bk.equal(xv, xv), av == av)
        bk.check(bk.exp(xv) if dtype != "int16" else bk.abs(xv),
                 np.exp(av) if dtype != "int16" else np.abs(av))
        bk.check(bk.contiguous(xv), av, exact=True)
        assert bk.strides(bk.contiguous(xv)) == tuple(
            s // av.itemsize for s in np.ascontiguousarray(av).strides) or av.size <= 1
        bk.check(bk.where(bk.greater(xv, bk.multiply(xv, 0)) if dtype != "complex128"
                          else bk.not_equal(xv, 0), xv, 0),
                 np.where(av > 0 if dtype != "complex128" else av != 0, av, 0), exact=True)


def test_binary_mixed_layouts(bk):
    a = rand((4, 5, 6), np.float32)
    b = rand((6,), np.float32)
    x, y = bk.dev(a), bk.dev(b)
    bk.check(bk.add(x, bk.broadcast_to(y, (4, 5, 6))), a + b)  # bias add, inner unit stride
    bk.check(bk.subtract(bk.permute(x, (0, 2, 1)), bk.broadcast_to(bk.reshape(
        bk.dev(b), (1, 6, 1)), (4, 6, 5))), a.transpose(0, 2, 1) - b[None, :, None])
    bk.check(bk.maximum(bk.flip(x, (1,)), x), np.maximum(a[:, ::-1], a))
    c = rand((4, 6), np.float32)
    z = bk.dev(c)
    bk.check(bk.exp(bk.permute(z, (1, 0))), np.exp(c.T))
    bk.check(bk.add(bk.index(z, (slice(0, 4, 2), slice(5, None, -1))),
                    bk.broadcast_to(bk.dev(np.float32([1.0])), (2, 6))), c[0:4:2, ::-1] + 1)


def test_views_share_memory_and_writes_reach_base(bk):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = bk.dev(a)
    v = bk.permute(x, (2, 1, 0))
    bk.assign(bk.index(v, (slice(0, 4, 2),)), 7.0)
    exp = a.copy()
    exp[:, :, ::2] = 7
    bk.check(x, exp)
    d = bk.diagonal(bk.reshape(x, (6, 4)), 0, 0, 1)
    bk.assign(d, bk.dev(np.array([-1, -2, -3, -4], np.float32)))
    exp2 = exp.reshape(6, 4).copy()
    np.fill_diagonal(exp2, [-1, -2, -3, -4])
    bk.check(x, exp2.reshape(2, 3, 4))
    f = bk.flip(x, (0, 1, 2))
    bk.assign(f, bk.copy(x))  # overlapping self-assignment through a reversed view
    bk.check(x, exp2.reshape(2, 3, 4)[::-1, ::-1, ::-1])
    g = bk.dev(np.arange(12, dtype=np.float32).reshape(3, 4))
    bk.assign(bk.index(bk.flip(g, (1,)), (0, 0)), -5.0)  # a flipped view is writable
    d2 = bk.diagonal(g, 1, 0, 1)
    bk.assign(d2, 42.0)  # and so is a diagonal
    want = np.arange(12, dtype=np.float32).reshape(3, 4)
    want[0, -1] = -5
    for i in range(3):
        want[i, i + 1] = 42
    bk.check(g, want)


def test_reshape_copy_semantics(bk):
    a = np.arange(24, dtype=np.int32).reshape(4, 6)
    x = bk.dev(a)
    v = bk.reshape(x, (2, 2, 6), copy=False)
    bk.assign(bk.index(v, (0, 0, 0)), -1)  # a view: the write reaches x
    assert bk.host(x)[0, 0] == -1
    bk.assign(bk.index(x, (0, 0)), 0)
    t = bk.permute(x, (1, 0))
    with pytest.raises(ValueError):
        bk.reshape(t, (24,), copy=False)
    bk.check(bk.reshape(t, (24,)), a.T.reshape(24))
    c = bk.reshape(x, (24,), copy=True)
    bk.assign(bk.index(c, (1,)), 100)
    assert bk.host(x).ravel()[1] == 1  # a copy: x is unchanged
    bk.check(bk.reshape(bk.index(x, (slice(0, 4, 1), slice(0, 6, 2))), (4, 3, 1)),
             a[:, ::2].reshape(4, 3, 1))
    bk.check(bk.reshape(bk.index(x, (slice(0, 4, 2),)), (2, 2, 3)), a[::2].reshape(2, 2, 3))
    s = bk.index(x, (1, 2))
    assert bk.host(bk.reshape(s, (1, 1))).shape == (1, 1)
    assert bk.host(bk.reshape(bk.dev(np.zeros((0, 3), np.float32)), (3, 0))).shape == (3, 0)


def test_permute_broadcast_index(bk):
    a = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
    x = bk.dev(a)
    bk.check(bk.permute(x, (1, 2, 0)), a.transpose(1, 2, 0))
    bk.check(bk.broadcast_to(bk.dev(a[:, :1, :]), (2, 3, 4)),
             np.broadcast_to(a[:, :1, :], (2, 3, 4)))
    keys = [(1, slice(0, 3, 1), slice(3, None, -1)),
            (None, 0, slice(2, 0, -1), None, 3),
            (slice(0, 2, 1), 2, slice(0, 4, 3)),
            (1, 2, 3)]
    for key in keys:
        bk.check(bk.index(x, key), NP.index(a, key))
    view = bk.index(x, (slice(0, 2, 1), 1, slice(3, None, -2)))
    bk.assign(view, 0)
    a[0:2, 1, 3::-2] = 0
    bk.check(x, a)


def test_concat_pad_diagonal(bk):
    a, b = rand((2, 3), np.float32), rand((4, 3), np.float32)
    bk.check(bk.concat([bk.dev(a), bk.dev(b)], 0), np.concatenate([a, b], 0), exact=True)
    bk.check(bk.concat([bk.permute(bk.dev(b), (1, 0)), bk.dev(a.T)], 1),
             np.concatenate([b.T, a.T], 1), exact=True)
    bk.check(bk.concat([bk.dev(a), bk.dev(a), bk.dev(a)], 1), np.concatenate([a, a, a], 1))
    bk.check(bk.pad(bk.dev(a), ((1, 2), (0, 3)), -1.5),
             np.pad(a, ((1, 2), (0, 3)), constant_values=-1.5), exact=True)
    c = np.arange(4, dtype=np.int64)
    bk.check(bk.pad(bk.dev(c), ((0, 3),), -1), NP.pad(c, ((0, 3),), -1))
    d = rand((3, 4, 5), np.int32)
    bk.check(bk.diagonal(bk.dev(d), -1, 2, 0), np.diagonal(d, -1, 2, 0), exact=True)
    for off, ax1, ax2 in ((0, 0, 1), (1, 0, 1), (-1, 1, 0)):
        bk.check(bk.diagonal(bk.dev(a), off, ax1, ax2), NP.diagonal(a, off, ax1, ax2))


# ---------------------------------------------------------------- assign_from_host
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64"])
def test_assign_from_host_contiguous_and_views(device, dtype):
    be = ot.device(device).backend
    base = np.arange(60).reshape(5, 12).astype(dtype)
    t = ot.zeros(5, 12, dtype=getattr(ot, dtype), device=device)
    host = base.copy()
    be.assign_from_host(t._data, host)
    host[...] = 0  # reusable at once: the copy has read it
    np.testing.assert_array_equal(t.cpu().numpy(), base)
    exp = base.copy()
    for view, region in ((t[1:3], (slice(1, 3),)),              # offset, contiguous
                         (t[:, 2:9:3], (slice(None), slice(2, 9, 3))),  # strided
                         (t.t()[3], (slice(None), 3))):             # column of a transpose
        vals = (np.arange(view.numel()).reshape(view.shape) + 100).astype(dtype)
        be.assign_from_host(view._data, vals)
        exp[region] = vals
        np.testing.assert_array_equal(t.cpu().numpy(), exp)
    empty = ot.zeros(0, 3, dtype=getattr(ot, dtype), device=device)
    be.assign_from_host(empty._data, np.zeros((0, 3), dtype))


def test_assign_from_host_orders_after_pending_work(device):
    be = ot.device(device).backend
    t = ot.zeros(1 << 16, device=device)
    for _ in range(5):
        t.add_(1)  # enqueued (asynchronous backends)
    be.assign_from_host(t[::2]._data, np.full(1 << 15, -1, np.float32))
    got = t.cpu().numpy()
    assert (got[::2] == -1).all() and (got[1::2] == 5).all()


def test_default_assign_from_host_matches(device):
    """The base class's path (device temporary + assign) gives the same result."""
    be = ot.device(device).backend
    t = ot.zeros(4, 6, device=device)
    vals = np.arange(12, dtype=np.float32).reshape(4, 3)
    Backend.assign_from_host(be, t[:, ::2]._data, vals)
    exp = np.zeros((4, 6), np.float32)
    exp[:, ::2] = vals
    np.testing.assert_array_equal(t.cpu().numpy(), exp)
