"""The backend contract, continued (see ``test_backend_contract.py``): reductions, scans,
nonzero, sorting, searchsorted, gather/scatter, matmul and the Philox random stream, on
every registered backend with a device here, against the NumPy backend and NumPy's float64
values."""
import itertools
import math

import numpy as np
import pytest

from omnitensor.backends.philox import philox_bits

from contract_helpers import NP, Probe, rand, rng, wide


@pytest.fixture
def bk(device) -> Probe:
    return Probe(device)


# --------------------------------------------------------------------- reductions
_AXES3 = [ax for r in (1, 2, 3) for ax in itertools.combinations(range(3), r)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint64", "complex64",
                                   "int32", "float16", "uint8"])
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min"])
def test_reductions_every_axes_subset(bk, op, dtype):
    dtype = np.dtype(dtype)
    bk.skip_dtype(dtype)
    if dtype.kind == "c" and op in ("max", "min"):
        pytest.skip("complex numbers are not ordered")
    a = rand((4, 3, 5), dtype, 0.5, 1.5) if op == "prod" else rand((4, 3, 5), dtype)
    if dtype.kind in "iu" and op in ("sum", "prod"):
        a = rng.integers(0 if dtype.kind == "u" else -3, 4, (4, 3, 5)).astype(dtype)
    for view in (a, a.transpose(2, 0, 1)):
        x = bk.dev(a)
        xv = x if view is a else bk.permute(x, (2, 0, 1))
        for axes in _AXES3:
            for keep in (False, True):
                exp = getattr(NP, op)(wide(view), axes, keep)
                bk.check(getattr(bk.be, op)(xv, axes, keep), exp.astype(dtype),
                         exact=dtype.kind in "iu", rtol=2e-3 if dtype == np.float16 else None)


@pytest.mark.parametrize("op", ["any", "all"])
def test_any_all_every_axes_subset(bk, op):
    a = rng.random((4, 3, 5)) < (0.2 if op == "any" else 0.9)
    for axes in _AXES3:
        bk.check(getattr(bk.be, op)(bk.dev(a), axes, True), getattr(NP, op)(a, axes, True))
        bk.check(getattr(bk.be, op)(bk.flip(bk.dev(a), (1,)), axes, False),
                 getattr(NP, op)(a[:, ::-1], axes, False))


@pytest.mark.parametrize("shape,axes", [((300000,), (0,)), ((3, 70000), (1,)),
                                        ((70000, 40), (0,)), ((50, 3000, 3), (0, 2)),
                                        ((20000, 9), (1,))])
def test_large_reductions_split_and_outer_paths(bk, shape, axes):
    a = rng.standard_normal(shape).astype(np.float32)
    x = bk.dev(a)
    # a float32 sum with cancellation is only as exact as its terms: error relative to
    # sum(|a|) (NumPy's own float32 column sums are ~100x worse than this bound)
    bk.check(bk.sum(x, axes, False), np.sum(a.astype(np.float64), axis=axes), rtol=2e-5,
             dtype=a.dtype, atol=2e-7 * np.sum(np.abs(a), axis=axes).max())
    bk.check(bk.max(x, axes, False), np.max(a, axis=axes), exact=True)
    i = rng.integers(-100, 100, shape)
    bk.check(bk.sum(bk.dev(i), axes, False), np.sum(i, axis=axes))


def test_reduction_nan_and_empty(bk):
    a = rand((3, 4), np.float32)
    a[1, 2] = np.nan
    bk.check(bk.max(bk.dev(a), (1,), False), np.max(a, axis=1))
    bk.check(bk.min(bk.dev(a), (0, 1), False), np.min(a))
    b = np.float32([[1, np.nan, 3], [4, 5, -np.inf]])
    for name in ("max", "min"):
        bk.check(getattr(bk.be, name)(bk.dev(b), (1,), False), getattr(NP, name)(b, (1,), False))
    e = np.zeros((0, 3), np.float32)
    bk.check(bk.sum(bk.dev(e), (0,), False), np.zeros(3, np.float32))
    bk.check(bk.prod(bk.dev(e), (0,), True), np.ones((1, 3), np.float32))
    bk.check(bk.sum(bk.dev(e), (1,), False), np.zeros(0, np.float32))
    bk.check(bk.all(bk.dev(np.zeros((2, 0), bool)), (1,), False), np.ones(2, bool))


