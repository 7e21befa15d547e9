"""Quantized tensors (core/quantized), compared with torch's on every device."""
import numpy as np
import pytest
import torch

import omnitensor as ot

pytestmark = pytest.mark.filterwarnings("ignore:.*quantized tensor creation functions")

QDTYPES = [(ot.quint8, torch.quint8), (ot.qint8, torch.qint8), (ot.qint32, torch.qint32)]


def _data(shape=(6, 4, 3), seed=0):
    x = np.random.RandomState(seed).randn(*shape).astype(np.float32) * 3
    x.flat[:4] = [0.5, 1.5, -2.5, 1000.0]  # ties (half to even) and a clamped value
    return x


def _host(t):
    return t.cpu().numpy()


@pytest.mark.parametrize("qd", QDTYPES, ids=lambda p: p[0].name if isinstance(p, tuple) else "")
def test_per_tensor_matches_torch(device, qd):
    x = _data()
    q = ot.quantize_per_tensor(ot.tensor(x, device=device), 0.05, 3, qd[0])
    tq = torch.quantize_per_tensor(torch.tensor(x), 0.05, 3, qd[1])
    assert q.is_quantized and q.dtype is qd[0] and q.device == ot.device(device)
    assert q.shape == tuple(tq.shape) and q.qscheme() is ot.per_tensor_affine
    assert q.q_scale() == tq.q_scale() and q.q_zero_point() == tq.q_zero_point()
    rep = q.int_repr()
    assert str(rep.dtype).split(".")[1] == str(tq.int_repr().dtype).split(".")[1]
    np.testing.assert_array_equal(_host(rep), tq.int_repr().numpy())
    np.testing.assert_array_equal(_host(q.dequantize()), tq.dequantize().numpy())
    np.testing.assert_array_equal(_host(ot.dequantize(q)), torch.dequantize(tq).numpy())
    assert "quantization_scheme=omnitensor.per_tensor_affine, scale=0.05" in repr(q)


@pytest.mark.parametrize("axis", [0, 2])
def test_per_channel_matches_torch(device, axis):
    x = _data()
    n = x.shape[axis]
    scales = np.linspace(0.01, 0.3, n)
    zps = np.arange(n) + 1
    for od, td in QDTYPES[:2]:
        q = ot.quantize_per_channel(ot.tensor(x, device=device), ot.tensor(scales),
                                    ot.tensor(zps), axis, od)
        tq = torch.quantize_per_channel(torch.tensor(x), torch.tensor(scales),
                                        torch.tensor(zps), axis, td)
        np.testing.assert_array_equal(_host(q.int_repr()), tq.int_repr().numpy())
        np.testing.assert_array_equal(_host(q.dequantize()), tq.dequantize().numpy())
        np.testing.assert_array_equal(_host(q.q_per_channel_scales()),
                                      tq.q_per_channel_scales().numpy())
        np.testing.assert_array_equal(_host(q.q_per_channel_zero_points()),
                                      tq.q_per_channel_zero_points().numpy())
        assert q.q_per_channel_axis() == tq.q_per_channel_axis() == axis
        assert q.qscheme() is ot.per_channel_affine


def test_tensor_qparams_lists_and_moves(device):
    x = _data((5, 2))
    q = ot.quantize_per_tensor(ot.tensor(x, device=device), ot.tensor(0.1), ot.tensor(4),
                               ot.qint8)
    tq = torch.quantize_per_tensor(torch.tensor(x), torch.tensor(0.1), torch.tensor(4),
                                   torch.qint8)
    assert q.q_scale() == tq.q_scale() and q.q_zero_point() == 4
    qs = ot.quantize_per_tensor([ot.tensor(x, device=device)] * 2, ot.tensor([0.1, 0.2]),
                                ot.tensor([1, 2]), ot.quint8)
    tqs = torch.quantize_per_tensor([torch.tensor(x)] * 2, torch.tensor([0.1, 0.2]),
                                    torch.tensor([1, 2]), torch.quint8)
    for a, b in zip(ot.dequantize(qs), torch.dequantize(tqs)):
        np.testing.assert_array_equal(_host(a), b.numpy())
    moved = q.cpu()
    assert moved.is_quantized and moved.device == ot.device("cpu")
    np.testing.assert_array_equal(_host(moved.int_repr()), tq.int_repr().numpy())
    np.testing.assert_array_equal(_host(q.clone().dequantize()), tq.dequantize().numpy())
    e = ot.empty_quantized([3, 2], q)
    te = torch._empty_affine_quantized([3, 2], scale=tq.q_scale(), zero_point=4,
                                       dtype=torch.qint8)
    assert e.shape == tuple(te.shape) and e.dtype is ot.qint8 and e.q_scale() == te.q_scale()


