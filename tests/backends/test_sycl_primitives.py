"""SyclBackend's primitives against the NumPy backend, on ``sycl:0``.

Every primitive of the contract (``omnitensor/backends/base.py``) is called directly on
dpnp arrays and compared with ``NumpyBackend`` on the same host data: results must have the
same dtype and shape, be dpnp arrays (never scalars) on the device's one queue, and match in
value. dpnp JIT-compiles each (kernel, dtype) on first use (0.1-0.5 s each on the OpenCL CPU
device), so the sweeps use one contiguous layout and the dtypes core actually hands each
primitive (its dtype rules), not every layout times every dtype.
"""
from __future__ import annotations

import numpy as np
import pytest

dpnp = pytest.importorskip("dpnp", reason="dpnp is not installed: pip install 'omnitensor[sycl]'")

from omnitensor.backends import registry  # noqa: E402
from omnitensor.backends.base import BINARY, PREDICATES, UNARY  # noqa: E402
from omnitensor.core import dtypes as _dt  # noqa: E402
from omnitensor.core.ops.elementwise import BINARY_OPS, UNARY_OPS  # noqa: E402
from omnitensor.errors import DTypeError  # noqa: E402

SY, WHY = registry.try_backend("sycl")  # first: it prepares the environment for dpctl
if SY is None:
    pytest.skip(f"no SYCL device: {WHY}", allow_module_level=True)
from omnitensor.backends.sycl.pool import MIN_BYTES  # noqa: E402
NP = registry.get_backend("cpu")
Q = SY._queues[0]

# one dtype per kernel family of dpnp's templates: the narrower integer widths
# instantiate the same C++ templates as int64/uint64 and would only add JIT time (each
# (kernel, dtype) costs 0.1-0.5 s to compile on first use); they appear in the casting,
# reduction, indexing and pool tests below
DTYPES = [np.dtype(d) for d in (
    "bool", "int64", "uint64", "float16", "float32", "float64", "complex64", "complex128")]
DTYPES = [d for d in DTYPES if SY.supports_dtype(d, 0)]
TOL = {"e": (2e-3, 1e-3), "f": (2e-5, 1e-6), "d": (1e-12, 1e-14),
       "F": (2e-5, 1e-6), "D": (1e-12, 1e-14)}


# ----------------------------------------------------------------------------- helpers
def dev(a) -> object:
    return SY.from_numpy(np.asarray(a), 0)


def contract_dtype(name: str, dtype: np.dtype) -> np.dtype:
    """The result dtype base.py promises for elementwise ``name`` on ``dtype`` operands."""
    if name in PREDICATES:
        return np.dtype(bool)
    if name in ("real", "imag", "abs") and dtype.kind == "c":
        return np.dtype(dtype.char.lower())
    return dtype


def check(res, expected, *, rtol=None, atol=None, exact=False, dtype=None) -> None:
    """``res`` (SYCL) matches ``expected`` (NumPy backend result) in type, queue, dtype
    (``dtype`` when given: the contract's, where NumPy's differs), shape and value."""
    assert isinstance(res, dpnp.ndarray), f"expected a dpnp array, got {type(res)}"
    assert res.sycl_queue == Q, "result is not on the device's shared queue"
    expected = np.asarray(expected)
    if dtype is not None:
        expected = expected.astype(dtype)
    got = SY.to_numpy(res)
    assert got.dtype == expected.dtype, f"dtype {got.dtype} != {expected.dtype}"
    assert got.shape == expected.shape, f"shape {got.shape} != {expected.shape}"
    if exact or got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected)
        return
    r, a = TOL[got.dtype.char]
    np.testing.assert_allclose(got, expected, rtol=r if rtol is None else rtol,
                               atol=a if atol is None else atol, equal_nan=True)


def _rule_accepts(table, name, *dtypes) -> bool:
    """Whether core hands ``name`` operands of these dtypes unchanged (its dtype rule
    computes in that dtype); primitives are only ever called that way."""
    op = table.get(name)
    if op is None:
        return True
    try:
        cd, _ = op.rule(name, *[_dt.as_dtype(d) for d in dtypes])
    except DTypeError:
        return False
    return cd.np == dtypes[0]


RNG = np.random.default_rng(7)
# argument domains (low, high) where functions are real-valued and well conditioned
DOMAIN = {"log": (0.1, 4), "log2": (0.1, 4), "log10": (0.1, 4), "log1p": (-0.5, 4),
          "sqrt": (0, 4), "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atanh": (-0.9, 0.9),
          "acosh": (1.1, 4), "reciprocal": (0.5, 3), "pow": (0.5, 2), "tan": (-1.2, 1.2),
          "divide": (0.5, 3), "floor_divide": (0.5, 3), "remainder": (0.5, 3),
          "exp": (-3, 3), "expm1": (-3, 3), "sinh": (-3, 3), "cosh": (-3, 3)}