def test_sum_precision_of_a_long_float32_row(bk):
    a = rng.random(1 << 21).astype(np.float32)
    got = float(bk.host(bk.sum(bk.dev(a), (0,), False)))
    assert abs(got - a.astype(np.float64).sum()) <= 2e-6 * a.sum()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "int64", "float16"])
def test_argmax_argmin_ties_and_nan(bk, dtype):
    dtype = np.dtype(dtype)
    bk.skip_dtype(dtype)
    a = rng.integers(0, 4, (5, 6, 7)).astype(dtype)  # many ties: first occurrence wins
    x = bk.dev(a)
    for op in ("argmax", "argmin"):
        for axis in (None, 0, 1, 2):
            for keep in (False, True):
                bk.check(getattr(bk.be, op)(x, axis, keep), getattr(NP, op)(a, axis, keep))
        bk.check(getattr(bk.be, op)(bk.permute(x, (2, 0, 1)), 1, False),
                 getattr(NP, op)(a.transpose(2, 0, 1), 1, False))
    if dtype.kind == "f":
        b = a.copy()
        b[1, 2, 3] = b[1, 2, 5] = np.nan
        b[4, 0, 1] = np.nan
        for op in ("argmax", "argmin"):
            bk.check(getattr(bk.be, op)(bk.dev(b), 2, False), getattr(NP, op)(b, 2, False))
            bk.check(getattr(bk.be, op)(bk.dev(b), None, False),
                     getattr(NP, op)(b, None, False))
    big = rng.standard_normal(300001).astype(dtype) if dtype.kind == "f" else \
        rng.integers(0, 100, 300001).astype(dtype)
    bk.check(bk.argmax(bk.dev(big), None, False), np.argmax(big))
    bk.check(bk.argmin(bk.dev(big), 0, False), np.argmin(big))


# -------------------------------------------------------------------------- scans
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex64", "uint64",
                                   "float16"])
def test_cumsum_cumprod(bk, dtype):
    dtype = np.dtype(dtype)
    bk.skip_dtype(dtype)
    a = rand((3, 4, 5), dtype, 0.5, 1.5)
    if dtype.kind in "iu":
        a = rng.integers(0, 5, (3, 4, 5)).astype(dtype)
    for axis in range(3):
        bk.check(bk.cumsum(bk.dev(a), axis), np.cumsum(wide(a), axis=axis).astype(dtype))
        bk.check(bk.cumprod(bk.dev(a), axis), np.cumprod(wide(a), axis=axis).astype(dtype))
        bk.check(bk.cumsum(bk.flip(bk.dev(a), (axis,)), axis),
                 np.cumsum(np.flip(wide(a), axis), axis=axis).astype(dtype))


def test_long_scan_parallel_path(bk):
    a = rng.integers(-5, 6, 400000).astype(np.int64)
    bk.check(bk.cumsum(bk.dev(a), 0), np.cumsum(a))
    if bk.supports(np.float64):
        f = rng.random(300000).astype(np.float64)
        bk.check(bk.cumsum(bk.dev(f), 0), np.cumsum(f), rtol=1e-9)