@pytest.mark.parametrize("reduce_range", [False, True])
def test_dynamic_matches_torch(device, reduce_range):
    for x in (_data((7, 5), seed=1), np.abs(_data((4,), seed=2)) + 1.0):
        for od, td in QDTYPES[:2]:
            q = ot.quantize_per_tensor_dynamic(ot.tensor(x, device=device), od, reduce_range)
            tq = torch.quantize_per_tensor_dynamic(torch.tensor(x), td, reduce_range)
            assert q.q_scale() == tq.q_scale() and q.q_zero_point() == tq.q_zero_point()
            np.testing.assert_array_equal(_host(q.int_repr()), tq.int_repr().numpy())


def _grads(f_ot, f_t, x, device):
    a = ot.tensor(x, device=device, requires_grad=True)
    b = torch.tensor(x, requires_grad=True)
    ya, yb = f_ot(a), f_t(b)
    np.testing.assert_array_equal(_host(ya.detach()), yb.detach().numpy())
    w = np.random.RandomState(3).randn(*x.shape).astype(np.float32)
    (ya * ot.tensor(w, device=device)).sum().backward()
    (yb * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(_host(a.grad), b.grad.numpy())


def test_fake_quantize_values_and_grad(device):
    x = _data((6, 4), seed=4)
    _grads(lambda a: ot.fake_quantize_per_tensor_affine(a, 0.04, 5, 0, 127),
           lambda b: torch.fake_quantize_per_tensor_affine(b, 0.04, 5, 0, 127), x, device)
    s, z = np.array([0.02, 0.05, 0.1, 0.01], np.float32), np.array([0, 3, -2, 1], np.int32)
    _grads(lambda a: ot.fake_quantize_per_channel_affine(
               a, ot.tensor(s, device=device), ot.tensor(z, device=device), 1, -20, 20),
           lambda b: torch.fake_quantize_per_channel_affine(
               b, torch.tensor(s), torch.tensor(z), 1, -20, 20), x, device)
    zf = z.astype(np.float32) + 0.25  # float zero points (torch's float qparams)
    _grads(lambda a: ot.fake_quantize_per_channel_affine(
               a, ot.tensor(s, device=device), ot.tensor(zf, device=device), 1, 0, 40),
           lambda b: torch.fake_quantize_per_channel_affine(
               b, torch.tensor(s), torch.tensor(zf), 1, 0, 40), x, device)


def _raises_like(f_ot, f_t):
    with pytest.raises(Exception) as theirs:
        f_t()
    with pytest.raises(type(theirs.value)) as ours:
        f_ot()
    return str(ours.value)


def test_bad_inputs(device):
    x = ot.tensor(_data((4, 3)), device=device)
    t = torch.tensor(_data((4, 3)))
    msg = _raises_like(lambda: ot.quantize_per_tensor(ot.arange(3, device=device), 0.1, 1,
                                                      ot.quint8),
                       lambda: torch.quantize_per_tensor(torch.arange(3), 0.1, 1, torch.quint8))
    assert "Float Tensor, got Long" in msg
    assert "above upper bound" in _raises_like(
        lambda: ot.quantize_per_tensor(x, 0.1, 300, ot.quint8),
        lambda: torch.quantize_per_tensor(t, 0.1, 300, torch.quint8))
    assert "Channel axis out of range" in _raises_like(
        lambda: ot.quantize_per_channel(x, ot.ones(3), ot.zeros(3, dtype=ot.int64), 2, ot.qint8),
        lambda: torch.quantize_per_channel(t, torch.ones(3), torch.zeros(3, dtype=torch.long),
                                           2, torch.qint8))
    assert "length of scales" in _raises_like(
        lambda: ot.quantize_per_channel(x, ot.ones(2), ot.zeros(2, dtype=ot.int64), 1, ot.qint8),
        lambda: torch.quantize_per_channel(t, torch.ones(2), torch.zeros(2, dtype=torch.long),
                                           1, torch.qint8))
    assert "below lower bound" in _raises_like(
        lambda: ot.quantize_per_channel(x, ot.ones(3), -ot.ones(3, dtype=ot.int64), 1, ot.quint8),
        lambda: torch.quantize_per_channel(t, torch.ones(3), -torch.ones(3, dtype=torch.long),
                                           1, torch.quint8))
    _raises_like(lambda: ot.quantize_per_tensor(x, 0.1, 1, ot.float32),
                 lambda: torch.quantize_per_tensor(t, 0.1, 1, torch.float32))
    _raises_like(lambda: x.int_repr(), lambda: t.int_repr())
    _raises_like(lambda: x.q_scale(), lambda: t.q_scale())
    q = ot.quantize_per_tensor(x, 0.1, 1, ot.quint8)
    tq = torch.quantize_per_tensor(t, 0.1, 1, torch.quint8)
    _raises_like(lambda: q.q_per_channel_scales(), lambda: tq.q_per_channel_scales())
    for op in (lambda: q + 1, lambda: q.exp(), lambda: q.sum(), lambda: q * q):
        with pytest.raises((RuntimeError, TypeError), match="dequantize"):
            op()
    with pytest.raises(RuntimeError, match="floating point"):
        q.requires_grad_()
    assert x.dequantize() is x and not x.is_quantized
    _raises_like(lambda: ot.fake_quantize_per_tensor_affine(x, 0.1, 1, 10, 5),
                 lambda: torch.fake_quantize_per_tensor_affine(t, 0.1, 1, 10, 5))
    _raises_like(lambda: ot.fake_quantize_per_tensor_affine(x, 0.1, 300, 0, 255),
                 lambda: torch.fake_quantize_per_tensor_affine(t, 0.1, 300, 0, 255))
    assert "Zero-point must be Int32" in _raises_like(
        lambda: ot.fake_quantize_per_channel_affine(x, ot.ones(3), ot.zeros(3, dtype=ot.int64),
                                                    1, 0, 255),
        lambda: torch.fake_quantize_per_channel_affine(
            t, torch.ones(3), torch.zeros(3, dtype=torch.long), 1, 0, 255))
    for axis in (-1, 2):
        _raises_like(lambda ax=axis: ot.fake_quantize_per_channel_affine(
                         x, ot.ones(3), ot.zeros(3, dtype=ot.int32), ax, 0, 255),
                     lambda ax=axis: torch.fake_quantize_per_channel_affine(
                         t, torch.ones(3), torch.zeros(3, dtype=torch.int32), ax, 0, 255))
    with pytest.raises(Exception, match="quantized"):
        ot.zeros(3, dtype=ot.qint8)


def test_torch_checkpoint_with_quantized_tensors(device, tmp_path):
    x = torch.tensor(_data((3, 4)))
    q = torch.quantize_per_tensor(x, 0.1, 3, torch.quint8)
    p = torch.quantize_per_channel(x, torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float64),
                                   torch.tensor([1, 2, 3, 4]), 1, torch.qint8)
    state = {"linear.weight": p, "linear.bias": torch.randn(3), "act": q, "act_rows": q[1:]}
    path = tmp_path / "q.pt"
    torch.save(state, path)
    for weights_only in (True, False):
        got = ot.load(path, map_location=device, weights_only=weights_only)
        for k in ("linear.weight", "act", "act_rows"):
            assert got[k].is_quantized and got[k].device == ot.device(device)
            np.testing.assert_array_equal(_host(got[k].dequantize()),
                                          state[k].dequantize().numpy())
            np.testing.assert_array_equal(_host(got[k].int_repr()),
                                          state[k].int_repr().numpy())
        assert got["act"].q_scale() == 0.1 and got["act"].q_zero_point() == 3
        assert got["linear.weight"].q_per_channel_axis() == 1
        np.testing.assert_array_equal(_host(got["linear.bias"]), state["linear.bias"].numpy())