def sample(name: str, dtype: np.dtype, n: int = 9, rhs: bool = False) -> np.ndarray:
    k = dtype.kind
    if k == "b":
        return RNG.random(n) < 0.5
    if name in ("bitwise_left_shift", "bitwise_right_shift") and rhs:
        return RNG.integers(0, dtype.itemsize * 8, n).astype(dtype)
    if name == "pow" and k in "iu":
        return RNG.integers(0, 5, n).astype(dtype) if rhs else \
            RNG.integers(-4 if k == "i" else 0, 5, n).astype(dtype)
    if k in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -50), min(info.max, 50)
        a = RNG.integers(lo, hi + 1, n).astype(dtype)
        if rhs and name in ("floor_divide", "remainder"):
            a[a == 0] = 3
        return a
    lo, hi = DOMAIN.get(name, (-3, 3))
    a = RNG.uniform(lo, hi, n)
    if k == "c":
        a = a + 1j * RNG.uniform(-1, 1, n)
    if name in ("floor", "ceil", "round", "trunc"):
        a[:4] = [0.5, 1.5, -2.5, -0.5]  # halves: round must go to even
    return a.astype(dtype)


UNARY_CASES = [pytest.param(n, d, id=f"{n}-{d}") for n in UNARY for d in DTYPES
               if _rule_accepts(UNARY_OPS, n, d)]
BINARY_CASES = [pytest.param(n, d, id=f"{n}-{d}") for n in BINARY for d in DTYPES
                if _rule_accepts(BINARY_OPS, n, d, d)]


# ------------------------------------------------------------------------- elementwise
def sizes(dtype: np.dtype) -> tuple[int, int]:
    """A small operand, and one whose result is big enough for the memory pool (same
    kernels: only the allocation path differs)."""
    return 9, MIN_BYTES // dtype.itemsize + 5


@pytest.mark.parametrize("name,dtype", UNARY_CASES)
def test_unary_matches_numpy(name, dtype):
    for n in sizes(dtype):
        a = sample(name, dtype, n)
        try:
            want = getattr(NP, name)(a)
        except TypeError:
            pytest.skip(f"NumPy has no {name} for {dtype}")
        check(getattr(SY, name)(dev(a)), want, dtype=contract_dtype(name, dtype))


@pytest.mark.parametrize("name,dtype", BINARY_CASES)
def test_binary_matches_numpy(name, dtype):
    for n in sizes(dtype):
        a, b = sample(name, dtype, n), sample(name, dtype, n, rhs=True)
        try:
            want = getattr(NP, name)(a, b)
        except TypeError:
            pytest.skip(f"NumPy has no {name} for {dtype}")
        check(getattr(SY, name)(dev(a), dev(b)), want, dtype=contract_dtype(name, dtype))


@pytest.mark.parametrize("name,dtype,scalar", [
    ("add", "float32", 1.5), ("multiply", "int64", -3), ("subtract", "uint64", 2**63),
    ("pow", "float16", 2.0), ("less", "int8", 5), ("logical_or", "bool", True),
    ("add", "complex64", 1 - 2j), ("maximum", "uint8", 200), ("floor_divide", "int32", -3),
    ("remainder", "int16", 4), ("bitwise_right_shift", "uint32", 3)])
def test_binary_with_python_scalar(name, dtype, scalar):
    dtype = np.dtype(dtype)
    a = sample(name, dtype)
    if dtype == np.uint64:
        a = a + np.uint64(2**63)
    check(getattr(SY, name)(dev(a), scalar), getattr(NP, name)(a, scalar))
    check(getattr(SY, name)(scalar, dev(a)), getattr(NP, name)(scalar, a))


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_floor_divide_near_integer_quotients(dtype):
    """dpnp's own float floor_divide is floor(a / b), one too big when a / b rounds up to
    an integer; the backend computes NumPy's fmod-based result instead."""
    dtype = np.dtype(dtype)
    b = RNG.uniform(0.1, 3, 2000).astype(dtype)
    a = np.nextafter((RNG.integers(1, 50, 2000) * b).astype(dtype), dtype.type(0))
    a = np.concatenate([a, np.array([-0.0, 1, -1, np.inf, 5, -7.5, 3], dtype)])
    b = np.concatenate([b, np.array([1, 0, 0, 2, np.inf, 2, -np.inf], dtype)])
    check(SY.floor_divide(dev(a), dev(b)), NP.floor_divide(a, b), exact=True)
    check(SY.floor_divide(dev(a), 0.75), NP.floor_divide(a, dtype.type(0.75)), exact=True)
    check(SY.floor_divide(2.5, dev(b)), NP.floor_divide(dtype.type(2.5), b), exact=True)