@pytest.mark.parametrize("dtype", ["bool", "float32", "int8", "complex64"])
def test_nonzero(bk, dtype):
    dtype = np.dtype(dtype)
    a = rand((6, 7, 3), dtype)
    if dtype.kind != "b":
        a = np.where(rng.random(a.shape) < 0.6, 0, a).astype(dtype)
    if dtype.kind == "f":
        a[0, 0, 0] = np.nan  # NaN is non-zero
    for view, xv in ((a, bk.dev(a)), (a.transpose(1, 2, 0), bk.permute(bk.dev(a), (1, 2, 0)))):
        got = bk.nonzero(xv)
        exp = np.nonzero(view)
        assert len(got) == len(exp)
        for g, e in zip(got, exp):
            bk.check(g, e.astype(np.int64))
    big = rng.random(100000) < 0.3
    bk.check(bk.nonzero(bk.dev(big))[0], np.nonzero(big)[0].astype(np.int64))
    none = bk.nonzero(bk.dev(np.zeros((3, 4), bool)))
    assert len(none) == 2 and all(bk.host(i).shape == (0,) for i in none)


# -------------------------------------------------------------------------- sorting
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "int64", "bool",
                                   "float16"])
def test_sort_argsort_stable_with_nan(bk, dtype):
    dtype = np.dtype(dtype)
    bk.skip_dtype(dtype)
    a = rng.integers(0, 5, (4, 37)).astype(dtype)  # ties everywhere
    if dtype.kind == "f":
        a[0, [3, 10]] = np.nan
        a[1, 5] = -0.0
        a[2, 7], a[3, 1] = np.inf, -np.inf
    x = bk.dev(a)
    for axis in (0, 1):
        for desc in (False, True):
            bk.check(bk.argsort(x, axis, desc, True), NP.argsort(a, axis, desc, True))
            bk.check(bk.sort(x, axis, desc, True), NP.sort(a, axis, desc, True))


def test_sort_long_rows_views_and_unstable(bk):
    a = rng.standard_normal((3, 5000)).astype(np.float32)
    a[0, ::7] = np.nan
    x = bk.dev(a)
    bk.check(bk.sort(x, 1, False, True), np.sort(a, 1))
    bk.check(bk.argsort(bk.permute(x, (1, 0)), 0, True, True), NP.argsort(a.T, 0, True, True))
    b = rng.integers(0, 50, 100003).astype(np.int64)
    bk.check(bk.argsort(bk.dev(b), 0, False, True), np.argsort(b, kind="stable"))
    c = rng.standard_normal((3, 50)).astype(np.float32)  # unstable: any order of ties
    bk.check(bk.sort(bk.dev(c), 1, True, False), NP.sort(c, 1, True, False))
    idx = bk.host(bk.argsort(bk.dev(c), 1, False, False))
    np.testing.assert_array_equal(np.take_along_axis(c, idx, 1), np.sort(c, 1))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(bk, side):
    s = np.sort(rng.integers(0, 20, 50)).astype(np.float32)
    s[-3:] = np.nan
    v = np.array([-1, 0, 3, 3.5, 19, 25, np.nan], np.float32)
    bk.check(bk.searchsorted(bk.dev(s), bk.dev(v), side), NP.searchsorted(s, v, side))
    v2 = rng.integers(-2, 22, (4, 3)).astype(np.float32)
    bk.check(bk.searchsorted(bk.dev(s), bk.dev(v2), side), NP.searchsorted(s, v2, side))
    sb = np.sort(rng.integers(0, 10, (2, 3, 8)), axis=-1).astype(np.int32)
    vb = rng.integers(-1, 11, (2, 3, 5)).astype(np.int32)
    bk.check(bk.searchsorted(bk.dev(sb), bk.dev(vb), side), NP.searchsorted(sb, vb, side))
    sf = np.sort(rng.integers(0, 6, (2, 3, 9)), axis=-1).astype(np.float32)
    sf[0, 1, -2:] = np.nan  # batched rows with NaN tails and NaN needles
    vf = rng.integers(-1, 8, (2, 3, 5)).astype(np.float32)
    vf[0, 1, 0] = np.nan
    bk.check(bk.searchsorted(bk.dev(sf), bk.dev(vf), side), NP.searchsorted(sf, vf, side))
    si = np.sort(rng.integers(-5, 5, (4, 1)), axis=-1)  # rows of one element
    vi = rng.integers(-6, 6, (4, 3))
    bk.check(bk.searchsorted(bk.dev(si), bk.dev(vi), side), NP.searchsorted(si, vi, side))