def test_quantized_pools_and_batch_norm(device):
    x = np.random.RandomState(5).randn(2, 3, 6, 5).astype(np.float32)
    q = ot.quantize_per_tensor(ot.tensor(x, device=device), 0.05, 128, ot.quint8)
    tq = torch.quantize_per_tensor(torch.tensor(x), 0.05, 128, torch.quint8)

    def same(a, b):
        assert a.is_quantized and a.dtype.name == str(b.dtype).split(".")[1]
        assert a.q_scale() == b.q_scale() and a.q_zero_point() == b.q_zero_point()
        np.testing.assert_array_equal(_host(a.int_repr()), b.int_repr().numpy())

    same(ot.quantized_max_pool2d(q, [2, 2], [], [0, 0], [1, 1], False),
         torch.quantized_max_pool2d(tq, [2, 2], [], [0, 0], [1, 1], False))
    same(ot.quantized_max_pool2d(q, [3, 2], [2, 1], [1, 1], [1, 1], True),
         torch.quantized_max_pool2d(tq, [3, 2], [2, 1], [1, 1], [1, 1], True))
    q1 = ot.quantize_per_tensor(ot.tensor(x[0].reshape(3, 30), device=device), 0.05, 0,
                                ot.qint8)
    tq1 = torch.quantize_per_tensor(torch.tensor(x[0].reshape(3, 30)), 0.05, 0, torch.qint8)
    same(ot.quantized_max_pool1d(q1, [3], [2]), torch.quantized_max_pool1d(tq1, [3], [2]))
    x3 = x.reshape(1, 2, 3, 5, 6)
    q3 = ot.quantize_per_tensor(ot.tensor(x3, device=device), 0.05, 128, ot.quint8)
    tq3 = torch.quantize_per_tensor(torch.tensor(x3), 0.05, 128, torch.quint8)
    same(ot.quantized_max_pool3d(q3, [2, 2, 2], [1, 2, 1], [1, 1, 0]),
         torch.quantized_max_pool3d(tq3, [2, 2, 2], [1, 2, 1], [1, 1, 0]))
    w, b, m, v = [np.random.RandomState(i).rand(3).astype(np.float32) + 0.5 for i in range(4)]
    same(ot.quantized_batch_norm(q, *map(ot.tensor, (w, b, m, v)), 1e-5, 0.07, 100),
         torch.quantized_batch_norm(tq, *map(torch.tensor, (w, b, m, v)), 1e-5, 0.07, 100))
    _raises_like(lambda: ot.quantized_batch_norm(q, None, ot.tensor(b), ot.tensor(m),
                                                 ot.tensor(v), 1e-5, 0.07, 100),
                 lambda: torch.quantized_batch_norm(tq, None, torch.tensor(b), torch.tensor(m),
                                                    torch.tensor(v), 1e-5, 0.07, 100))
    with pytest.raises(RuntimeError, match="quantized"):
        ot.quantized_max_pool2d(ot.tensor(x, device=device), [2, 2])