def test_zero_d_results_are_arrays():
    x = dev(np.float32(2.0))
    for r in (SY.exp(x), SY.add(x, x), SY.less(x, 1.0), SY.sum(dev(np.ones(3, np.float32)),
                                                              (0,), False)):
        assert isinstance(r, dpnp.ndarray) and r.shape == ()


@pytest.mark.parametrize("name", ["exp", "negative", "isnan", "erf", "abs"])
def test_unary_out(name):
    a = sample(name, np.dtype(np.float32))
    x = dev(a)
    out = x if name not in PREDICATES else dev(np.zeros(a.shape, bool))
    r = getattr(SY, name)(x, out=out)
    want = getattr(NP, name)(a)
    check(out, want)
    assert r is out or SY.to_numpy(r).tolist() == want.tolist()


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "atan2", "less"])
def test_binary_out_aliasing_an_input(name):
    a, b = sample(name, np.dtype(np.float32)), sample(name, np.dtype(np.float32))
    x, y = dev(a), dev(b)
    out = x if name not in PREDICATES else dev(np.zeros(a.shape, bool))
    getattr(SY, name)(x, y, out=out)
    check(out, getattr(NP, name)(a, b))


def test_elementwise_on_strided_views():
    a = RNG.standard_normal((4, 6)).astype(np.float32)
    x = dev(a)
    check(SY.exp(SY.permute(x, (1, 0))), np.exp(a.T))
    check(SY.add(SY.index(x, (slice(0, 4, 2), slice(5, None, -1))),
                 SY.broadcast_to(dev(np.float32([1.0])), (2, 6))), a[0:4:2, ::-1] + 1)
    out = SY.index(x, (slice(1, 3, 1), slice(0, 6, 2)))
    SY.multiply(out, 2.0, out=out)  # in place through a view reaches the base
    a[1:3, 0:6:2] *= 2
    check(x, a)


@pytest.mark.parametrize("dtype", ["float32", "int64", "complex64", "bool"])
def test_where(dtype):
    dtype = np.dtype(dtype)
    for n in sizes(dtype):
        c = RNG.random(n) < 0.5
        a, b = sample("add", dtype, n), sample("add", dtype, n)
        check(SY.where(dev(c), dev(a), dev(b)), NP.where(c, a, b))
        s = dtype.type(1).item()
        check(SY.where(dev(c), dev(a), s), NP.where(c, a, s))
        check(SY.where(dev(c), s, dev(b)), NP.where(c, s, b))


# -------------------------------------------------------------------------- memory
def test_memory_primitives():
    for d in ("float32", "int64", "bool", "complex64"):
        check(SY.full((2, 3), 1, np.dtype(d), 0), NP.full((2, 3), 1, np.dtype(d), 0))
        assert SY.empty((2, 0, 3), np.dtype(d), 0).shape == (2, 0, 3)
    check(SY.arange(3, -2, 5, np.dtype(np.int64), 0), NP.arange(3, -2, 5, np.int64, 0))
    check(SY.arange(0.5, 0.25, 7, np.dtype(np.float32), 0),
          NP.arange(0.5, 0.25, 7, np.dtype(np.float32), 0))
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = SY.from_numpy(host, 0)
    host[0, 0] = 99  # the device copy must not follow later host writes
    assert SY.to_numpy(x)[0, 0] == 0
    t = SY.permute(x, (1, 0))
    assert SY.strides(t) == (1, 3) and not t.flags.c_contiguous
    c = SY.contiguous(t)
    assert c.flags.c_contiguous and SY.strides(c) == (2, 1)
    assert SY.contiguous(x) is x
    cp = SY.copy(t)
    check(cp, np.arange(6, dtype=np.float32).reshape(2, 3).T)  # x's values, not the host edit
    SY.assign(SY.index(x, (0, slice(0, 3, 1))), 7.0)
    SY.assign(SY.index(x, (1, slice(2, None, -2))), dev(np.float32([1, 2])))
    check(x, np.float32([[7, 7, 7], [2, 4, 1]]))
    assert SY.device_index(x) == 0
    big = np.arange(MIN_BYTES, dtype=np.int32)[::-2]  # strided host array, pooled copy
    y = SY.from_numpy(big, 0)
    want = big.copy()
    big[:] = -1  # the copy has completed: later host writes do not reach the device
    check(y, want)


