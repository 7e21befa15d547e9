"""The cpu backend's intra-op threads: split ufunc calls give NumPy's exact results, run
only where splitting is safe, and survive fork."""
from __future__ import annotations

import multiprocessing as mp
import os
import threading

import numpy as np
import pytest

import omnitensor as ot
from omnitensor.backends.cpu import threads as cpu_threads
from omnitensor.backends.registry import get_backend

CPU = get_backend("cpu")
N = cpu_threads.MIN_ELEMENTS * 3 + 17  # several chunks and a ragged tail
rng = np.random.default_rng(0)


@pytest.fixture
def two_threads():
    before = ot.get_num_threads()
    ot.set_num_threads(2)
    yield
    ot.set_num_threads(before)


def _spy(monkeypatch) -> list:
    """Record which threads run ufunc chunks (proves the call was really split)."""
    seen: list = []
    real = cpu_threads.ThreadPoolExecutor.submit

    def submit(self, fn, *a, **k):
        seen.append(a)
        return real(self, fn, *a, **k)
    monkeypatch.setattr(cpu_threads.ThreadPoolExecutor, "submit", submit)
    return seen


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "complex64",
                                   "float16", "bool"])
def test_split_binary_and_unary_are_bitwise_numpy(two_threads, monkeypatch, dtype):
    seen = _spy(monkeypatch)
    a = (rng.standard_normal(N) * 50).astype(dtype)
    b = (rng.standard_normal(N) * 50 + 1).astype(dtype)
    for name in ("add", "multiply", "maximum", "equal", "logical_xor"):
        got = getattr(CPU, name)(a, b)
        np.testing.assert_array_equal(got, getattr(np, name)(a, b))
        assert got.dtype == getattr(np, name)(a, b).dtype
    if dtype not in ("bool", "uint8", "int32"):
        for name in ("tanh", "exp", "sqrt", "negative"):
            with np.errstate(all="ignore"):
                np.testing.assert_array_equal(getattr(CPU, name)(a), getattr(np, name)(a))
    assert seen, "nothing was split"


def test_scalars_multidim_and_weak_promotion(two_threads, monkeypatch):
    seen = _spy(monkeypatch)
    a = rng.standard_normal((N // 7, 7)).astype(np.float32)
    for got, exp in ((CPU.multiply(a, 1.01), a * 1.01), (CPU.subtract(0.5, a), 0.5 - a),
                     (CPU.add(a.astype(np.int8), 3), a.astype(np.int8) + 3)):
        assert got.shape == exp.shape and got.dtype == exp.dtype
        np.testing.assert_array_equal(got, exp)
    assert len(seen) >= 3


def test_out_in_place_and_overlaps(two_threads, monkeypatch):
    seen = _spy(monkeypatch)
    a = rng.standard_normal(N)
    b = rng.standard_normal(N)
    c = a.copy()
    assert CPU.add(c, b, out=c) is c          # out is an operand: split
    np.testing.assert_array_equal(c, a + b)
    assert seen
    seen.clear()
    buf = a.copy()
    CPU.add(buf[1:], b[1:], out=buf[:-1])     # partial overlap: NumPy's own buffering
    exp = a.copy()
    np.add(exp[1:], b[1:], out=exp[:-1])
    np.testing.assert_array_equal(buf, exp)
    assert not seen
    strided = rng.standard_normal(2 * N)[::2]  # not contiguous: unsplit, still right
    np.testing.assert_array_equal(CPU.multiply(strided, 2.0), strided * 2.0)
    bc = rng.standard_normal((1, N))           # broadcasting: unsplit
    np.testing.assert_array_equal(CPU.add(bc, rng.standard_normal((2, 1))).shape, (2, N))
    assert not seen


def test_one_thread_and_small_calls_are_not_split(monkeypatch):
    seen = _spy(monkeypatch)
    before = ot.get_num_threads()
    try:
        ot.set_num_threads(1)
        a = np.ones(N)
        np.testing.assert_array_equal(CPU.add(a, a), a + a)
        ot.set_num_threads(2)
        small = np.ones(cpu_threads.MIN_ELEMENTS - 1)
        np.testing.assert_array_equal(CPU.add(small, small), small * 2)
    finally:
        ot.set_num_threads(before)
    assert not seen


def test_tensor_ops_and_autograd_use_threads(two_threads, monkeypatch):
    seen = _spy(monkeypatch)
    xn = rng.standard_normal(N).astype(np.float32)
    x = ot.tensor(xn, requires_grad=True)
    y = (x * 1.01 + 0.1).tanh()
    y.sum().backward()
    t = np.tanh(xn * np.float32(1.01) + np.float32(0.1))
    np.testing.assert_array_equal(y.detach().numpy(), t)
    np.testing.assert_allclose(x.grad.numpy(), (1 - t * t) * np.float32(1.01), rtol=1e-6)
    assert seen


def test_worker_exception_propagates(two_threads):
    a = np.ones(N, np.int64)
    with pytest.raises(TypeError):
        CPU.bitwise_and(a, 1.5)


def test_set_num_threads_validates():
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="positive int"):
            ot.set_num_threads(bad)


def _child(q) -> None:
    a = np.arange(N, dtype=np.float64)
    q.put(float(CPU.add(a, a).sum()))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_pool_is_remade_after_fork(two_threads):
    a = np.ones(N)
    CPU.add(a, a)  # the parent's pool exists (and has threads)
    assert any(t.name.startswith("omnitensor-cpu") for t in threading.enumerate())
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(q,))
    p.start()
    p.join(60)
    if p.is_alive():
        p.kill()
    assert p.exitcode == 0, "the forked child hung or failed splitting an op"
    assert q.get(timeout=5) == float(np.arange(N, dtype=np.float64).sum() * 2)


def test_env_var(monkeypatch):
    monkeypatch.setenv("OMNITENSOR_NUM_THREADS", "3")
    assert cpu_threads._default_threads() == 3
    monkeypatch.setenv("OMNITENSOR_NUM_THREADS", "zero")
    with pytest.raises(ValueError, match="OMNITENSOR_NUM_THREADS"):
        cpu_threads._default_threads()


def test_errstate_reaches_the_worker_threads(two_threads):
    a = np.full(N, 1e300)
    with np.errstate(over="raise"):
        with pytest.raises(FloatingPointError):
            CPU.multiply(a, a)
    with np.errstate(all="ignore"):
        assert np.isinf(CPU.multiply(a, a)).all()