@pytest.mark.parametrize("per_row,symmetric", [(False, False), (False, True), (True, False),
                                               (True, True)])
def test_fused_moving_avg_obs_fake_quant(device, per_row, symmetric):
    rs = np.random.RandomState(6)
    n = 3 if per_row else 1
    theirs = [torch.full((n,), float("inf")), torch.full((n,), float("-inf")), torch.ones(n),
              torch.zeros(n, dtype=torch.int32)]
    ours = [ot.tensor(t.numpy(), device=device) for t in theirs]
    for step in range(3):  # observer only, then observe and fake-quantize twice
        x = (rs.randn(3, 4, 5) * (step + 1)).astype(np.float32)
        a, b = ot.tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True)
        on = [1, int(step > 0)]
        ya = ot.fused_moving_avg_obs_fake_quant(a, ot.tensor([on[0]]), ot.tensor([on[1]]),
                                                *ours, 0.01, 0, 255, 0, per_row, symmetric)
        yb = torch.fused_moving_avg_obs_fake_quant(b, torch.tensor([on[0]]),
                                                   torch.tensor([on[1]]), *theirs, 0.01, 0,
                                                   255, 0, per_row, symmetric)
        (ya * ya).sum().backward()
        (yb * yb).sum().backward()
        for u, v in zip([ya, a.grad] + ours, [yb, b.grad] + theirs):
            np.testing.assert_array_equal(_host(u.detach()), v.detach().numpy())
    _raises_like(lambda: ot.fused_moving_avg_obs_fake_quant(
                     a, ot.tensor([1]), ot.tensor([1]), *ours, 0.01, 0, 255, 1, True, False),
                 lambda: torch.fused_moving_avg_obs_fake_quant(
                     b, torch.tensor([1]), torch.tensor([1]), *theirs, 0.01, 0, 255, 1, True,
                     False))