# ------------------------------------------------------------------- gather/scatter
def _idx(bk, *arrays):
    return tuple(bk.dev(np.asarray(i, np.int64)) for i in arrays)


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "int64", "uint16",
                                   "float32", "float64", "complex64", "complex128", "float16"])
def test_gather_scatter_with_duplicates(bk, dtype):
    dtype = np.dtype(dtype)
    bk.skip_dtype(dtype)
    a = rand((5, 6), dtype, -3, 3)
    i0 = np.array([[0, 4, 4], [2, 2, 2]], np.int64)
    i1 = np.array([[5, 1, 1], [3, 3, 0]], np.int64)
    x = bk.dev(a)
    bk.check(bk.gather_nd(x, _idx(bk, i0, i1)), a[i0, i1], exact=True)
    v = rand((2, 3), dtype, -3, 3)
    if dtype.kind in "iu":
        v = rng.integers(0, 5, (2, 3)).astype(dtype)
    y = bk.dev(a)
    bk.scatter_nd(y, _idx(bk, i0, i1), bk.dev(v), True)
    exp = a.copy()
    NP.scatter_nd(exp, (i0, i1), v, True)
    bk.check(y, exp, rtol=1e-3 if dtype == np.float16 else None)
    z = bk.dev(a)
    ud0, ud1 = np.array([0, 1, 4], np.int64), np.array([2, 2, 5], np.int64)
    bk.scatter_nd(z, _idx(bk, ud0, ud1), bk.dev(v[0]), False)
    exp = a.copy()
    exp[ud0, ud1] = v[0]
    bk.check(z, exp, exact=True)
    one = np.array([0, 1, 1, 0], np.int64)  # a 1-D gather from a strided view
    bk.check(bk.gather_nd(bk.index(x, (slice(0, 5, 1), 2)), _idx(bk, one)), a[:, 2][one],
             exact=True)


def test_scatter_accumulate_many_duplicates_and_views(bk):
    n = 200000
    idx = rng.integers(0, 17, n).astype(np.int64)
    vals = rng.random(n).astype(np.float32)
    acc = bk.dev(np.zeros(17, np.float32))
    bk.scatter_nd(acc, (bk.dev(idx),), bk.dev(vals), True)
    bk.check(acc, np.bincount(idx, vals.astype(np.float64), 17), rtol=1e-4, dtype=vals.dtype)
    ia = bk.dev(np.zeros(17, np.int64))
    bk.scatter_nd(ia, (bk.dev(idx),), bk.broadcast_to(bk.dev(np.array(1, np.int64)), (n,)),
                  True)
    bk.check(ia, np.bincount(idx, minlength=17))
    # into a strided, reversed view: the writes reach the base
    base = bk.dev(np.zeros((4, 6), np.int32))
    view = bk.index(base, (slice(0, 4, 1), slice(5, None, -2)))
    bk.scatter_nd(view, _idx(bk, [0, 3, 3], [1, 2, 2]), bk.dev(np.array([1, 2, 3], np.int32)),
                  True)
    exp = np.zeros((4, 6), np.int32)
    exp[0, 3] += 1
    exp[3, 1] += 5
    bk.check(base, exp)
    fb = bk.dev(np.zeros((4, 6), np.float32))
    fv = bk.index(fb, (slice(0, 4, 2), slice(5, None, -1)))
    bk.scatter_nd(fv, _idx(bk, [0, 1, 0], [2, 5, 2]), bk.dev(np.float32([1, 2, 3])), True)
    bk.scatter_nd(fv, _idx(bk, [1], [0]), 9.0, False)  # a Python scalar value
    want = np.zeros((4, 6), np.float32)
    wv = want[0:4:2, ::-1]
    np.add.at(wv, (np.array([0, 1, 0]), np.array([2, 5, 2])), np.float32([1, 2, 3]))
    wv[1, 0] = 9
    bk.check(fb, want)


