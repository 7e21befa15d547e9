"""torch's remaining top-level functions (``core/ops/torch_api.py`` and the modules it
gathers) on every device, against torch: values, dtypes and input gradients of
``addmm``, ``scatter_reduce``, ``cummax``, ``frexp``, ``histogram``, ``unique(dim=)``...,
on inputs larger than the OpInfo samples where a device path differs (the segmented scan
of ``scatter_reduce``, the Euclid loop of ``gcd``), plus torch's call forms and errors."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot
import omnitensor.torch_face as tf

torch = pytest.importorskip("torch")

rng = np.random.default_rng(11)
F = rng.standard_normal((6, 5)).astype(np.float32)
G = rng.standard_normal((5, 4)).astype(np.float32)
V5 = rng.standard_normal(5).astype(np.float32)
V6 = rng.standard_normal(6).astype(np.float32)
B3 = rng.standard_normal((3, 6, 5)).astype(np.float32)
C3 = rng.standard_normal((3, 5, 4)).astype(np.float32)
POS = (rng.random((6, 5)) + 0.5).astype(np.float32)
# scatter_reduce on a long axis with many duplicates (segments of up to ~40 elements)
BIG_SRC = rng.standard_normal((3, 600)).astype(np.float32)
BIG_IDX = rng.integers(0, 17, (3, 600)).astype(np.int64)
BIG_SELF = rng.standard_normal((3, 17)).astype(np.float32)
SMALL_IDX = np.array([[0, 1, 0, 2, 1], [2, 2, 0, 1, 0]], np.int64)
INTS_A = rng.integers(-60, 60, 300).astype(np.int64)
INTS_B = rng.integers(-60, 60, 300).astype(np.int64)
LONG = rng.standard_normal((4, 300)).astype(np.float32)
ROWS = np.array([[1, 2], [0, 5], [1, 2], [0, 5], [3, 3]], np.int64)
MODE = np.array([[3, 1, 3, 1, 2, 1], [0, 0, 4, 4, 4, 0]], np.int64)


def _cases():
    """(name, function of a namespace and its tensors, inputs, differentiable)."""
    return [
        ("addmm", lambda m, a, b, c: m.addmm(a, b, c, beta=0.5, alpha=2.0), [V5[:4], F, G],
         True),
        ("addmm_beta0", lambda m, a, b, c: m.addmm(a * float("nan"), b, c, beta=0), [V5[:4], F, G],
         True),
        ("addmv", lambda m, a, b, c: m.addmv(a, b, c, alpha=-1.5), [V6, F, V5], True),
        ("addr", lambda m, a, b, c: m.addr(a, b, c, beta=2.0), [F, V6, V5], True),
        ("baddbmm", lambda m, a, b, c: m.baddbmm(a, b, c, alpha=0.5), [B3[:, :, :4], B3, C3],
         True),
        ("addbmm", lambda m, a, b, c: m.addbmm(a, b, c, beta=0.3), [F[:, :4], B3, C3], True),
        ("addcdiv", lambda m, a, b, c: m.addcdiv(a, b, c, value=0.5), [F, F, POS], True),
        ("angle", lambda m, a: m.angle(a), [F], True),
        ("polar", lambda m, a, b: m.view_as_real(m.polar(a, b)), [POS, F], True),
        ("view_as_complex", lambda m, a: m.view_as_complex(a).abs(), [B3[:, :, :2].copy()],
         True),
        ("scatter_reduce_sum", lambda m, s, i, v: s.scatter_reduce(1, i, v, "sum"),
         [BIG_SELF, BIG_IDX, BIG_SRC], True),
        ("scatter_reduce_amax", lambda m, s, i, v: s.scatter_reduce(1, i, v, "amax"),
         [BIG_SELF, BIG_IDX, BIG_SRC], True),
        ("scatter_reduce_amin_noself",
         lambda m, s, i, v: s.scatter_reduce(1, i, v, "amin", include_self=False),
         [BIG_SELF, BIG_IDX, BIG_SRC], True),
        ("scatter_reduce_mean", lambda m, s, i, v: s.scatter_reduce(1, i, v, "mean"),
         [BIG_SELF, BIG_IDX, BIG_SRC], True),
        ("scatter_reduce_prod", lambda m, s, i, v: s.scatter_reduce(1, i, v, "prod"),
         [F[:3], SMALL_IDX[:, :5].repeat(2, 0)[:3], POS[:3]], True),
        ("index_reduce_amax",
         lambda m, s, v: s.index_reduce(0, m.tensor([0, 2, 0, 1, 2, 2], device=s.device), v,
                                        "amax"), [F[:3], F], True),
        ("scatter_multiply", lambda m, s, i, v: s.scatter(1, i, v, reduce="multiply"),
         [F[:2], SMALL_IDX, POS[:2]], False),
        ("diagonal_scatter", lambda m, a, s: m.diagonal_scatter(a, s, 1), [F, V5[:4]], True),
        ("select_scatter", lambda m, a, s: m.select_scatter(a, s, 1, 2), [F, V6], True),
        ("slice_scatter", lambda m, a, s: m.slice_scatter(a, s, 1, 1, 5, 2), [F, F[:, :2]],
         True),
        ("masked_scatter", lambda m, a, s: a.masked_scatter(a > 0, s), [F, G], True),
        ("put_acc", lambda m, a, v: a.put(m.tensor([3, 3, 29, 0], device=a.device), v, True),
         [F, V5[:4]], True),
        ("cummax", lambda m, a: m.cummax(a, 1).values, [LONG], True),
        ("cummin_idx", lambda m, a: m.cummin(a, 1).indices, [LONG], False),
        ("cumulative_trapezoid", lambda m, a: m.cumulative_trapezoid(a, dx=0.5), [F], True),
        ("gradient", lambda m, a: m.gradient(a, spacing=2.0, edge_order=2)[1], [F], True),
        ("renorm", lambda m, a: m.renorm(a, 2, 0, 1.0), [F], True),
        ("frexp_mantissa", lambda m, a: m.frexp(a * 1000).mantissa, [F], True),
        ("frexp_exponent", lambda m, a: m.frexp(a * 1000).exponent, [F], False),
        # non-negative exponents: torch's ldexp gradient is grad * pow(2, other) computed
        # in integers, 0 for a negative integer exponent (ours is 2**other)
        ("ldexp", lambda m, a, e: m.ldexp(a, e), [F, (F * 4).round().astype(np.int64) % 5],
         True),
        ("gcd", lambda m, a, b: m.gcd(a, b), [INTS_A, INTS_B], False),
        ("lcm", lambda m, a, b: m.lcm(a, b), [INTS_A, INTS_B], False),
        ("fmax_nan", lambda m, a, b: m.fmax(a, b),
         [np.array([1, np.nan, 3, np.nan], np.float32), np.array([2, 2, np.nan, np.nan],
                                                                 np.float32)], False),
        ("isin", lambda m, a, b: m.isin(a, b), [INTS_A, INTS_B[:40]], False),
        ("mode", lambda m, a: m.mode(a, 1).values, [MODE], False),
        ("unique_dim", lambda m, a: m.unique(a, dim=0, return_inverse=True,
                                              return_counts=True)[0], [ROWS], False),
        ("unique_dim_inverse", lambda m, a: m.unique(a, dim=0, return_inverse=True)[1],
         [ROWS], False),
        ("unique_consecutive", lambda m, a: m.unique_consecutive(a, return_counts=True)[1],
         [np.array([1, 1, 2, 2, 2, 1, 3, 3], np.int64)], False),
        ("histogram", lambda m, a: m.histogram(a, 7).hist, [LONG.reshape(-1)], False),
        ("histogram_edges", lambda m, a: m.histogram(a, 7, range=(-1.0, 2.0)).bin_edges,
         [LONG.reshape(-1)], False),
        ("histogramdd", lambda m, a: m.histogramdd(a, [3, 4]).hist, [LONG.T[:, :2].copy()],
         False),
        ("nanquantile", lambda m, a: m.nanquantile(a, 0.3, dim=1),
         [np.where(F > 1, np.nan, F).astype(np.float32)], True),
        ("quantile_q_tensor", lambda m, a: m.quantile(a, m.tensor([0.1, 0.5, 0.9],
                                                                  device=a.device), dim=0),
         [F], True),
        ("native_layer_norm", lambda m, a, w: m.native_layer_norm(a, [5], w, None, 1e-5)[0],
         [F, V5], True),
        ("native_batch_norm", lambda m, a, w, b: m.native_batch_norm(
            a, w, b, None, None, True, 0.1, 1e-5)[0], [F, V5, V5], True),
        ("native_group_norm", lambda m, a: m.native_group_norm(
            a.reshape(2, 4, 5), None, None, 2, 4, 5, 2, 1e-5)[1], [B3[:2, :4]], True),
        ("constant_pad_nd", lambda m, a: m.constant_pad_nd(a, (-1, 2, 1, 0), 3.0), [F], True),
        ("transpose_copy", lambda m, a: m.transpose_copy(a, 0, 1), [F], True),
        ("diag_embed_dims", lambda m, a: m.diag_embed(a, 1, 0, 2), [F], True),
        ("tensordot_broadcast", lambda m, a, b: m.tensordot(a, b, dims=((0, 1), (2, 0))),
         [np.ones((1, 1, 1), np.float32), B3[:2, :1, :2].copy()], True),
        ("cov_1d", lambda m, a: m.cov(a), [V6], True),
        ("cov_weights", lambda m, a, w: m.cov(a, fweights=m.tensor([1, 2, 1, 3, 1],
                                                                   device=a.device),
                                              aweights=w), [F[:3], POS[0]], True),
        ("index_fill_tensor", lambda m, a, v: a.index_fill(1, m.tensor([0, 1, 1, 3],
                                                                      device=a.device), v),
         [F, np.array(2.5, np.float32)], True),
        ("clamp_crossed", lambda m, a, lo, hi: m.clamp(a, lo, hi),
         [F, F * 0 + 0.5, F * 0 - 0.5], True),
        ("nextafter", lambda m, a, b: m.nextafter(a, b), [F, G.reshape(-1)[:5]], True),
        ("square_bool", lambda m, a: m.square(a > 0), [F], False),
        ("sign_bool", lambda m, a: m.sign(a > 0), [F], False),
        ("logspace_int", lambda m: m.logspace(0.6, 2.6, 3, dtype=m.int64), [], False),
        ("arange_int_trunc", lambda m: m.arange(-3.7, 2.2, 1.3, dtype=m.int64), [], False),
    ]


CASES = _cases()


def _close(got, exp, what):
    g = got.detach().cpu().numpy() if isinstance(got, ot.Tensor) else np.asarray(got)
    e = exp.detach().numpy()
    assert g.shape == e.shape, f"{what}: shape {g.shape} vs torch {e.shape}"
    assert str(g.dtype) == str(e.dtype), f"{what}: dtype {g.dtype} vs torch {e.dtype}"
    np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64), rtol=3e-4,
                               atol=3e-4, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("name,fn,inputs,diff", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(device, name, fn, inputs, diff):
    ours = [ot.tensor(a, device=device) for a in inputs]
    theirs = [torch.tensor(a) for a in inputs]
    if diff:
        for t in ours:
            if t.dtype.kind == "f":
                t.requires_grad_(True)
        for t in theirs:
            if t.dtype.is_floating_point:
                t.requires_grad_(True)
    got = fn(tf, *ours) if ours else fn(tf)
    exp = fn(torch, *theirs) if theirs else fn(torch)
    if not ours:  # a creation function: on the device asked for
        got = fn(tf).to(device)
    _close(got, exp, name)
    if not diff:
        return
    w = rng.standard_normal(tuple(exp.shape)).astype(np.float32)
    (got * ot.tensor(w, device=device)).sum().backward()
    (exp * torch.tensor(w)).sum().backward()
    for i, (o, t) in enumerate(zip(ours, theirs)):
        if t.grad is not None and bool(t.grad.abs().sum() > 0):
            assert o.grad is not None, f"{name}: no gradient for input {i}"
            _close(o.grad, t.grad, f"{name} grad {i}")


def test_out_argument(device):
    a = ot.tensor(F, device=device)
    out = ot.empty(0, device=device)
    res = ot.addmm(a[:, :4], a, ot.tensor(G, device=device), out=out)
    assert res is out and tuple(out.shape) == (6, 4)
    with pytest.raises(ot.DTypeError, match="out of dtype float32"):
        ot.angle(a, out=ot.empty(6, 5, dtype=ot.int64, device=device))
    vals, idx = ot.empty(0, device=device), ot.empty(0, dtype=ot.int64, device=device)
    got = ot.cummax(a, 0, out=(vals, idx))
    assert got.values is vals and got.indices is idx and tuple(idx.shape) == (6, 5)


def test_resize_and_fill(device):
    x = ot.arange(6.0, device=device)
    assert x.resize_(2, 2) is x and x.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    x.resize_(5)
    assert x.tolist()[:4] == [0.0, 1.0, 2.0, 3.0] and tuple(x.shape) == (5,)
    with pytest.raises(RuntimeError, match="require grad"):
        ot.ones(2, requires_grad=True, device=device).resize_(3)
    v = ot.tensor(2.0, requires_grad=True, device=device)
    y = ot.fill(ot.zeros(2, 3, device=device), v)
    y.sum().backward()
    assert y.tolist() == [[2.0] * 3] * 2 and float(v.grad) == 6.0
    s = ot.empty_strided((2, 3), (1, 2), device=device)
    assert s.stride() == (1, 2)
    p = ot.empty_permuted((2, 3, 4), (2, 0, 1), device=device)
    assert tuple(p.shape) == (2, 3, 4) and p.stride() == (3, 1, 6)  # torch's strides


def test_torch_forms_and_errors(device):
    x = ot.tensor(F, device=device)
    with pytest.raises(TypeError, match="argument 'other'"):
        tf.atan2(x, 2)
    with pytest.raises(TypeError, match="argument 'input'"):
        tf.eq(2, x)
    assert tf.arange(end=3).tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="inconsistent with step sign"):
        tf.arange(0, 3, -1)
    assert ot.arange(0, 3, -1).shape == (0,)  # the Array API's empty range
    with pytest.raises(ValueError, match="reduce must be one of"):
        x.scatter_reduce(0, ot.zeros(6, 5, dtype=ot.int64, device=device), x, "max")
    with pytest.raises(ot.DTypeError, match="src"):
        x.scatter(0, ot.zeros(6, 5, dtype=ot.int64, device=device), x.to(ot.float64)
                  if ot.device(device).supports_dtype(ot.float64) else x.to(ot.int32))
    with pytest.raises(TypeError, match="addcdiv"):
        ot.addcdiv(x, ot.ones(2, dtype=ot.int64, device=device),
                   ot.ones(2, dtype=ot.int64, device=device))
    with pytest.raises(ValueError, match="fweights cannot be negative"):
        ot.cov(x, fweights=ot.tensor([1, -1, 1, 1, 1], device=device))
    with pytest.raises(ot.UnsupportedDTypeError, match="complex32"):
        x.chalf()
    assert tf.broadcast_shapes((2, 1), 3) == (2, 3)
    assert [t.tolist() for t in tf.unravel_index(ot.tensor([-1, 5], device=device),
                                                 (2, 3))] == [[1, 1], [2, 2]]
    assert tf.combinations(ot.tensor([1, 2, 3], device=device)).tolist() == \
        [[1, 2], [1, 3], [2, 3]]
    assert tf.nonzero_static(ot.tensor([0, 3, 0, 4], device=device), size=3).tolist() == \
        [[1], [3], [-1]]


def test_random_fills_follow_their_laws(device):
    """cauchy_, geometric_ and log_normal_: the quantiles and moments of 20000 draws (a
    seeded generator, bounds about 6 standard errors wide)."""
    n = 20000
    g = ot.Generator(device=device).manual_seed(5)
    c = ot.empty(n, device=device).cauchy_(1.5, 2.0, generator=g).cpu().numpy()
    q1, med, q3 = np.quantile(c, [0.25, 0.5, 0.75])
    assert abs(med - 1.5) < 0.1 and abs((q3 - q1) - 4.0) < 0.25  # IQR of Cauchy: 2 sigma
    k = ot.empty(n, device=device).geometric_(0.25, generator=g).cpu().numpy()
    assert k.min() >= 1 and np.all(k == np.round(k))
    assert abs(k.mean() - 4.0) < 0.15 and abs((k == 1).mean() - 0.25) < 0.02
    z = np.log(ot.empty(n, device=device).log_normal_(0.5, 0.75, generator=g).cpu().numpy())
    assert abs(z.mean() - 0.5) < 0.035 and abs(z.std() - 0.75) < 0.03
    with pytest.raises(ValueError, match="sigma > 0"):
        ot.empty(3, device=device).cauchy_(0.0, -1.0)
    with pytest.raises(ValueError, match=r"p to be in \(0, 1\)"):
        ot.empty(3, device=device).geometric_(1.5)


def test_addcmul_addcdiv_deprecated_value_first_overload(device):
    """torch's deprecated ``x.addcmul_(value, t1, t2)`` (older optimizers) still works,
    with a warning, and equals the keyword form."""
    a = ot.ones(3, device=device)
    b = ot.full((3,), 2.0, device=device)
    x, y = ot.zeros(3, device=device), ot.zeros(3, device=device)
    with pytest.warns(UserWarning, match="deprecated"):
        x.addcmul_(0.5, a, b)
    y.addcmul_(a, b, value=0.5)
    with pytest.warns(UserWarning, match="deprecated"):
        x.addcdiv_(3, a, b)
    y.addcdiv_(a, b, value=3)
    assert x.tolist() == y.tolist() == [2.5, 2.5, 2.5]
    with pytest.raises(TypeError, match="tensor1, tensor2"):
        x.addcmul_(a)


def test_trapezoid_rules_refuse_mismatched_sample_points(device):
    y, x = ot.ones(3, 5, device=device), ot.arange(3.0, device=device)
    for fn in (ot.trapezoid, ot.cumulative_trapezoid):
        with pytest.raises(ot.errors.ShapeError, match="x has 3 points, y has 5"):
            fn(y, x)
