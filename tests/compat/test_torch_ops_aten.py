"""``torch.ops.aten`` (omnitensor/aten): packets and overloads named as torch names them,
public operators resolving to the torch face's functions, the private kernels of
omnitensor/aten/kernels.py and norms.py and ``interpolate(antialias=True)``, value by value
against real torch on every device, with gradients and errors."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot
import omnitensor.torch_face as face
from omnitensor.autograd import gradcheck

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(11)
A = face.ops.aten


def _t(a, device, **kw):
    return ot.tensor(a, device=device, **kw)


def _close(o, t, rtol=1e-5, atol=1e-6):
    if isinstance(t, (tuple, list)):
        assert len(o) == len(t)
        for a, b in zip(o, t):
            _close(a, b, rtol, atol)
        return
    assert tuple(o.shape) == tuple(t.shape)
    assert str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(o.detach().cpu().numpy().astype(np.float64),
                               t.detach().numpy().astype(np.float64), rtol=rtol, atol=atol)


# ------------------------------------------------------------------- the namespace
def test_names_and_overloads_are_torchs():
    t = torch.ops.aten
    for name in ("add", "sum", "mm", "slice", "_softmax_backward_data"):
        assert getattr(A, name).overloads() == getattr(t, name).overloads()
        assert str(getattr(A, name)) == str(getattr(t, name))
        assert repr(getattr(A, name)) == repr(getattr(t, name))
        assert getattr(A, name).__name__ == getattr(t, name).__name__
    for name, ov in (("add", "Tensor"), ("sum", "dim_IntList"), ("slice", "Tensor"),
                     ("mm", "default"), ("_native_batch_norm_legit", "no_stats")):
        mine, theirs = getattr(getattr(A, name), ov), getattr(getattr(t, name), ov)
        assert (str(mine), mine.__name__, mine.name(), repr(mine)) == \
            (str(theirs), theirs.__name__, theirs.name(), repr(theirs))
        assert mine._overloadname == theirs._overloadname
        assert mine.overloadpacket is getattr(A, name)


def test_unknown_names_raise_attribute_error_naming_them():
    with pytest.raises(AttributeError, match="no_such_op"):
        _ = A.no_such_op
    with pytest.raises(AttributeError, match="no overload name 'nope'"):
        _ = A.add.nope
    # an ATen operator omnitensor has no counterpart for: absent, and it says so
    with pytest.raises(AttributeError, match="_flash_attention_forward"):
        _ = A._flash_attention_forward
    assert not hasattr(face, "_scaled_mm")


def test_torch_top_level_private_names():
    for name in ("_chunk_cat", "_safe_softmax", "_unsafe_masked_index",
                 "_unsafe_masked_index_put_accumulate", "_softmax_backward_data",
                 "_native_batch_norm_legit", "segment_reduce", "_segment_reduce"):
        assert hasattr(torch, name)
        assert callable(getattr(face, name))
    for name in ("native_dropout_backward", "_batch_norm_with_update"):  # not torch's either
        assert not hasattr(torch, name)
        assert not hasattr(face, name)


# --------------------------------------------------------------- public operators
def test_public_operators_are_the_face_functions(device):
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    b = RNG.standard_normal((4, 2)).astype(np.float32)
    ta, tb = torch.tensor(a), torch.tensor(b)
    oa, ob = _t(a, device), _t(b, device)
    _close(A.add.Tensor(oa, oa, alpha=2), torch.ops.aten.add.Tensor(ta, ta, alpha=2))
    _close(A.add.Scalar(oa, 3), torch.ops.aten.add.Scalar(ta, 3))
    _close(A.add(oa, 1.5), torch.ops.aten.add(ta, 1.5))
    _close(A.mm.default(oa, ob), torch.ops.aten.mm.default(ta, tb))
    _close(A.sum.dim_IntList(oa, [1], True), torch.ops.aten.sum.dim_IntList(ta, [1], True))
    _close(A.view.default(oa, [4, 3]), torch.ops.aten.view.default(ta, [4, 3]))
    _close(A.max.dim(oa, 1), tuple(torch.ops.aten.max.dim(ta, 1)))
    _close(A.relu.default(self=oa), torch.ops.aten.relu.default(self=ta))
    _close(A.gelu.default(oa), torch.ops.aten.gelu.default(ta))


# ---------------------------------------------------------------- private kernels
def test_slice_and_chunk_cat(device):
    a = RNG.standard_normal((6, 5, 4)).astype(np.float32)
    o, t = _t(a, device), torch.tensor(a)
    for args in ((0,), (1, 1, -2), (2, None, None, 3), (0, -10, 4, 2), (1, 2, 100)):
        _close(A.slice.Tensor(o, *args), torch.ops.aten.slice.Tensor(t, *args))
    with pytest.raises(RuntimeError, match="slice step must be positive"):
        A.slice.Tensor(o, 0, 0, 3, 0)
    c = RNG.standard_normal((6, 5, 3)).astype(np.float32)  # leading sizes as a's
    for dim, n in ((0, 4), (1, 2), (-1, 3), (2, 5)):
        _close(face._chunk_cat([o, _t(c, device)], dim, n),
               torch._chunk_cat([t, torch.tensor(c)], dim, n))
    with pytest.raises(RuntimeError, match="positive num_chunks"):
        face._chunk_cat([o], 0, 0)


def test_masked_index_kernels(device):
    a = RNG.standard_normal((5, 5)).astype(np.float32)
    mask = RNG.random((6, 6)) > 0.4
    i0 = RNG.integers(-2, 8, (6, 1))
    i1 = RNG.integers(-2, 8, (1, 6))
    i0[mask.any(1)[:, None] & ((i0 < -5) | (i0 > 4))] = 0  # out of range only where masked
    i1[:, mask.any(0) & ((i1[0] < -5) | (i1[0] > 4))] = 0
    o, t = _t(a, device), torch.tensor(a)
    om, tm = _t(mask, device), torch.tensor(mask)
    oi, ti = [_t(i0, device), _t(i1, device)], [torch.tensor(i0), torch.tensor(i1)]
    _close(face._unsafe_masked_index(o, om, oi, -1.5),
           torch._unsafe_masked_index(t, tm, ti, -1.5))
    v = RNG.standard_normal((6, 6)).astype(np.float32)
    _close(face._unsafe_masked_index_put_accumulate(o, om, oi, _t(v, device)),
           torch._unsafe_masked_index_put_accumulate(t, tm, ti, torch.tensor(v)))


def test_softmax_and_dropout_kernels(device):
    a = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    a[1, :, 2] = -np.inf
    o, t = _t(a, device), torch.tensor(a)
    for dim in (0, 1, -1):
        _close(face._safe_softmax(o, dim), torch._safe_softmax(t, dim))
    _close(A._safe_softmax.default(o, 1, ot.float64),
           torch.ops.aten._safe_softmax.default(t, 1, torch.float64))
    g = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    y = torch.softmax(torch.tensor(g), 1)
    _close(face._softmax_backward_data(_t(g, device), _t(y.numpy(), device), 1, ot.float32),
           torch._softmax_backward_data(torch.tensor(g), y, 1, torch.float32))
    mask = RNG.random((3, 4, 5)) > 0.5
    for dt in ("float32", "float16", "int64"):
        og = _t(g, device).to(getattr(ot, dt)) if dt != "int64" else _t((g * 9).astype(np.int64), device)
        tg = torch.tensor(og.cpu().numpy())
        _close(A.native_dropout_backward.default(og, _t(mask, device), 2.0),
               torch.ops.aten.native_dropout_backward.default(tg, torch.tensor(mask), 2.0),
               rtol=1e-3)


def test_batch_norm_kernels(device):
    x = RNG.standard_normal((4, 3, 5)).astype(np.float32)
    w, b = RNG.standard_normal(3).astype(np.float32), RNG.standard_normal(3).astype(np.float32)
    rm, rv = RNG.standard_normal(3).astype(np.float32), RNG.random(3).astype(np.float32) + 0.5
    for training in (True, False):
        orm, orv, trm, trv = (_t(rm, device), _t(rv, device), torch.tensor(rm),
                              torch.tensor(rv))
        _close(face._native_batch_norm_legit(_t(x, device), _t(w, device), _t(b, device),
                                             orm, orv, training, 0.3, 1e-5),
               torch._native_batch_norm_legit(torch.tensor(x), torch.tensor(w),
                                              torch.tensor(b), trm, trv, training, 0.3, 1e-5),
               rtol=1e-4, atol=1e-5)
        _close((orm, orv), (trm, trv), rtol=1e-5)
    _close(A._native_batch_norm_legit.no_stats(_t(x, device), None, None, True, 0.1, 1e-3),
           torch.ops.aten._native_batch_norm_legit.no_stats(torch.tensor(x), None, None,
                                                             True, 0.1, 1e-3), rtol=1e-4,
           atol=1e-5)
    orm, orv, trm, trv = _t(rm, device), _t(rv, device), torch.tensor(rm), torch.tensor(rv)
    _close(A._batch_norm_with_update(_t(x, device), None, _t(b, device), orm, orv, 0.2, 1e-5),
           torch.ops.aten._batch_norm_with_update(torch.tensor(x), None, torch.tensor(b),
                                                  trm, trv, 0.2, 1e-5), rtol=1e-4, atol=1e-5)
    _close((orm, orv), (trm, trv))


def test_max_pool2d_backward_and_segment_reduce(device):
    x = RNG.standard_normal((2, 3, 7, 6)).astype(np.float32)
    tout, tidx = torch.nn.functional.max_pool2d(torch.tensor(x), 3, 2, 1, return_indices=True)
    tg = torch.randn_like(tout)
    want = torch.ops.aten.max_pool2d_with_indices_backward.default(
        tg, torch.tensor(x), [3, 3], [2, 2], [1, 1], [1, 1], False, tidx)
    got = A.max_pool2d_with_indices_backward.default(
        _t(tg.numpy(), device), _t(x, device), [3, 3], [2, 2], [1, 1], [1, 1], False,
        _t(tidx.numpy(), device))
    _close(got, want)
    data = RNG.standard_normal((2, 7, 3)).astype(np.float32)
    lengths = np.array([[0, 3, 4], [2, 2, 3]])
    offsets = np.concatenate([np.zeros((2, 1), np.int64), lengths.cumsum(1)], 1)
    for reduce in ("sum", "mean", "max", "min", "prod"):
        for initial in (None, 1.5):
            _close(face.segment_reduce(_t(data, device), reduce, lengths=_t(lengths, device),
                                       axis=1, initial=initial),
                   torch.segment_reduce(torch.tensor(data), reduce,
                                        lengths=torch.tensor(lengths), axis=1,
                                        initial=initial), rtol=1e-5)
            _close(face._segment_reduce(_t(data, device), reduce, offsets=_t(offsets, device),
                                        axis=1, initial=initial),
                   torch._segment_reduce(torch.tensor(data), reduce,
                                         offsets=torch.tensor(offsets), axis=1,
                                         initial=initial), rtol=1e-5)
    short = np.array([[1, 2, 0], [3, 1, 1]])  # unsafe: the positions past them are left out
    for reduce in ("sum", "max"):
        _close(face.segment_reduce(_t(data, device), reduce, lengths=_t(short, device),
                                   axis=1, unsafe=True),
               torch.segment_reduce(torch.tensor(data), reduce, lengths=torch.tensor(short),
                                    axis=1, unsafe=True))
    with pytest.raises(RuntimeError, match="sum to data.size"):
        face.segment_reduce(_t(data, device), "sum", lengths=_t([[1, 1], [1, 1]], device),
                            axis=1)


# ------------------------------------------------------------------ antialiasing
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_interpolate_antialias(device, mode):
    x = RNG.standard_normal((2, 3, 10, 20)).astype(np.float32)
    o, t = _t(x, device), torch.tensor(x)
    F, TF = face.nn.functional, torch.nn.functional
    for kw in (dict(size=(3, 3)), dict(size=(5, 27)), dict(scale_factor=(1.7, 0.9)),
               dict(scale_factor=(0.4, 0.5), align_corners=True), dict(size=(16, 8))):
        _close(F.interpolate(o, mode=mode, antialias=True, **kw),
               TF.interpolate(t, mode=mode, antialias=True, **kw), rtol=1e-4, atol=1e-5)
    _close(A._upsample_bilinear2d_aa.default(o, [4, 6], False, 1.7, 0.9),
           torch.ops.aten._upsample_bilinear2d_aa.default(t, [4, 6], False, 1.7, 0.9),
           rtol=1e-4, atol=1e-5)
    _close(A._upsample_bilinear2d_aa(o, None, True, [0.8, 1.3]),
           torch.ops.aten._upsample_bilinear2d_aa(t, None, True, [0.8, 1.3]),
           rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="Anti-alias option is restricted"):
        F.interpolate(o[0], size=3, mode="linear", antialias=True)


def test_interpolate_antialias_uint8_within_one_level(device):
    """torch filters uint8 images in fixed point; omnitensor in float32 then rounds, so
    levels agree to within one."""
    x = RNG.integers(0, 256, (1, 3, 12, 17)).astype(np.uint8)
    got = face.nn.functional.interpolate(_t(x, device), size=(5, 7), mode="bilinear",
                                         antialias=True)
    want = torch.nn.functional.interpolate(torch.tensor(x), size=(5, 7), mode="bilinear",
                                           antialias=True)
    assert got.dtype == ot.uint8
    diff = np.abs(got.cpu().numpy().astype(int) - want.numpy().astype(int))
    assert diff.max() <= 1


# ---------------------------------------------------------------------- gradients
def test_gradients_of_private_kernels(device):
    x = _t(RNG.standard_normal((2, 2, 6, 5)), device, requires_grad=True)
    assert gradcheck(lambda v: A._upsample_bilinear2d_aa(v, [3, 2], False), (x,))
    s = _t(RNG.standard_normal((7, 2)), device, requires_grad=True)
    lengths = _t([2, 0, 5], device)
    assert gradcheck(lambda v: face.segment_reduce(v, "mean", lengths=lengths, initial=0.5),
                     (s,))
    w = _t(RNG.standard_normal(2), device, requires_grad=True)
    assert gradcheck(lambda v, g: face._native_batch_norm_legit(v, g, None, True, 0.1,
                                                                1e-5)[0], (x, w))
    m = _t(np.array([[-np.inf] * 3, [0.5, -1.0, 2.0]]), device, requires_grad=True)
    out = face._safe_softmax(m, 1)
    (out * _t(RNG.standard_normal((2, 3)), device)).sum().backward()
    assert np.isfinite(m.grad.cpu().numpy()).all() and (m.grad.cpu().numpy()[0] == 0).all()


def test_common_private_operators(device):
    """The private operators decompositions and FX graphs call (omnitensor/aten/common.py)."""
    a = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    o, t = _t(a, device), torch.tensor(a)
    for dim in (0, -1):
        _close(A._softmax.default(o, dim, False), torch.ops.aten._softmax.default(t, dim, False))
        _close(A._log_softmax(o, dim, False), torch.ops.aten._log_softmax(t, dim, False))
        y = torch.log_softmax(t, dim)
        _close(A._log_softmax_backward_data.default(o, _t(y.numpy(), device), dim, ot.float32),
               torch.ops.aten._log_softmax_backward_data.default(t, y, dim, torch.float32),
               atol=1e-5)
    got = A._to_copy.default(o, dtype=ot.float64)
    _close(got, torch.ops.aten._to_copy.default(t, dtype=torch.float64))
    assert got.device == o.device
    _close(A._unsafe_view.default(o, [4, 15]), torch.ops.aten._unsafe_view.default(t, [4, 15]))
    i0, i2 = RNG.integers(0, 3, (2, 2)), RNG.integers(-5, 5, (2,))
    for name in ("index", "_unsafe_index"):
        _close(getattr(A, name).Tensor(o, [_t(i0, device), None, _t(i2, device)]),
               getattr(torch.ops.aten, name).Tensor(t, [torch.tensor(i0), None,
                                                        torch.tensor(i2)]))


UPSAMPLE = [  # (aten name, input shape, default's arguments after output_size, vec's factors)
    ("upsample_nearest1d", (2, 3, 9), [13], (), [2.5]),
    ("upsample_nearest2d", (2, 3, 8, 7), [5, 9], (1.7, 0.6), [1.7, 0.6]),
    ("upsample_nearest3d", (1, 2, 4, 5, 6), [3, 7, 2], (), [0.8, 1.5, 2.0]),
    ("_upsample_nearest_exact2d", (2, 3, 8, 7), [5, 9], (), [1.3, 0.7]),
    ("upsample_linear1d", (2, 3, 9), [4], (True,), [2.5]),
    ("upsample_bilinear2d", (2, 3, 8, 7), [5, 9], (False, 1.3, 0.7), [1.3, 0.7]),
    ("upsample_trilinear3d", (1, 2, 4, 5, 6), [3, 7, 2], (True, None, None, None),
     [0.8, 1.5, 2.0]),
    ("upsample_bicubic2d", (2, 3, 8, 7), [5, 11], (False,), [1.5, 0.5]),
    ("_upsample_bicubic2d_aa", (2, 3, 8, 7), [5, 3], (False,), [0.4, 0.6]),
]


@pytest.mark.parametrize("name,shape,size,args,factors", UPSAMPLE, ids=[u[0] for u in UPSAMPLE])
def test_upsample_family(device, name, shape, size, args, factors):
    x = RNG.standard_normal(shape).astype(np.float32)
    o, t = _t(x, device), torch.tensor(x)
    mine, theirs = getattr(A, name), getattr(torch.ops.aten, name)
    _close(mine.default(o, size, *args), theirs.default(t, size, *args), rtol=1e-4, atol=1e-5)
    aligns = "nearest" not in name
    head = (False,) if aligns else ()
    _close(mine.vec(o, None, *head, factors), theirs.vec(t, None, *head, factors),
           rtol=1e-4, atol=1e-5)
    _close(mine(o, size, *head, None), theirs(t, size, *head, None), rtol=1e-4, atol=1e-5)


def test_submodule_spellings_and_cudnn_switches(device):
    x = RNG.standard_normal((2, 3, 4, 4)).astype(np.float32)
    o, t = _t(x, device), torch.tensor(x)
    _close(A.linalg_vector_norm.default(o, 2, [1], False),
           torch.ops.aten.linalg_vector_norm.default(t, 2, [1], False))
    _close(A.special_erfcx.default(o), torch.ops.aten.special_erfcx.default(t), rtol=1e-4)
    _close(A.layer_norm.default(o, [4, 4], None, None, 1e-5, False),
           torch.ops.aten.layer_norm.default(t, [4, 4], None, None, 1e-5, False), atol=1e-5)
    w = RNG.standard_normal(3).astype(np.float32)
    _close(A.group_norm(o, 3, _t(w, device), None, 1e-5, True),
           torch.ops.aten.group_norm(t, 3, torch.tensor(w), None, 1e-5, True), atol=1e-5)


ACTIVATION_BACKWARD = [("threshold_backward", (0.5,), {}), ("gelu_backward", (), {}),
                       ("gelu_backward", (), {"approximate": "tanh"}),
                       ("silu_backward", (), {}), ("hardtanh_backward", (-0.5, 0.75), {}),
                       ("softplus_backward", (2.0, 3.0), {}), ("mish_backward", (), {}),
                       ("hardsigmoid_backward", (), {}), ("hardswish_backward", (), {})]


@pytest.mark.parametrize("name,args,kwargs", ACTIVATION_BACKWARD,
                         ids=[f"{c[0]}{len(c[2])}" for c in ACTIVATION_BACKWARD])
def test_activation_backward_kernels(device, name, args, kwargs):
    """Values at the kinks too (the threshold, hardtanh's bounds, the hard ones' +-3)."""
    x = np.concatenate([RNG.standard_normal(30) * 3,
                        [0.0, 0.5, -0.5, 0.75, 3.0, -3.0, 1.5]]).astype(np.float32)
    g = RNG.standard_normal(x.shape).astype(np.float32)
    want = getattr(torch.ops.aten, name)(torch.tensor(g), torch.tensor(x), *args, **kwargs)
    got = getattr(A, name)(_t(g, device), _t(x, device), *args, **kwargs)
    _close(got, want, rtol=1e-5, atol=1e-5)  # float32: gelu-tanh's tail rounds to ~1e-6
    assert not got.requires_grad


def test_activation_backward_differentiates_again(device):
    x = _t(RNG.standard_normal(6), device, requires_grad=True)
    g = _t(RNG.standard_normal(6), device, requires_grad=True)
    assert gradcheck(lambda a, b: A.gelu_backward(b, a), (x, g))
    y = np.tanh(RNG.standard_normal(6))
    want = torch.ops.aten.tanh_backward(torch.tensor(g.detach().cpu().numpy()),
                                        torch.tensor(y))
    _close(A.tanh_backward(g.detach(), _t(y, device)), want)
    s = 1 / (1 + np.exp(-RNG.standard_normal(6)))
    want = torch.ops.aten.sigmoid_backward(torch.tensor(g.detach().cpu().numpy()),
                                           torch.tensor(s))
    _close(A.sigmoid_backward(g.detach(), _t(s, device)), want)