def test_scatter_scalar_values_long_runs_and_zero_d(bk):
    n = 1000
    idx = rng.integers(0, 5, n).astype(np.int64)
    if bk.supports(np.float64):
        vals = rng.standard_normal(n)
        want = np.zeros(5)
        NP.scatter_nd(want, (idx,), vals, True)
        x = bk.dev(np.zeros(5))
        bk.scatter_nd(x, (bk.dev(idx),), bk.dev(vals), True)
        bk.check(x, want, rtol=1e-12, atol=1e-12)
    ints = bk.dev(np.zeros(4, np.int64))
    bk.scatter_nd(ints, _idx(bk, [3, 3, 3, 0]), 5, True)
    bk.check(ints, np.int64([5, 0, 0, 15]))
    s = bk.dev(np.float32(1.0))
    bk.scatter_nd(s, (), bk.dev(np.float32(2.5)), True)
    bk.check(s, np.float32(3.5))


def test_gather_with_broadcast_indices(bk):
    a = rand((4, 5), np.float32)
    r = bk.broadcast_to(bk.reshape(bk.dev(np.arange(4)), (4, 1)), (4, 3))
    c = bk.dev(np.array([[0, 4, 2]] * 4, np.int64))
    bk.check(bk.gather_nd(bk.dev(a), (r, c)), a[np.arange(4)[:, None], [[0, 4, 2]] * 4],
             exact=True)


# ------------------------------------------------------------------------ matmul
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (7, 5, 3), (65, 33, 17), (129, 65, 130),
                                   (2, 200, 1), (1, 7, 129)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_sizes(bk, m, k, n, dtype):
    bk.skip_dtype(dtype)
    a, b = rand((m, k), dtype, -1, 1), rand((k, n), dtype, -1, 1)
    bk.check(bk.matmul(bk.dev(a), bk.dev(b)), wide(a) @ wide(b),
             rtol=1e-4 if dtype == "float32" else 1e-10, dtype=np.dtype(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "complex64",
                                   "complex128", "uint8", "bool", "float16"])
def test_matmul_batched_and_transposed(bk, dtype):
    dtype = np.dtype(dtype)
    bk.skip_dtype(dtype)
    a, b = rand((3, 9, 6), dtype, -1, 1), rand((3, 8, 6), dtype, -1, 1)
    if dtype.kind in "iu":
        a, b = a % 7, b % 7
    bt = np.swapaxes(b, 1, 2)
    exp = np.matmul(wide(a), wide(bt))
    if dtype.kind in "iub":
        exp = np.matmul(a, bt)
    tol = {"e": 5e-3, "f": 1e-4, "d": 1e-10, "F": 1e-4, "D": 1e-10}.get(dtype.char)
    bk.check(bk.matmul(bk.dev(a), bk.permute(bk.dev(b), (0, 2, 1))), exp.astype(dtype),
             rtol=tol)
    at = np.ascontiguousarray(np.swapaxes(a, 1, 2))
    bk.check(bk.matmul(bk.permute(bk.dev(at), (0, 2, 1)), bk.permute(bk.dev(b), (0, 2, 1))),
             exp.astype(dtype), rtol=tol)
    # broadcast batch (stride 0) and an unbatched product
    w = rand((6, 5), dtype, -1, 1)
    if dtype.kind in "iu":
        w = w % 7
    wb = bk.broadcast_to(bk.dev(w), (3, 6, 5))
    exp2 = np.matmul(a, w) if dtype.kind in "iub" else np.matmul(wide(a), wide(w))
    bk.check(bk.matmul(bk.dev(a), wb), exp2.astype(dtype), rtol=tol)
    exp3 = np.matmul(a[0], w) if dtype.kind in "iub" else np.matmul(wide(a[0]), wide(w))
    bk.check(bk.matmul(bk.dev(a[0]), bk.dev(w)), exp3.astype(dtype), rtol=tol)


