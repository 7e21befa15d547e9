"""The backend contract (``omnitensor/backends/base.py``), checked on every registered
backend that has a device here (the ``device`` fixture: cpu, opencl:0, sycl:0, cuda:0...)
against the NumPy backend and NumPy's float64 values.

This module: identity and the declared hooks, memory, device copies, views and every
layout (strided, broadcast, flipped, permuted, 0-d, empty), ``assign_from_host``.
``test_backend_contract_elementwise.py``: every unary/binary primitive on every dtype core
hands it, special values, Python scalars, ``out=`` and aliasing, ``where``.
``test_backend_contract_ops.py``: reductions, scans, sorting, indexing, matmul, random.
What only one stack has (OpenCL's DLPack mapping, SYCL's queue and pool) lives in
``test_opencl_backend.py`` and ``test_sycl_backend.py``.
"""

import numpy as np
import pytest

import omnitensor as ot
from omnitensor.backends import registry
from omnitensor.backends.base import (FFT, LINALG, OPTIONAL_HOOKS, Backend, BackendSpec)

from contract_helpers import ALL, NP, Probe, rand, rng


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
