"""SyncBatchNorm's kernels (torch.batch_norm_stats & co.) against torch: batch_norm_update_stats
against torch's CPU kernel; the CUDA-only ones through what SyncBatchNorm does with them
(per-process stats gathered with counts, the backward's reduced sums), checked against torch's
batch_norm forward and autograd gradient on the whole batch, and against their math."""
import numpy as np
import pytest
import torch

import omnitensor as ot
import omnitensor.torch_face as tf

EPS, MOM = 1e-5, 0.1


def _np(t):
    return np.asarray(t.cpu().numpy() if isinstance(t, ot.Tensor) else t.detach().numpy())


def _close(a, b, tol=1e-9):
    np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)


def _data(seed=0):
    g = torch.Generator().manual_seed(seed)
    # two "processes" with different batch sizes (3 and 5) of (N, C=4, L=6)
    return [torch.randn(n, 4, 6, generator=g, dtype=torch.float64) for n in (3, 5)]


def test_names_on_the_torch_face():
    for name in ("batch_norm_stats", "batch_norm_gather_stats",
                 "batch_norm_gather_stats_with_counts", "batch_norm_elemt",
                 "batch_norm_backward_reduce", "batch_norm_backward_elemt",
                 "batch_norm_update_stats"):
        import inspect
        assert list(inspect.signature(getattr(tf, name)).parameters) == [
            a.name for a in getattr(torch.ops.aten, name).default._schema.arguments]


def test_update_stats_matches_torch(device):
    x = _data()[1]
    rm, rv = torch.zeros(4, dtype=torch.float64), torch.ones(4, dtype=torch.float64)
    want = torch.batch_norm_update_stats(x, rm, rv, MOM)
    orm = ot.zeros(4, dtype=ot.float64, device=device)
    orv = ot.ones(4, dtype=ot.float64, device=device)
    got = tf.batch_norm_update_stats(ot.tensor(x.numpy(), device=device), orm, orv, MOM)
    for a, b in zip(got, want):
        _close(a, b)
    _close(orm, rm)
    _close(orv, rv)
    got = tf.batch_norm_update_stats(ot.tensor(x.numpy(), device=device), None, None, MOM)
    for a, b in zip(got, torch.batch_norm_update_stats(x, None, None, MOM)):
        _close(a, b)


def test_stats_gather_elemt_is_batch_norm(device):
    parts = _data()
    whole = torch.cat(parts)
    rm, rv = torch.zeros(4, dtype=torch.float64), torch.ones(4, dtype=torch.float64)
    w = torch.linspace(0.5, 2, 4, dtype=torch.float64)
    b = torch.linspace(-1, 1, 4, dtype=torch.float64)
    want = torch.nn.functional.batch_norm(whole, rm, rv, w, b, True, MOM, EPS)

    o = [ot.tensor(p.numpy(), device=device) for p in parts]
    stats = [tf.batch_norm_stats(p, EPS) for p in o]
    for p, (m, s) in zip(parts, stats):  # the documented math, with torch's ops
        _close(m, p.mean((0, 2)))
        _close(s, 1 / torch.sqrt(p.var((0, 2), unbiased=False) + EPS))
    mean = ot.stack([m for m, _ in stats])
    invstd = ot.stack([s for _, s in stats])
    counts = ot.tensor([3 * 6, 5 * 6], dtype=ot.float64, device=device)
    orm = ot.zeros(4, dtype=ot.float64, device=device)
    orv = ot.ones(4, dtype=ot.float64, device=device)
    gm, gi = tf.batch_norm_gather_stats_with_counts(o[0], mean, invstd, orm, orv, MOM, EPS,
                                                    counts)
    _close(gm, whole.mean((0, 2)))
    _close(gi, 1 / torch.sqrt(whole.var((0, 2), unbiased=False) + EPS))
    _close(orm, rm)
    _close(orv, rv)
    ow, ob = ot.tensor(w.numpy(), device=device), ot.tensor(b.numpy(), device=device)
    out = tf.batch_norm_elemt(ot.tensor(whole.numpy(), device=device), ow, ob, gm, gi, EPS)
    _close(out, want)


