"""The trusted dispatch path (``core/trusted.py``): each trusted op equals the checked
Tensor method of the same name on the domain its caller establishes, delegates to it
whenever autograd records, and keeps in-place version counting; composites written once
against either namespace (linear, cross_entropy, SGD, Adam) agree on both paths."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot
from omnitensor import nn
from omnitensor.core.tensor import Tensor
from omnitensor.core.trusted import inplace_ops_for, ops, ops_for

F = nn.functional


def _t(a, device, **kw):
    return ot.tensor(np.asarray(a), device=device, **kw)


def _same(got, want, exact=True):
    assert type(got) is type(want) or isinstance(got, Tensor)
    assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
    g, w = got.cpu().numpy(), want.cpu().numpy()
    if exact:
        np.testing.assert_array_equal(g, w)
    else:
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((4, 5)).astype(np.float32),
            rng.standard_normal((4, 5)).astype(np.float32),
            rng.standard_normal(5).astype(np.float32),
            (np.abs(rng.standard_normal((4, 5))) + 0.5).astype(np.float32))


def test_ops_for_establishes_one_device_and_float_dtype(device):
    a = ot.ones(3, device=device)
    assert ops_for(a, None, ot.zeros(3, device=device)) is ops
    assert ops_for(a, a.double()) is Tensor                    # two dtypes: checked path
    assert ops_for(ot.ones(3, dtype=ot.int64, device=device)) is Tensor
    assert ops_for(None) is Tensor
    if device != "cpu":
        assert ops_for(a, ot.ones(3)) is Tensor                # two devices
        assert inplace_ops_for(a, ot.ones(3)) is Tensor
    # in-place updates also need one shape: nothing may broadcast into the target
    assert inplace_ops_for(a, ot.zeros(3, device=device), None) is ops
    assert inplace_ops_for(a, ot.zeros(1, device=device)) is Tensor
    assert inplace_ops_for(a, a.double()) is Tensor


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "eq", "ne"])
def test_binary_ops_match_checked(device, name):
    x, y, row, _ = _data()
    a, b, r = _t(x, device), _t(y, device), _t(row, device)
    for other in (b, r, 0.5, 2):                               # same shape, broadcast, scalars
        _same(getattr(ops, name)(a, other), getattr(Tensor, name)(a, other))


@pytest.mark.parametrize("name", ["neg", "exp", "log", "sqrt"])
def test_unary_ops_match_checked(device, name):
    *_, pos = _data()
    a = _t(pos, device)
    _same(getattr(ops, name)(a), getattr(Tensor, name)(a), exact=False)


def test_reductions_views_and_conversions_match_checked(device):
    x, y, row, _ = _data()
    a, b = _t(x, device), _t(y, device)
    for dim, keep in ((None, False), (0, False), (1, True), (-1, False), ((0, 1), True)):
        _same(ops.sum(a, dim, keep), Tensor.sum(a, dim, keep), exact=False)
        _same(ops.amax(a, dim, keep), Tensor.amax(a, dim, keep))
    _same(ops.matmul(a, ops.t(b)), Tensor.matmul(a, Tensor.t(b)), exact=False)
    a3 = _t(np.stack([x, y]), device)                          # (2, 4, 5) @ (5, 4)
    _same(ops.matmul(a3, ops.t(b)), Tensor.matmul(a3, Tensor.t(b)), exact=False)
    _same(ops.matmul(_t(row, device), ops.t(b)), Tensor.matmul(_t(row, device), b.t()),
          exact=False)
    _same(ops.reshape(a, (5, 4)), a.reshape(5, 4))
    _same(ops.unsqueeze(a, 1), a.unsqueeze(1))
    _same(ops.unsqueeze(a, -1), a.unsqueeze(-1))
    _same(ops.to(a > 0, ot.float32), (a > 0).to(ot.float32))
    assert ops.to(a, ot.float32) is a
    c = ops.clone(a)
    _same(c, a)
    assert c._data is not a._data


def test_views_share_the_version_counter(device):
    a = ot.zeros(2, 3, device=device)
    v = ops.t(a)
    assert v._base is a
    ops.add_(a, 1.0)
    assert v._version == a._version == 1
    np.testing.assert_array_equal(v.cpu().numpy(), np.ones((3, 2), np.float32))



def test_layout_ops_match_checked(device):
    # the window gathers of convolutions and pools: normal-form slice keys, narrow,
    # permute, cat, stack, full and batched matmul, on the fast bodies (no grad mode)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    a = _t(x, device)
    key = (slice(0, 2, 1), slice(1, 3, 1), None, slice(0, 5, 2), slice(1, 6, 3))
    with ot.no_grad():
        v = ops.index(a, key)
        _same(v, a[:, 1:3, None, 0:5:2, 1:6:3])
        assert v._base is a
        _same(ops.index(a, (1, slice(0, 3, 1), 4, slice(5, None, -2))), a[1, :, 4, ::-2])
        _same(ops.narrow(a, 2, 1, 3), a.narrow(2, 1, 3))
        _same(ops.narrow(a, -1, 0, 6), a.narrow(-1, 0, 6))
        p = ops.permute(a, (0, 2, 3, 1))
        _same(p, a.permute(0, 2, 3, 1))
        assert p._base is a
        parts = [ops.index(a, (slice(0, 2, 1), slice(0, 3, 1), None, slice(i, i + 2, 1),
                               slice(0, 6, 1))) for i in range(3)]
        _same(ops.cat(parts, 2), ot.cat(parts, 2))
        rows = [a[:, :, i] for i in range(5)]
        for dim in (0, 2, 3):
            _same(ops.stack(rows, dim), ot.stack(rows, dim))
        _same(ops.full((2, 3), -np.inf, dtype=a.dtype, device=a.device),
              ot.full((2, 3), -np.inf, device=device))
        _same(ops.full((4,), 7, dtype=ot.int64, device=a.device),
              ot.full((4,), 7, dtype=ot.int64, device=device))
        w = _t(rng.standard_normal((1, 4, 5)).astype(np.float32), device)  # batch broadcast
        _same(ops.matmul(w, a), Tensor.matmul(w, a), exact=False)
        # a write through a trusted view reaches the base and bumps the shared counter
        v0 = a._version
        ops.copy_(ops.narrow(a, 0, 1, 1), ot.zeros(1, 3, 5, 6, device=device))
        assert a._version == v0 + 1 and v._version == a._version
        assert float(a[1].abs().sum()) == 0.0


def test_layout_ops_record_in_grad_mode(device):
    a = _t(np.arange(24, dtype=np.float32).reshape(2, 3, 4), device, requires_grad=True)
    v = ops.index(a, (slice(0, 2, 1), slice(0, 3, 2), slice(0, 4, 1)))
    y = ops.cat([v, ops.permute(ops.narrow(a, 1, 0, 2), (0, 1, 2))], 1)
    y = ops.stack([y, y], 0)
    assert y.grad_fn is not None
    y.sum().backward()
    g = np.zeros((2, 3, 4), np.float32)
    g[:, 0:3:2] += 2.0                                         # the strided slice, twice
    g[:, 0:2, :] += 2.0                                        # the narrow, twice
    np.testing.assert_array_equal(a.grad.cpu().numpy(), g)

def test_inplace_ops_match_checked_and_bump_versions(device):
    x, y, row, pos = _data()
    for name, args, kw in (("add_", (y,), {}), ("add_", (y,), {"alpha": -0.25}),
                           ("add_", (row,), {}), ("sub_", (0.5,), {}), ("mul_", (y,), {}),
                           ("div_", (pos,), {}), ("addcmul_", (y, pos), {"value": 0.5}),
                           ("addcdiv_", (y, pos), {"value": -2.0}), ("copy_", (y,), {})):
        a, want = _t(x, device), _t(x, device)
        targs = [_t(v, device) if isinstance(v, np.ndarray) else v for v in args]
        v0 = a._version
        out = getattr(ops, name)(a, *targs, **kw)
        assert out is a and a._version == v0 + 1
        getattr(Tensor, name)(want, *targs, **kw)
        _same(a, want, exact=False)


def test_inplace_change_of_a_saved_tensor_is_detected(device):
    w = ot.ones(3, device=device, requires_grad=True)
    x = ot.ones(3, device=device)
    y = (w * x).sum()
    with ot.no_grad():
        ops.mul_(x, 2.0)                                       # x was saved by the multiply
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_recording_delegates_to_the_checked_op(device):
    x, y, *_ = _data()
    a = _t(x, device, requires_grad=True)
    b = _t(y, device)
    out = ops.mul(ops.exp(a), b)
    assert out.grad_fn is not None and out.grad_fn.name() == "MulBackward0"
    out.sum().backward()
    np.testing.assert_allclose(a.grad.cpu().numpy(), np.exp(x) * y, rtol=1e-5)
    # without grad mode nothing is recorded
    with ot.no_grad():
        assert ops.mul(a, b).grad_fn is None


# ------------------------------------------------------------ composites on both paths
def _linear_case(device, dtype_b):
    rng = np.random.default_rng(1)
    x = _t(rng.standard_normal((2, 3, 4)).astype(np.float32), device, requires_grad=True)
    w = _t(rng.standard_normal((5, 4)).astype(np.float32), device, requires_grad=True)
    b = _t(rng.standard_normal(5), device, dtype=dtype_b, requires_grad=True)
    out = F.linear(x, w, b)
    out.sum().backward()
    return out, x.grad, w.grad, b.grad


def test_linear_trusted_and_checked_paths_agree(device):
    """float32 bias: trusted path; float64 bias: checked path (promotes, as torch)."""
    fast = _linear_case(device, ot.float32)
    slow = _linear_case(device, ot.float64)
    assert fast[0].dtype == ot.float32 and slow[0].dtype == ot.float64
    for f, s in zip(fast, slow):
        np.testing.assert_allclose(f.detach().cpu().numpy(), s.detach().cpu().numpy(), rtol=1e-5,
                                   atol=1e-5)


@pytest.mark.parametrize("kw", [{}, {"label_smoothing": 0.1}, {"ignore_index": 2},
                                {"reduction": "sum"}, {"reduction": "none"}])
def test_cross_entropy_trusted_and_checked_paths_agree(device, kw):
    """int64 targets on the logits' device: trusted; int32 targets: checked."""
    rng = np.random.default_rng(2)
    x_np = rng.standard_normal((6, 4)).astype(np.float32)
    t_np = np.array([0, 2, 3, 1, 2, 0])
    res = []
    for tdtype in (ot.int64, ot.int32):
        x = _t(x_np, device, requires_grad=True)
        loss = F.cross_entropy(x, _t(t_np, device, dtype=tdtype), **kw)
        loss.sum().backward()
        res.append((loss.detach().cpu().numpy(), x.grad.cpu().numpy()))
    for f, s in zip(*res):
        np.testing.assert_allclose(f, s, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cls,kw", [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "maximize": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "dampening": 0.3}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.01, "amsgrad": True}),
    ("AdamW", {"lr": 0.01, "maximize": True}),
])
def test_optimizer_foreach_paths_agree(device, cls, kw):
    """``foreach`` (default) runs the update on the trusted ops, ``foreach=False`` on the
    checked ones: one formula, the same numbers."""
    rng = np.random.default_rng(3)
    p0 = rng.standard_normal((3, 4)).astype(np.float32)
    grads = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(3)]
    finals = []
    for foreach in (None, False):
        p = _t(p0, device, requires_grad=True)
        opt = getattr(ot.optim, cls)([p], foreach=foreach, **kw)
        for g in grads:
            p.grad = _t(g, device)
            opt.step()
        finals.append(p.detach().cpu().numpy())
    np.testing.assert_allclose(finals[0], finals[1], rtol=1e-6, atol=1e-6)