@pytest.mark.parametrize("src,dst", [("float32", "int32"), ("float64", "uint8"),
                                     ("float32", "bool"), ("int64", "float16"),
                                     ("complex64", "complex128"), ("bool", "float32")])
def test_astype_c_casts(src, dst):
    a = np.array([-2.7, -0.5, 0.0, 0.4, 3.9, 100.2]).astype(src)
    if np.dtype(dst) == np.uint8:
        a = np.abs(a)
    check(SY.astype(dev(a), np.dtype(dst)), NP.astype(a, np.dtype(dst)))
    big = np.tile(a, MIN_BYTES // a.itemsize)  # the pooled path: a copy-cast into the pool
    check(SY.astype(SY.flip(dev(big), (0,)), np.dtype(dst)),
          NP.astype(np.flip(big), np.dtype(dst)))


# ------------------------------------------------------------------- memory pool
def test_pool_recycles_without_corrupting_live_views():
    n = MIN_BYTES // 4 * 2
    host = RNG.standard_normal(n).astype(np.float32)
    x = dev(host)
    y = SY.add(x, 1.0)                      # pooled
    v = SY.index(y, (slice(0, n, 2),))      # a view keeps y's block leased
    del y
    z = SY.multiply(x, 3.0)                 # must not land on y's block
    w = SY.exp(z)
    check(v, (host + 1)[::2])
    check(w, np.exp(host * 3), rtol=1e-5)
    del v, z, w
    chain = x
    want = host.copy()
    for i in range(30):  # blocks recycled every step while kernels are in flight
        chain = SY.subtract(SY.multiply(chain, 0.5), float(i))
        want = want * np.float32(0.5) - np.float32(i)
    check(chain, want, rtol=1e-5)
    for d in ("float32", "int64", "bool"):
        check(SY.full((n,), 1, np.dtype(d), 0), np.ones(n, d))
    e = SY.empty((n,), np.dtype(np.float32), 0)
    SY.assign(e, 2.0)
    check(SY.copy(SY.permute(SY.reshape(e, (n // 4, 4)), (1, 0))), np.full((4, n // 4), 2, "f"))
    stats = SY.memory_stats(0)
    assert 0 <= stats["pool_cached_bytes"] <= stats["pool_limit_bytes"]
    SY.empty_cache()
    assert SY.memory_stats(0)["pool_cached_bytes"] == 0


# ------------------------------------------------------------------------ reductions
RED_AXES = [(0,), (1,), (0, 2), (0, 1, 2)]


@pytest.mark.parametrize("name,dtype", [
    (n, d) for n in ("sum", "prod") for d in ("float32", "int64", "float16", "complex64")]
    + [("sum", "uint64"), ("sum", "float64")]
    + [(n, d) for n in ("max", "min") for d in ("float32", "int64", "float16", "uint8")])
def test_reductions(name, dtype):
    dtype = np.dtype(dtype)
    a = sample("add", dtype, 24).reshape(2, 3, 4)
    if name == "prod" and dtype.kind in "fc":
        a = (a / 3).astype(dtype)
    for axes in RED_AXES:
        for keep in (False, True):
            check(getattr(SY, name)(dev(a), axes, keep), getattr(NP, name)(a, axes, keep))


@pytest.mark.parametrize("name", ["any", "all"])
def test_any_all(name):
    a = RNG.random((2, 3, 4)) < 0.7
    for axes in RED_AXES:
        check(getattr(SY, name)(dev(a), axes, True), getattr(NP, name)(a, axes, True))


def test_max_min_propagate_nan():
    a = np.float32([[1, np.nan, 3], [4, 5, -np.inf]])
    for name in ("max", "min"):
        check(getattr(SY, name)(dev(a), (1,), False), getattr(NP, name)(a, (1,), False))
        check(getattr(SY, name)(dev(a), (0, 1), False), getattr(NP, name)(a, (0, 1), False))
    check(SY.maximum(dev(a), 2.0), np.maximum(a, 2.0))
    check(SY.minimum(dev(a), 2.0), np.minimum(a, 2.0))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin(name):
    a = np.float32([[1, 5, 5, 0], [2, np.nan, 2, np.nan], [-1, -1, 7, -3]])
    for axis, keep in ((None, False), (None, True), (0, False), (1, True)):
        check(getattr(SY, name)(dev(a), axis, keep), getattr(NP, name)(a, axis, keep))
    b = np.int64([[3, 9, 9], [-4, -4, 0]])
    check(getattr(SY, name)(dev(b), 1, False), getattr(NP, name)(b, 1, False))


@pytest.mark.parametrize("name,dtype", [("cumsum", "int64"), ("cumsum", "float32"),
                                        ("cumsum", "complex64"), ("cumprod", "float32"),
                                        ("cumprod", "int64")])
def test_scans(name, dtype):
    a = sample("add", np.dtype(dtype), 12).reshape(3, 4)
    for axis in (0, 1):
        check(getattr(SY, name)(dev(a), axis), getattr(NP, name)(a, axis), rtol=1e-4)


# -------------------------------------------------------------------------- movement
def test_reshape_views_and_copies():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = dev(a)
    v = SY.reshape(x, (6, 4), copy=False)
    SY.assign(SY.index(v, (0, 0)), -1.0)  # a view: the write reaches x
    assert SY.to_numpy(x)[0, 0, 0] == -1
    t = SY.permute(x, (2, 0, 1))
    with pytest.raises(ValueError):
        SY.reshape(t, (24,), copy=False)
    check(SY.reshape(t, (4, 6)), np.reshape(np.transpose(SY.to_numpy(x), (2, 0, 1)), (4, 6)))
    c = SY.reshape(x, (24,), copy=True)
    SY.assign(SY.index(c, (1,)), 100.0)
    assert SY.to_numpy(x).ravel()[1] == 1


def test_permute_broadcast_index():
    a = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
    x = dev(a)
    check(SY.permute(x, (1, 2, 0)), a.transpose(1, 2, 0))
    check(SY.broadcast_to(dev(a[:, :1, :]), (2, 3, 4)), np.broadcast_to(a[:, :1, :], (2, 3, 4)))
    keys = [(1, slice(0, 3, 1), slice(3, None, -1)),
            (None, 0, slice(2, 0, -1), None, 3),
            (slice(0, 2, 1), 2, slice(0, 4, 3)),
            (1, 2, 3)]
    for key in keys:
        check(SY.index(x, key), NP.index(a, key))
    view = SY.index(x, (slice(0, 2, 1), 1, slice(3, None, -2)))
    SY.assign(view, 0)
    a[0:2, 1, 3::-2] = 0
    check(x, a)


def test_flip_diagonal_views_are_writable():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = dev(a)
    check(SY.flip(x, (0, 1)), np.flip(a, (0, 1)))
    f = SY.flip(x, (1,))
    SY.assign(SY.index(f, (0, 0)), -5.0)
    a[0, -1] = -5
    check(x, a)
    for off, ax1, ax2 in ((0, 0, 1), (1, 0, 1), (-1, 1, 0)):
        check(SY.diagonal(x, off, ax1, ax2), NP.diagonal(a, off, ax1, ax2))
    d = SY.diagonal(x, 1, 0, 1)
    SY.assign(d, 42.0)
    for i in range(3):
        a[i, i + 1] = 42
    check(x, a)
    b = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    check(SY.diagonal(dev(b), 0, 1, 2), NP.diagonal(b, 0, 1, 2))


def test_concat_pad():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(9, dtype=np.float32).reshape(3, 3)
    check(SY.concat([dev(a), dev(b)], 0), np.concatenate([a, b], 0))
    check(SY.concat([dev(a), dev(a), dev(a)], 1), np.concatenate([a, a, a], 1))
    check(SY.pad(dev(a), ((1, 0), (2, 1)), 7.0), NP.pad(a, ((1, 0), (2, 1)), 7.0))
    c = np.arange(4, dtype=np.int64)
    check(SY.pad(dev(c), ((0, 3),), -1), NP.pad(c, ((0, 3),), -1))


# -------------------------------------------------------------------------- indexing
def _idx(*arrays):
    return tuple(np.asarray(i, np.int64) for i in arrays)


def test_gather_nd():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    idx = _idx([[1, 0], [1, 1]], [[2, 2], [0, 1]], [[3, 0], [0, 3]])
    check(SY.gather_nd(dev(a), tuple(dev(i) for i in idx)), NP.gather_nd(a, idx))
    one = _idx([0, 1, 1, 0])
    check(SY.gather_nd(dev(a[:, 0, 0]), tuple(dev(i) for i in one)), a[:, 0, 0][one])


@pytest.mark.parametrize("dtype", ["float32", "int64", "complex64", "bool", "float16"])
def test_scatter_nd_accumulates_duplicates(dtype):
    dtype = np.dtype(dtype)
    a = sample("add", dtype, 12).reshape(3, 4)
    idx = _idx([0, 2, 0, 0, 1, 2, 0], [1, 3, 1, 1, 0, 3, 2])
    vals = sample("add", dtype, 7)
    want = a.copy()
    NP.scatter_nd(want, idx, vals, True)
    x = dev(a)
    SY.scatter_nd(x, tuple(dev(i) for i in idx), dev(vals), True)
    check(x, want, rtol=1e-3 if dtype == np.float16 else None)


def test_scatter_nd_long_runs_and_scalar_values():
    n = 1000
    idx = _idx(RNG.integers(0, 5, n))
    vals = RNG.standard_normal(n)
    want = np.zeros(5)
    NP.scatter_nd(want, idx, vals, True)
    x = dev(np.zeros(5))
    SY.scatter_nd(x, (dev(idx[0]),), dev(vals), True)
    check(x, want, rtol=1e-12, atol=1e-12)
    ints = dev(np.zeros(4, np.int64))
    SY.scatter_nd(ints, (dev(_idx([3, 3, 3, 0])[0]),), 5, True)
    check(ints, np.int64([5, 0, 0, 15]))


def test_scatter_nd_into_strided_view_reaches_base():
    base = np.zeros((4, 6), np.float32)
    x = dev(base)
    view = SY.index(x, (slice(0, 4, 2), slice(5, None, -1)))  # strided, reversed
    idx = _idx([0, 1, 0], [2, 5, 2])
    SY.scatter_nd(view, tuple(dev(i) for i in idx), dev(np.float32([1, 2, 3])), True)
    SY.scatter_nd(view, tuple(dev(i) for i in _idx([1], [0])), 9.0, False)
    bv = base[0:4:2, ::-1]
    np.add.at(bv, idx, np.float32([1, 2, 3]))
    bv[1, 0] = 9
    check(x, base)


def test_scatter_nd_assign_and_zero_d():
    a = np.zeros((3, 3), np.int32)
    x = dev(a)
    SY.scatter_nd(x, tuple(dev(i) for i in _idx([0, 2], [1, 2])), dev(np.int32([4, 5])), False)
    a[[0, 2], [1, 2]] = [4, 5]
    check(x, a)
    s = dev(np.float32(1.0))
    SY.scatter_nd(s, (), dev(np.float32(2.5)), True)
    check(s, np.float32(3.5))


def test_nonzero():
    a = np.float32([[0, 1, 0], [2, 0, np.nan]])
    got = SY.nonzero(dev(a))
    for g, w in zip(got, NP.nonzero(a)):
        check(g, w)
    for g, w in zip(SY.nonzero(dev(np.zeros((2, 2), bool))), NP.nonzero(np.zeros((2, 2), bool))):
        check(g, w)


# --------------------------------------------------------------------------- sorting
SORT_DATA = np.float32([[3, np.nan, 1, 3, -np.inf, 2, 1, np.nan],
                        [0, 0, -1, 5, 5, 5, np.inf, -0.0]])


@pytest.mark.parametrize("descending", [False, True])
def test_sort_argsort_stable_with_nan(descending):
    for a in (SORT_DATA, np.int64([[2, 1, 2, 1, 3, 2, 0, 0], [5, 5, 5, 5, 1, 1, 1, 1]])):
        for axis in (0, 1):
            check(SY.sort(dev(a), axis, descending, True), NP.sort(a, axis, descending, True))
            check(SY.argsort(dev(a), axis, descending, True),
                  NP.argsort(a, axis, descending, True))


def test_sort_unstable_values():
    a = RNG.standard_normal((3, 50)).astype(np.float32)
    check(SY.sort(dev(a), 1, True, False), NP.sort(a, 1, True, False))
    idx = SY.to_numpy(SY.argsort(dev(a), 1, False, False))
    np.testing.assert_array_equal(np.take_along_axis(a, idx, 1), np.sort(a, 1))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side):
    s = np.float32([-1, 0, 0, 2, 5, 5, np.nan])
    v = np.float32([-3, 0, 2, 4, 5, 9, np.nan, -1])
    check(SY.searchsorted(dev(s), dev(v), side), NP.searchsorted(s, v, side))
    sb = np.sort(RNG.integers(0, 6, (2, 3, 9)), axis=-1).astype(np.float32)
    sb[0, 1, -2:] = np.nan
    vb = RNG.integers(-1, 8, (2, 3, 5)).astype(np.float32)
    vb[0, 1, 0] = np.nan
    check(SY.searchsorted(dev(sb), dev(vb), side), NP.searchsorted(sb, vb, side))
    si = np.sort(RNG.integers(-5, 5, (4, 1)), axis=-1)
    vi = RNG.integers(-6, 6, (4, 3))
    check(SY.searchsorted(dev(si), dev(vi), side), NP.searchsorted(si, vi, side))


# ---------------------------------------------------------------- matmul and random
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex64", "int64",
                                   "bool"])
def test_matmul(dtype):
    dtype = np.dtype(dtype)
    if not SY.supports_dtype(dtype, 0):
        pytest.skip(f"no {dtype}")
    a, b = sample("add", dtype, 40).reshape(2, 4, 5), sample("add", dtype, 30).reshape(2, 5, 3)
    check(SY.matmul(dev(a), dev(b)), NP.matmul(a, b), rtol=1e-2 if dtype == np.float16 else 1e-5)
    check(SY.matmul(dev(a[0]), dev(b[0])), NP.matmul(a[0], b[0]),
          rtol=1e-2 if dtype == np.float16 else 1e-5)
    if dtype == np.float32:  # a result big enough for the pool, from transposed operands
        m = RNG.standard_normal((300, 260)).astype(np.float32)
        check(SY.matmul(dev(m), SY.permute(dev(m), (1, 0))), m @ m.T, rtol=1e-4, atol=1e-4)


def test_float16_matrix_vector_products():
    """oneMKL has no float16 gemv: vector products (1-D operands, or a 1-row/1-column
    matrix, which dpnp hands to gemv) must still work, accumulated in float32."""
    if not SY.supports_dtype(np.dtype(np.float16), 0):
        pytest.skip("no float16")
    a = RNG.standard_normal((3, 4)).astype(np.float16)
    b = RNG.standard_normal((4, 2)).astype(np.float16)
    for x, y in ((a, b[:, 0]), (a[0], b), (a[0], b[:, 0]), (a[:1], b),
                 (a, b[:, :1].copy())):
        exp = (x.astype(np.float32) @ y.astype(np.float32)).astype(np.float16)
        got = SY.matmul(dev(x), dev(np.ascontiguousarray(y)))
        assert got.dtype == np.float16
        check(got, exp, rtol=2e-3, atol=2e-3)


def test_matmul_broadcast_operands():
    """Stride-0 matrix axes (core's broadcast views, e.g. the gradient of a sum) must not
    reach oneMKL, which rejects them."""
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    ones = SY.broadcast_to(dev(np.float32([[1.0]])), (1, 2))
    check(SY.matmul(ones, dev(a)), np.ones((1, 2), np.float32) @ a)
    col = SY.broadcast_to(dev(np.float32([[2.0]])), (3, 1))
    check(SY.matmul(dev(a), col), a @ np.full((3, 1), 2, np.float32))
    rows = SY.broadcast_to(dev(a[:1]), (4, 3))
    check(SY.matmul(rows, dev(a.T.copy())), np.broadcast_to(a[:1], (4, 3)) @ a.T)
    batch = SY.broadcast_to(dev(a[None]), (5, 2, 3))
    check(SY.matmul(batch, dev(np.ones((5, 3, 2), np.float32))),
          np.broadcast_to(a, (5, 2, 3)) @ np.ones((5, 3, 2), np.float32))


@pytest.mark.parametrize("shape,key,counter", [((0,), (1, 2), 0), ((7,), (0, 0), 0),
                                               ((3, 5), (0xDEADBEEF, 0x12345678), 2**32 - 2),
                                               ((1000,), (42, 7), 123456789)])
def test_random_bits_bit_identical(shape, key, counter):
    got = SY.random_bits(shape, key, counter, 0)
    check(got, NP.random_bits(shape, key, counter, 0), exact=True)


# ------------------------------------------------------------------------ capability
def test_device_info_and_dtypes():
    info = SY.device_info(0)
    d = SY._devices[0]
    assert info["name"] == d.name and info["memory"] > 0 and info["compute_units"] > 0
    assert info["fp64"] == d.has_aspect_fp64 and info["fp16"] == d.has_aspect_fp16
    assert SY.supports_dtype(np.dtype(np.float64), 0) == d.has_aspect_fp64
    assert SY.supports_dtype(np.dtype(np.float16), 0) == d.has_aspect_fp16
    for dt in DTYPES:
        assert SY.dtype_unsupported_reason(dt, 0) is None
    assert SY.unavailable_reason() is None
    assert "dpnp" in SY.version()
    SY.synchronize(0)


def test_every_array_shares_the_device_queue():
    """dpnp raises ExecutionPlacementError when arrays on one device carry different
    queues: everything we make must use the device's one queue."""
    made = [SY.empty((2,), np.dtype(np.float32), 0), SY.full((2,), 1, np.dtype(np.int8), 0),
            SY.arange(0, 1, 3, np.dtype(np.int64), 0), dev(np.ones(2)),
            SY.random_bits((4,), (1, 1), 0, 0),
            SY.searchsorted(dev(np.ones((2, 3))), dev(np.ones((2, 2))), "left")]
    for m in made:
        assert m.sycl_queue == Q
    import dpctl
    assert dpnp.ones(2, device=SY._devices[0]).sycl_queue == Q  # plain dpnp arrays mix
    assert Q == dpctl.get_device_cached_queue(SY._devices[0])


# ------------------------------------------------- sycl and opencl in one process
# Both orders must work: the SYCL backend appends libintelocl.so to OCL_ICD_FILENAMES for
# its own OpenCL loader and restores the variable, and must neither hide PoCL from
# PyOpenCL nor add Intel's platform to PyOpenCL's list (that would renumber opencl:N).
_TWO_BACKENDS = r"""
import json, os, sys
order = sys.argv[1]
import omnitensor as ot
from omnitensor.backends import registry
assert "dpctl" not in sys.modules and "dpnp" not in sys.modules, "import omnitensor pulled dpnp"
out = {}

def run_sycl():
    a = ot.arange(6, dtype=ot.float32, device="sycl:0")
    out["sycl"] = ((a * 2 + 1).sum().item(), str((a + a).device))

def run_opencl():
    import pyopencl as cl
    out["cl_platforms"] = [p.name for p in cl.get_platforms()]
    be, why = registry.try_backend("opencl")
    if be is not None:  # omnitensor's own OpenCL backend
        b = ot.arange(6, dtype=ot.float32, device="opencl:0")
        out["opencl"] = ((b * 2 + 1).sum().item(), str(b.device))
    else:  # the backend is not usable here: still prove PoCL computes in this process
        ctx = cl.Context(cl.get_platforms()[0].get_devices()[:1])
        q = cl.CommandQueue(ctx)
        import numpy as np, pyopencl.array as cla
        b = cla.to_device(q, np.arange(6, dtype=np.float32))
        out["opencl"] = (float((b * 2 + 1).get().sum()), "pyopencl:" + why[:60])

for step in ((run_sycl, run_opencl) if order == "sycl-first" else (run_opencl, run_sycl)):
    step()
out["env"] = os.environ.get("OCL_ICD_FILENAMES")
print(json.dumps(out))
"""


def _run(code: str, *args: str, env: dict | None = None) -> str:
    import os
    import subprocess
    import sys
    full = dict(os.environ)
    full.pop("OCL_ICD_FILENAMES", None)
    full.update(env or {})
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                       env=full, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("order", ["sycl-first", "opencl-first"])
def test_sycl_and_opencl_side_by_side(order):
    import json
    pytest.importorskip("pyopencl", reason="pyopencl is not installed: no opencl half")
    baseline = json.loads(_run("import json, pyopencl as cl; "
                               "print(json.dumps([p.name for p in cl.get_platforms()]))"))
    out = json.loads(_run(_TWO_BACKENDS, order))
    assert out["sycl"] == [36.0, "sycl:0"]
    assert out["opencl"][0] == 36.0
    assert out["cl_platforms"] == baseline, "the sycl backend changed PyOpenCL's platforms"
    assert out["env"] is None, "OCL_ICD_FILENAMES leaked out of the sycl backend's setup"


def test_foreign_dpnp_queue_joins_the_device_queue():
    """A dpnp array made on another queue of the same device (a user's
    ``dpctl.SyclQueue(dev)``) is re-associated with the device's queue without a copy, so
    it combines with omnitensor's arrays instead of raising ExecutionPlacementError."""
    import dpctl

    import omnitensor as ot
    x = dpnp.arange(5, dtype=np.float32, sycl_queue=dpctl.SyclQueue(SY._devices[0]))
    assert x.sycl_queue != Q
    t = ot.from_dlpack(x)
    assert str(t.device) == "sycl:0" and t._data.sycl_queue == Q
    assert t._data.get_array()._pointer == x.get_array()._pointer  # zero copy
    np.testing.assert_array_equal((t + ot.ones(5, device="sycl:0")).numpy(),
                                  np.arange(1, 6, dtype=np.float32))


def test_devices_without_fp64_refuse_float64_clearly():
    import omnitensor as ot
    from omnitensor.errors import UnsupportedDTypeError
    lacking = [i for i in range(SY.device_count()) if not SY._fp64[i]]
    if not lacking:
        pytest.skip("every SYCL device here has the fp64 aspect")
    i = lacking[0]
    with pytest.raises(UnsupportedDTypeError, match="fp64"):
        ot.zeros(3, dtype=ot.float64, device=f"sycl:{i}")
    x = ot.zeros(3, device=f"sycl:{i}")
    with pytest.raises(UnsupportedDTypeError, match="fp64"):
        x.to(ot.float64)