def test_gather_stats_equal_counts(device):
    g = torch.Generator().manual_seed(1)
    parts = [torch.randn(4, 3, generator=g, dtype=torch.float64) for _ in range(3)]
    o = [ot.tensor(p.numpy(), device=device) for p in parts]
    stats = [tf.batch_norm_stats(p, EPS) for p in o]
    gm, gi = tf.batch_norm_gather_stats(o[0], ot.stack([m for m, _ in stats]),
                                        ot.stack([s for _, s in stats]), None, None, MOM,
                                        EPS, 4)
    whole = torch.cat(parts)
    _close(gm, whole.mean(0))
    _close(gi, 1 / torch.sqrt(whole.var(0, unbiased=False) + EPS))


def test_backward_reduce_and_elemt_are_batch_norms_gradient(device):
    parts = _data(2)
    whole = torch.cat(parts).requires_grad_()
    w = torch.linspace(0.5, 2, 4, dtype=torch.float64).requires_grad_()
    b = torch.linspace(-1, 1, 4, dtype=torch.float64).requires_grad_()
    gy = torch.randn(whole.shape, generator=torch.Generator().manual_seed(3),
                     dtype=torch.float64)
    torch.nn.functional.batch_norm(whole, None, None, w, b, True, MOM, EPS).backward(gy)

    x = whole.detach()
    mean = x.mean((0, 2))
    invstd = 1 / torch.sqrt(x.var((0, 2), unbiased=False) + EPS)
    om, oi = (ot.tensor(t.numpy(), device=device) for t in (mean, invstd))
    ow = ot.tensor(w.detach().numpy(), device=device)
    sums, gws, gbs = [], [], []
    for xs, gs in zip(torch.split(x, [3, 5]), torch.split(gy, [3, 5])):
        ox, og = ot.tensor(xs.numpy(), device=device), ot.tensor(gs.numpy(), device=device)
        sdy, sdx, gw, gb = tf.batch_norm_backward_reduce(og, ox, om, oi, ow, True, True, True)
        _close(sdy, gs.sum((0, 2)))
        _close(sdx, (gs * (xs - mean[None, :, None])).sum((0, 2)))
        sums.append((sdy, sdx))
        gws.append(gw)
        gbs.append(gb)
    _close(gws[0] + gws[1], w.grad)
    _close(gbs[0] + gbs[1], b.grad)
    sum_dy = sums[0][0] + sums[1][0]
    sum_dy_xmu = sums[0][1] + sums[1][1]
    count = ot.tensor([3 * 6, 5 * 6], dtype=ot.int32, device=device)
    gx = tf.batch_norm_backward_elemt(ot.tensor(gy.numpy(), device=device),
                                      ot.tensor(x.numpy(), device=device), om, oi, ow,
                                      sum_dy, sum_dy_xmu, count)
    _close(gx, whole.grad)
    none = tf.batch_norm_backward_reduce(ot.tensor(gy.numpy(), device=device),
                                         ot.tensor(x.numpy(), device=device), om, oi, ow,
                                         False, False, True)
    assert none[0] is None and none[1] is None and none[2] is None
    _close(none[3], b.grad)


def test_float32_stats_of_float16_input(device):
    x = torch.randn(6, 3, generator=torch.Generator().manual_seed(4)).half()
    m, s = tf.batch_norm_stats(ot.tensor(x.numpy(), device=device), EPS)
    assert m.dtype is ot.float32 and s.dtype is ot.float32
    _close(m, x.float().mean(0), 1e-6)
    _close(s, 1 / torch.sqrt(x.float().var(0, unbiased=False) + EPS), 1e-5)


def test_refuses_1d_input(device):
    with pytest.raises(ValueError, match="at least 2 dims"):
        tf.batch_norm_stats(ot.ones(3, device=device), EPS)