def test_choose_qparams_optimized(device):
    for seed, (numel, bins, ratio, bits) in enumerate([(64, 200, 0.16, 8), (50, 100, 0.5, 4)]):
        x = np.random.RandomState(seed).randn(64).astype(np.float32)
        x[:3] = [8, -6, 5]
        got = ot.choose_qparams_optimized(ot.tensor(x, device=device), numel, bins, ratio, bits)
        want = torch.choose_qparams_optimized(torch.tensor(x), numel, bins, ratio, bits)
        assert [g.item() for g in got] == [w.item() for w in want]


def test_save_quantized_tensors_for_torch(device, tmp_path):
    x = _data((3, 4))
    q = ot.quantize_per_tensor(ot.tensor(x, device=device), 0.1, 3, ot.quint8)
    p = ot.quantize_per_channel(ot.tensor(x, device=device), ot.tensor([0.1, 0.2, 0.3, 0.4]),
                                ot.tensor([1, 2, 3, 4]), 1, ot.qint8)
    ot.save({"q": q, "p": p}, tmp_path / "q.pt")
    theirs = torch.load(tmp_path / "q.pt")  # torch's own loader, weights_only
    tq = torch.quantize_per_tensor(torch.tensor(x), 0.1, 3, torch.quint8)
    tp = torch.quantize_per_channel(torch.tensor(x), torch.tensor([0.1, 0.2, 0.3, 0.4],
                                                                  dtype=torch.float64),
                                    torch.tensor([1, 2, 3, 4]), 1, torch.qint8)
    for got, want in ((theirs["q"], tq), (theirs["p"], tp)):
        assert got.dtype == want.dtype and got.qscheme() == want.qscheme()
        assert torch.equal(got.int_repr(), want.int_repr())
        assert torch.equal(got.dequantize(), want.dequantize())
    ours = ot.load(tmp_path / "q.pt", map_location=device)
    np.testing.assert_array_equal(_host(ours["p"].int_repr()), tp.int_repr().numpy())
    assert ours["q"].q_scale() == 0.1 and ours["p"].q_per_channel_axis() == 1


def test_shape_ops_of_per_tensor_quantized(device):
    x = _data((3, 4, 2))
    q = ot.quantize_per_tensor(ot.tensor(x, device=device), 0.1, 3, ot.quint8)
    tq = torch.quantize_per_tensor(torch.tensor(x), 0.1, 3, torch.quint8)
    ops = [lambda a: a[1:], lambda a: a[:, 2], lambda a: a.reshape(4, 6),
           lambda a: a.transpose(0, 2), lambda a: a.permute(2, 0, 1), lambda a: a.flatten(),
           lambda a: a.unsqueeze(1), lambda a: a.narrow(1, 1, 2), lambda a: a.select(0, 1)]
    for f in ops:
        got, want = f(q), f(tq)
        assert got.is_quantized and got.shape == tuple(want.shape)
        assert got.q_scale() == want.q_scale() and got.q_zero_point() == want.q_zero_point()
        np.testing.assert_array_equal(_host(got.int_repr()), want.int_repr().numpy())
    for got, want in zip(q.split(2), tq.split(2)):
        np.testing.assert_array_equal(_host(got.dequantize()), want.dequantize().numpy())
    p = ot.quantize_per_channel(ot.tensor(x, device=device), ot.ones(4), ot.zeros(4), 1,
                                ot.qint8)
    with pytest.raises(RuntimeError, match="per-channel"):
        p.reshape(-1)