def test_matmul_large_matches_numpy(bk):
    a = rng.standard_normal((300, 257)).astype(np.float32)
    b = rng.standard_normal((257, 190)).astype(np.float32)
    bk.check(bk.matmul(bk.dev(a), bk.dev(b)), a.astype(np.float64) @ b, rtol=2e-4,
             dtype=a.dtype)
    m = rng.standard_normal((300, 260)).astype(np.float32)  # from a transposed operand
    bk.check(bk.matmul(bk.dev(m), bk.permute(bk.dev(m), (1, 0))), m.astype(np.float64) @ m.T,
             rtol=1e-4, atol=1e-4, dtype=m.dtype)


def test_float16_matrix_vector_products(bk):
    """Products with a 1-row or 1-column matrix (what BLAS libraries hand to gemv; core
    passes vectors as such matrices) in float16, accumulated in float32."""
    bk.skip_dtype(np.float16)
    a = rng.standard_normal((3, 4)).astype(np.float16)
    b = rng.standard_normal((4, 2)).astype(np.float16)
    for x, y in ((a[:1], b), (a, b[:, :1].copy()), (a[:1], b[:, :1].copy()),
                 (a[None, :1], b[None])):
        exp = (x.astype(np.float32) @ y.astype(np.float32)).astype(np.float16)
        got = bk.matmul(bk.dev(x), bk.dev(np.ascontiguousarray(y)))
        bk.check(got, exp, rtol=2e-3, atol=2e-3)


def test_matmul_broadcast_operands(bk):
    """Stride-0 matrix axes (core's broadcast views, e.g. the gradient of a sum)."""
    a = rng.standard_normal((2, 3)).astype(np.float32)
    ones = bk.broadcast_to(bk.dev(np.float32([[1.0]])), (1, 2))
    bk.check(bk.matmul(ones, bk.dev(a)), np.ones((1, 2), np.float32) @ a)
    col = bk.broadcast_to(bk.dev(np.float32([[2.0]])), (3, 1))
    bk.check(bk.matmul(bk.dev(a), col), a @ np.full((3, 1), 2, np.float32))
    rows = bk.broadcast_to(bk.dev(a[:1]), (4, 3))
    bk.check(bk.matmul(rows, bk.dev(a.T.copy())), np.broadcast_to(a[:1], (4, 3)) @ a.T)
    batch = bk.broadcast_to(bk.dev(a[None]), (5, 2, 3))
    bk.check(bk.matmul(batch, bk.dev(np.ones((5, 3, 2), np.float32))),
             np.broadcast_to(a, (5, 2, 3)) @ np.ones((5, 3, 2), np.float32))


# ------------------------------------------------------------------------- random
@pytest.mark.parametrize("shape,key,counter", [
    ((1,), (0xDEADBEEF, 12345), (1 << 32) - 3), ((3, 7), (0xDEADBEEF, 12345), (1 << 32) - 3),
    ((1001,), (0xDEADBEEF, 12345), (1 << 32) - 3), ((0,), (1, 2), 0),
    ((4, 4, 4), (0xDEADBEEF, 0x12345678), 2**32 - 2), ((7,), (0, 0), 0),
    ((1000,), (42, 7), 123456789)])
def test_random_bits_match_philox(bk, shape, key, counter):
    """Bit-identical on every backend (a counter crossing a 32-bit boundary included)."""
    n = math.prod(shape)
    exp = philox_bits(np, n, key, counter).reshape(shape)
    bk.check(bk.random_bits(shape, key, counter, bk.idx), exp, exact=True)
    bk.check(bk.random_bits(shape, key, counter, bk.idx), NP.random_bits(shape, key, counter, 0),
             exact=True)
