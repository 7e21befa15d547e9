"""torch's top-level ``Stream``, ``Event``, ``get_device_module``, ``futures.Future``,
aten's ``embedding_bag`` and ``lobpcg`` (omnitensor/streams.py, omnitensor/futures.py,
omnitensor/torch_face_aten.py) answer as real torch's, on every device."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import omnitensor as ot
import omnitensor.torch_face as face

torch = pytest.importorskip("torch")


# ------------------------------------------------------------- streams and events
def test_cpu_stream_and_event_answer_as_torch():
    s, ts = face.Stream("cpu"), torch.Stream("cpu")
    assert (s.device_type, s.device_index, s.stream_id) == (ts.device_type, ts.device_index,
                                                            ts.stream_id)
    assert repr(s) == repr(ts)
    assert s.query() is ts.query() is True
    assert s.synchronize() is None and ts.synchronize() is None
    assert s == face.Stream("cpu") and hash(s) == hash(face.Stream("cpu"))
    for ours, theirs in ((s.record_event, ts.record_event),
                         (lambda: s.wait_stream(s), lambda: ts.wait_stream(ts))):
        with pytest.raises(RuntimeError) as a:
            ours()
        with pytest.raises(RuntimeError) as b:
            theirs()
        assert str(a.value) == str(b.value)
    e, te = face.Event("cpu", enable_timing=True), torch.Event("cpu", enable_timing=True)
    assert e.query() is te.query() is True
    assert e.synchronize() is None and e.wait() is None
    with pytest.raises(RuntimeError, match="doesn't support events"):
        e.record()
    with s:
        pass


def test_device_stream_orders_and_times_the_queue(device):
    if device == "cpu":
        pytest.skip("cpu streams: test_cpu_stream_and_event_answer_as_torch")
    s = face.Stream(device)
    assert s.device == ot.device(device)
    assert s.device_type == {"opencl": 4, "sycl": 12, "cuda": 1}[ot.device(device).type]
    assert s.device_index == ot.device(device).index
    start, end = face.Event(device, enable_timing=True), face.Event(device, enable_timing=True)
    x = ot.ones((256, 256), device=device)
    start.record(s)
    for _ in range(4):
        x = x @ x / 256
    s.record_event(end)
    end.synchronize()
    assert end.query() and s.query()
    assert end.elapsed_time(start) <= 0 <= start.elapsed_time(end)
    np.testing.assert_allclose(x.cpu().numpy(), np.ones((256, 256)), rtol=1e-5)
    ev = s.record_event()
    s.wait_event(ev)
    s.wait_stream(face.Stream(device))
    ev.wait(s)
    with pytest.raises(RuntimeError, match="enable_timing"):
        ev.elapsed_time(end)
    with pytest.raises(RuntimeError, match="recorded"):
        face.Event(device, enable_timing=True).elapsed_time(end)


def test_get_device_module():
    assert face.get_device_module("cuda") is face.cuda
    cpu = face.get_device_module("cpu")
    assert cpu is face.get_device_module(face.device("cpu"))
    assert cpu.is_available() is torch.cpu.is_available()
    assert cpu.device_count() == torch.cpu.device_count()
    assert cpu.current_device() == torch.cpu.current_device()
    assert isinstance(cpu.current_stream(), face.Stream) and cpu.synchronize() is None
    for dev in ot.devices():
        if dev.type in ("opencl", "sycl"):
            mod = face.get_device_module(str(dev))
            assert mod.is_available() and mod.device_count() == len(ot.devices(dev.type))
            assert mod.current_stream().device == dev
            mod.synchronize()
    with pytest.raises(RuntimeError):
        torch.get_device_module("foo")
    with pytest.raises(Exception):
        face.get_device_module("foo")


# ------------------------------------------------------------------------- futures
@pytest.mark.parametrize("lib", ["ours", "torch"])
def test_future_answers_as_torch(lib):
    futures = face.futures if lib == "ours" else torch.futures
    f = futures.Future()
    assert not f.done()
    got = []
    f.add_done_callback(lambda fut: got.append(fut.value()))
    chained = f.then(lambda fut: fut.value() + 1)
    failing = f.then(lambda fut: 1 / 0)
    f.set_result(3)
    assert f.done() and f.wait() == 3 and f.value() == 3 and got == [3]
    assert chained.wait() == 4
    with pytest.raises(RuntimeError, match="ZeroDivisionError: division by zero"):
        failing.wait()
    with pytest.raises(RuntimeError, match="can only be marked completed once"):
        f.set_result(4)
    g = futures.Future()
    g.set_exception(ValueError("boom"))
    with pytest.raises(ValueError, match="boom"):
        g.wait()
    a, b = futures.Future(), futures.Future()
    both = futures.collect_all([a, b])
    assert not both.done()
    a.set_result(1)
    assert not both.done()
    b.set_result(2)
    assert [x.value() for x in both.wait()] == [1, 2]
    assert futures.wait_all([a, b]) == [1, 2]


def test_future_completed_on_another_thread():
    f = face.Future()
    assert face.Future is face.futures.Future
    threading.Thread(target=lambda: (time.sleep(0.05), f.set_result("late"))).start()
    assert f.wait() == "late"


# -------------------------------------------------------------- aten embedding_bag
W = np.random.default_rng(3).standard_normal((5, 3)).astype(np.float32)
IDX = [0, 2, 1, 4, 4, 3]


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding_idx", [None, 4, -1])
@pytest.mark.parametrize("include_last_offset", [False, True])
def test_embedding_bag_aten_equals_torch(device, mode, padding_idx, include_last_offset):
    offsets = [0, 2, 2, 6] if include_last_offset else [0, 2, 2, 5]
    args = (False, mode, False, None, include_last_offset, padding_idx)
    ours = face.embedding_bag(ot.tensor(W, device=device), ot.tensor(IDX, device=device),
                              ot.tensor(offsets, device=device), *args)
    theirs = torch.embedding_bag(torch.tensor(W), torch.tensor(IDX), torch.tensor(offsets),
                                 *args)
    assert len(ours) == 4
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape) and o.device == ot.device(device)
        np.testing.assert_allclose(o.cpu().numpy(), t.numpy(), rtol=1e-5, atol=1e-6)


def test_embedding_bag_aten_gradient_and_weights(device):
    pw = np.array([0.5, 1, 2, 1, -1, 3], np.float32)
    w, tw = ot.tensor(W, device=device, requires_grad=True), torch.tensor(W, requires_grad=True)
    o = face.embedding_bag(w, ot.tensor(IDX, device=device), ot.tensor([0, 2, 2, 5],
                           device=device), False, 0, False, ot.tensor(pw, device=device))
    t = torch.embedding_bag(tw, torch.tensor(IDX), torch.tensor([0, 2, 2, 5]), False, 0,
                            False, torch.tensor(pw))
    assert tuple(o[1].shape) == tuple(t[1].shape)
    np.testing.assert_array_equal(o[1].cpu().numpy(), t[1].numpy())
    (o[0] ** 2).sum().backward()
    (t[0] ** 2).sum().backward()
    np.testing.assert_allclose(o[0].detach().cpu().numpy(), t[0].detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(w.grad.cpu().numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError):
        face.embedding_bag(w, ot.tensor(IDX, device=device), ot.tensor([0], device=device),
                           False, 3)


# ------------------------------------------------------------------------- lobpcg
def _spd(m, seed):
    q = np.random.default_rng(seed).standard_normal((m, m))
    return q @ q.T + m * np.eye(m)


@pytest.mark.parametrize("largest", [True, False])
def test_lobpcg_equals_torch_on_spd(device, largest):
    dtype = np.float64 if device == "cpu" or ot.device(device).supports_dtype(ot.float64) \
        else np.float32
    a = _spd(30, 1).astype(dtype)
    E, X = face.lobpcg(ot.tensor(a, device=device), k=3, largest=largest)
    Et, _ = torch.lobpcg(torch.tensor(a), k=3, largest=largest)
    assert E.device == ot.device(device) and tuple(X.shape) == (30, 3)
    rtol = 1e-6 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(E.cpu().numpy(), Et.numpy(), rtol=rtol)
    ref = np.linalg.eigvalsh(a)
    np.testing.assert_allclose(E.cpu().numpy(), ref[::-1][:3] if largest else ref[:3],
                               rtol=rtol)
    x = X.cpu().numpy()
    np.testing.assert_allclose(x.T @ x, np.eye(3), atol=1e-4)
    np.testing.assert_allclose(a @ x, x * E.cpu().numpy(), atol=1e-3 * np.abs(a).max())


def test_lobpcg_generalized_preconditioned_and_batched():
    a = _spd(24, 2)
    b = np.diag(np.random.default_rng(4).uniform(1, 2, 24))
    x0 = np.random.default_rng(5).standard_normal((24, 2))
    E, X = face.lobpcg(ot.tensor(a), B=ot.tensor(b), X=ot.tensor(x0),
                       iK=ot.tensor(np.linalg.inv(a)))
    Et, _ = torch.lobpcg(torch.tensor(a), B=torch.tensor(b), X=torch.tensor(x0),
                         iK=torch.tensor(np.linalg.inv(a)))
    np.testing.assert_allclose(E.numpy(), Et.numpy(), rtol=1e-6)
    x = X.numpy()
    np.testing.assert_allclose(x.T @ b @ x, np.eye(2), atol=1e-6)
    batch = np.stack([_spd(18, 6), _spd(18, 7)])
    Eb, Xb = face.lobpcg(ot.tensor(batch), k=2)
    Etb, _ = torch.lobpcg(torch.tensor(batch), k=2)
    assert tuple(Xb.shape) == (2, 18, 2)
    np.testing.assert_allclose(Eb.numpy(), Etb.numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="LPBPCG algorithm is not applicable"):
        face.lobpcg(ot.tensor(_spd(5, 0)), k=2)


# ------------------------------------------------------- sparse-dense matrix products
SP = np.array([[0, 1.5, 0], [0, 0, 0], [2, 0, -3], [0, 0.5, 0]], np.float32)
DN = np.random.default_rng(8).standard_normal((3, 2)).astype(np.float32)


def _sparse_pair(device):
    return (ot.tensor(SP, device=device).to_sparse(), ot.tensor(DN, device=device),
            torch.tensor(SP).to_sparse(), torch.tensor(DN))


def _dense(x):
    return (x.to_dense() if getattr(x, "is_sparse", False) else x).detach().cpu().numpy()


@pytest.mark.parametrize("name", ["smm", "dsmm", "hspmm", "hsmm"])
def test_sparse_dense_products_equal_torch(device, name):
    s, d, ts, td = _sparse_pair(device)
    ours, theirs = getattr(face, name)(s, d), getattr(torch, name)(ts, td)
    assert bool(getattr(ours, "is_sparse", False)) is theirs.is_sparse
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(_dense(ours), theirs.to_dense().numpy(), rtol=1e-5, atol=1e-6)
    if name in ("hspmm", "hsmm"):  # hybrid: the rows holding entries, dense rows as values
        assert (ours.sparse_dim(), ours.dense_dim()) == (theirs.sparse_dim(),
                                                         theirs.dense_dim())
        np.testing.assert_array_equal(ours.coalesce().indices().cpu().numpy(),
                                      theirs.coalesce().indices().numpy())
    if name != "dsmm":
        with pytest.raises(RuntimeError):
            getattr(face, name)(ot.tensor(SP, device=device), d)


@pytest.mark.parametrize("name", ["sspaddmm", "saddmm"])
def test_sspaddmm_equals_torch(device, name):
    s, _d, ts, _td = _sparse_pair(device)
    base = np.random.default_rng(9).standard_normal((4, 4)).astype(np.float32)
    base[base < 0.3] = 0
    m2 = np.random.default_rng(10).standard_normal((3, 4)).astype(np.float32)
    ours = getattr(face, name)(ot.tensor(base, device=device).to_sparse(), s,
                               ot.tensor(m2, device=device), beta=2, alpha=-0.5)
    theirs = getattr(torch, name)(torch.tensor(base).to_sparse(), ts, torch.tensor(m2),
                                  beta=2, alpha=-0.5)
    assert ours.is_sparse and theirs.is_sparse
    np.testing.assert_allclose(_dense(ours), theirs.to_dense().numpy(), rtol=1e-5, atol=1e-6)


# ---------------------------------------------- sparse components, freshly allocated
COMPRESSED = {"crow_indices_copy": "to_sparse_csr", "col_indices_copy": "to_sparse_csr",
              "ccol_indices_copy": "to_sparse_csc", "row_indices_copy": "to_sparse_csc",
              "values_copy": "to_sparse_csr"}


@pytest.mark.parametrize("name", sorted(COMPRESSED))
def test_compressed_component_copies_equal_torch(device, name):
    to = COMPRESSED[name]
    src = getattr(ot.tensor(SP, device=device), to)()
    ours, theirs = getattr(face, name)(src), getattr(torch, name)(getattr(torch.tensor(SP), to)())
    assert ours.device == ot.device(device) and ours.dtype.name == str(theirs.dtype)[6:]
    np.testing.assert_array_equal(ours.cpu().numpy(), theirs.numpy())
    view = getattr(src, name[:-5])()
    ours.fill_(0)  # a new tensor: the sparse tensor's component is untouched
    np.testing.assert_array_equal(view.cpu().numpy(), theirs.numpy())
    out = ot.empty(tuple(theirs.shape), dtype=ours.dtype, device=device)
    assert getattr(face, name)(src, out=out) is out
    np.testing.assert_array_equal(out.cpu().numpy(), theirs.numpy())
    with pytest.raises(RuntimeError):
        getattr(face, name)(ot.tensor(SP, device=device))


def test_coo_component_copies(device):
    # torch 2.13's indices_copy/values_copy have no SparseCPU kernel (NotImplementedError);
    # omnitensor answers them as the documented "indices()/values(), freshly created"
    s, ts = ot.tensor(SP, device=device).to_sparse(), torch.tensor(SP).to_sparse()
    with pytest.raises(NotImplementedError):
        torch.indices_copy(ts)
    np.testing.assert_array_equal(face.indices_copy(s).cpu().numpy(), ts.indices().numpy())
    np.testing.assert_allclose(face.values_copy(s).cpu().numpy(), ts.values().numpy())


# ------------------------------------------------- torch.compile's 2.13 parameters
def test_compile_recompile_limit_and_name(device):
    def f(x):
        return (x * 2).sum(0)

    c = face.compile(f, recompile_limit=1, name="region", isolate_recompiles=True,
                     shapes_spec=None)
    assert c.name == "region" and c.recompile_limit == 1
    outs = []
    with pytest.warns(UserWarning, match=r"recompile_limit \(1\)"):
        for n in (3, 4, 5):  # new shapes: the second and third run eagerly
            a = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
            outs.append((c(ot.tensor(a, device=device)), f(torch.tensor(a))))
    assert c.traces == 1
    for o, t in outs:
        np.testing.assert_allclose(o.cpu().numpy(), t.numpy())
    unlimited = face.compile(f)
    assert unlimited.recompile_limit is None and unlimited.name is None
    deco = face.compile(recompile_limit=2)(f)
    assert deco.recompile_limit == 2
    mod = face.compile(ot.nn.Linear(2, 2).to(device), recompile_limit=0)
    with pytest.warns(UserWarning, match="recompile_limit"):
        assert tuple(mod(ot.ones((1, 2), device=device)).shape) == (1, 2)
    assert mod._compiled.traces == 0
    with pytest.raises(ValueError, match="recompile_limit"):
        face.compile(f, recompile_limit=-1)


# ------------------------------------------------------------- sparse native_norm
@pytest.mark.parametrize("p", [2, 1, 3, 0, float("inf")])
def test_native_norm_equals_torch(device, p):
    s, ts = ot.tensor(SP, device=device).to_sparse(), torch.tensor(SP).to_sparse()
    ours, theirs = face.native_norm(s, p), torch.native_norm(ts, p)
    assert ours.ndim == 0 and ours.device == ot.device(device)
    np.testing.assert_allclose(ours.cpu().numpy(), theirs.numpy(), rtol=1e-6)
    np.testing.assert_allclose(face.native_norm(s, p, [0, 1], False, None).cpu().numpy(),
                               torch.native_norm(ts, p, [0, 1], False, None).numpy(),
                               rtol=1e-6)


def test_native_norm_refuses_as_torch():
    s, ts = ot.tensor(SP).to_sparse(), torch.tensor(SP).to_sparse()
    for args in ((2, [0], False, None), (2, [0, 1], True, None),
                 (2, [0, 1], False, torch.float64)):
        with pytest.raises(RuntimeError) as theirs:
            torch.native_norm(ts, *args)
        ours_args = args[:3] + ((ot.float64,) if args[3] is not None else (None,))
        with pytest.raises(RuntimeError) as ours:
            face.native_norm(s, *ours_args)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError):
        face.native_norm(ot.tensor(SP))
