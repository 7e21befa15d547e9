"""torch's top-level in-place functions, top-level spellings of Tensor methods, and the
top-level nn.functional forms whose arguments differ from F's (torch.batch_norm's order,
torch.embedding's weight first, integer reductions, stride=[], always-returned indices)
on the torch face equal real torch's."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot
import omnitensor.torch_face as face

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(1)
X = RNG.uniform(0.1, 0.9, (3, 4, 5))  # inside every unary op's domain
Y = RNG.standard_normal((3, 4, 5))

INPLACE = {
    "abs_": (), "acos_": (), "asin_": (), "atan_": (), "arccos_": (), "arcsinh_": (),
    "atanh_": (), "ceil_": (), "cos_": (), "cosh_": (), "erf_": (), "erfc_": (),
    "exp_": (), "exp2_": (), "expm1_": (), "floor_": (), "log_": (), "log10_": (),
    "log1p_": (), "log2_": (), "neg_": (), "negative_": (), "reciprocal_": (),
    "round_": (), "rsqrt_": (), "sigmoid_": (), "sin_": (), "sinh_": (), "sqrt_": (),
    "square_": (), "tan_": (), "tanh_": (), "trunc_": (), "relu_": (),
    "clamp_": (0.3, 0.6), "clamp_min_": (0.4,), "clamp_max_": (0.4,), "clip_": (0.2, 0.5),
    "fill_": (2.5,), "nan_to_num_": (),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_top_level_inplace_equals_torch(name, device):
    args = INPLACE[name]
    t = torch.tensor(X)
    rt = getattr(torch, name)(t, *args)
    o = ot.tensor(X, device=device)
    ro = getattr(face, name)(o, *args)
    assert ro is o, f"{name} must return its input"
    assert rt is t
    np.testing.assert_allclose(o.cpu().numpy(), t.numpy(), rtol=1e-12, atol=1e-12)


def test_top_level_inplace_refuses_a_number():
    with pytest.raises(TypeError, match="must be Tensor"):
        face.abs_(2.0)


def test_top_level_tensor_methods(device):
    o = ot.tensor(X, device=device, requires_grad=True)
    d = face.detach(o)
    assert not d.requires_grad and np.array_equal(d.cpu().numpy(), X)
    assert face.is_same_size(o, ot.zeros((3, 4, 5), device=device))
    assert not face.is_same_size(o, ot.zeros((3, 4), device=device))
    for dtype in ("float32", "int64", "uint8", "bool", "complex64"):
        assert face.is_signed(ot.zeros(2, dtype=dtype)) == torch.is_signed(
            torch.zeros(2, dtype=getattr(torch, dtype)))
    assert face.get_device(ot.zeros(2)) == torch.get_device(torch.zeros(2)) == -1
    m = ot.tensor(X, device=device)
    face.addmv_(m[0, :, 0], ot.tensor(Y[0], device=device), ot.tensor(Y[1, 0], device=device),
                beta=0.5, alpha=2.0)
    tm = torch.tensor(X)
    torch.addmv_(tm[0, :, 0], torch.tensor(Y[0]), torch.tensor(Y[1, 0]), beta=0.5, alpha=2.0)
    np.testing.assert_allclose(m.cpu().numpy(), tm.numpy(), rtol=1e-12)
    e = ot.tensor(X, device=device)
    face.ldexp_(e, ot.tensor(3, device=device))
    np.testing.assert_allclose(e.cpu().numpy(), torch.ldexp_(torch.tensor(X), torch.tensor(3)))


def _pair(fn, *arrays, device):
    expected = fn(torch, *(torch.tensor(a) for a in arrays))
    got = fn(face, *(ot.tensor(a, device=device) for a in arrays))
    return got, expected


def _close(got, expected, rtol=1e-10):
    if isinstance(expected, (tuple, list)):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            _close(g, e, rtol)
        return
    np.testing.assert_allclose(got.cpu().numpy(), expected.numpy(), rtol=rtol, atol=1e-12)


W3 = RNG.standard_normal(4)
TGT = np.sign(RNG.standard_normal((3, 5)))
CASES = {
    "batch_norm_eval": lambda m, x, y: m.batch_norm(
        x, x[0, :, 0] * 0 + 2, x[0, :, 0] * 0 + 0.5,
        y[0, :, 0] * 0 + 0.1, y[0, :, 0] * 0 + 2.0, False, 0.1, 1e-5, False),
    "batch_norm_train": lambda m, x, y: m.batch_norm(x, None, None, None, None, True, 0.1,
                                                     1e-5, False),
    "instance_norm": lambda m, x, y: m.instance_norm(x, None, None, None, None, True, 0.1,
                                                     1e-5, False),
    "embedding": lambda m, x, y: m.embedding(
        x[0], m.tensor([[0, 3], [2, 2]], device=x.device)),
    "kl_div": lambda m, x, y: m.kl_div(y, x, 1),
    "kl_div_sum_log_target": lambda m, x, y: m.kl_div(y, x.log(), 2, log_target=True),
    "bce_with_logits": lambda m, x, y: m.binary_cross_entropy_with_logits(
        y, x, None, x[0, 0] * 0 + 2.0, 0),
    "cosine_embedding_loss": lambda m, x, y: m.cosine_embedding_loss(
        x[0], y[0], m.sign(y[0, :, 0]), 0.1, 2),
    "hinge_embedding_loss": lambda m, x, y: m.hinge_embedding_loss(
        y, m.sign(y), 0.5, 1),
    "margin_ranking_loss": lambda m, x, y: m.margin_ranking_loss(x, y, m.sign(y), 0.2, 0),
    "poisson_nll_loss": lambda m, x, y: m.poisson_nll_loss(y, x, True, True, 1e-8, 1),
    "triplet_margin_loss": lambda m, x, y: m.triplet_margin_loss(x[0], y[0], y[1], 1.0, 2.0,
                                                                 1e-6, True, 2),
    "adaptive_max_pool1d": lambda m, x, y: m.adaptive_max_pool1d(y, 3),
    "avg_pool1d_stride_list": lambda m, x, y: m.avg_pool1d(y, [2], [], [1]),
    "max_pool1d": lambda m, x, y: m.max_pool1d(y, 2, [], 0, 1, True),
    "max_pool1d_with_indices": lambda m, x, y: m.max_pool1d_with_indices(y, 3, 1, 1),
    "max_pool2d": lambda m, x, y: m.max_pool2d(y[None], [2, 2], []),
    "max_pool3d": lambda m, x, y: m.max_pool3d(y[None, None], 2, 1),
    "convolution": lambda m, x, y: m.convolution(y, x[:2, :, :3], None, [1], [1], [1],
                                                 False, [0], 1),
    "convolution_transposed": lambda m, x, y: m.convolution(
        y, x.transpose(0, 1)[:, :2, :3], x[0, :2, 0], [2], [1], [1], True, [1], 1),
    "conv_tbc": lambda m, x, y: m.conv_tbc(y, y[:2].reshape(2, 5, 4)[:, :, :3], x[0, 0, :3], 1),
    "affine_grid_generator": lambda m, x, y: m.affine_grid_generator(
        y[:2, :2, :3], [2, 1, 3, 4], False),
    "grid_sampler": lambda m, x, y: m.grid_sampler(
        x[None], y[None, :, :, :2].tanh(), 0, 1, True),
    "feature_dropout_eval": lambda m, x, y: m.feature_dropout(y, 0.5, False),
}


CELL_IN, CELL_H = RNG.standard_normal((2, 5)), RNG.standard_normal((2, 3))


@pytest.mark.parametrize("cell,gates", [("lstm_cell", 4), ("gru_cell", 3),
                                        ("rnn_tanh_cell", 1), ("rnn_relu_cell", 1)])
@pytest.mark.parametrize("bias", [True, False])
def test_rnn_cells_equal_torch(cell, gates, bias, device):
    w_ih, w_hh = RNG.standard_normal((3 * gates, 5)), RNG.standard_normal((3 * gates, 3))
    b_ih, b_hh = RNG.standard_normal(3 * gates), RNG.standard_normal(3 * gates)
    arrays = [CELL_IN, CELL_H, w_ih, w_hh] + ([b_ih, b_hh] if bias else [])

    def call(m, x, h, *rest):
        hx = [h, h * 0.5] if cell == "lstm_cell" else h
        return getattr(m, cell)(x, hx, *rest)
    got, expected = _pair(call, *arrays, device=device)
    _close(got, expected)


@pytest.mark.parametrize("name", sorted(CASES))
def test_top_level_forms_equal_torch(name, device):
    got, expected = _pair(CASES[name], X, Y, device=device)
    _close(got, expected)


def test_ctc_loss_integer_reduction(device):
    lp = torch.tensor(RNG.standard_normal((6, 2, 4))).log_softmax(2)
    targets = torch.tensor([[1, 2], [3, 3]])
    for red in (0, 1, 2):
        e = torch.ctc_loss(lp, targets, [6, 5], [2, 2], 0, red, False)
        g = face.ctc_loss(ot.tensor(lp.numpy(), device=device), ot.tensor(
            targets.numpy(), device=device), [6, 5], [2, 2], 0, red, False)
        np.testing.assert_allclose(g.cpu().numpy(), e.numpy(), rtol=1e-9)


def test_embedding_padding_idx_masks_the_gradient(device):
    w = ot.tensor(Y[0], device=device, requires_grad=True)
    face.embedding(w, ot.tensor([0, 1, 1], device=device), 1).sum().backward()
    tw = torch.tensor(Y[0], requires_grad=True)
    torch.embedding(tw, torch.tensor([0, 1, 1]), 1).sum().backward()
    np.testing.assert_array_equal(w.grad.cpu().numpy(), tw.grad.numpy())


def test_embedding_renorm_equals_torch(device):
    w = ot.tensor(Y[0] * 3, device=device)
    face.embedding_renorm_(w, ot.tensor([0, 2, 2], device=device), 1.5, 2.0)
    tw = torch.tensor(Y[0] * 3)
    torch.embedding_renorm_(tw, torch.tensor([0, 2, 2]), 1.5, 2.0)
    np.testing.assert_allclose(w.cpu().numpy(), tw.numpy(), rtol=1e-6)


def test_dropout_forms_keep_torch_statistics(device):
    ot.manual_seed(0)
    x = ot.ones((400, 8, 3), dtype="float64", device=device)
    y = face.feature_dropout(x, 0.25, True).cpu().numpy()
    per_feature = y[:, :, 0]
    assert set(np.unique(y)) <= {0.0, 1.0 / 0.75}
    assert np.array_equal(y, np.repeat(per_feature[:, :, None], 3, axis=2))  # whole features
    assert abs((per_feature == 0).mean() - 0.25) < 0.04
    out, mask = face.native_dropout(x, 0.5, True)
    assert mask.dtype == ot.bool
    np.testing.assert_array_equal(out.cpu().numpy(), mask.cpu().numpy() * 2.0)
    out, mask = face.native_dropout(x, 0.5, False)
    assert mask.cpu().numpy().all() and np.array_equal(out.cpu().numpy(), x.cpu().numpy())
    z = ot.ones((50, 4), dtype="float64", device=device)
    assert face.dropout_(z, 0.5, True) is z
    assert set(np.unique(z.cpu().numpy())) <= {0.0, 2.0}
    assert face.feature_dropout_(x, 0.5, False) is x


def test_bad_arguments_are_refused():
    x = ot.ones((2, 3))
    with pytest.raises(ValueError, match="reduction"):
        face.kl_div(x, x, 3)
    with pytest.raises(ValueError, match="probability"):
        face.feature_dropout(x, 1.5, True)
    with pytest.raises(ValueError, match="3-d"):
        face.conv_tbc(x, x, x[0])


@pytest.mark.parametrize("p", [2, 1, 0, float("inf"), 3.5])
def test_dist_is_torchs_function_not_the_distributed_module(device, p):
    """``torch.dist(a, b, p)`` under as_torch (omnitensor.dist is the distributed alias)."""
    a = np.random.default_rng(0).standard_normal((3, 4))
    b = np.random.default_rng(1).standard_normal((4,))
    got = face.dist(ot.tensor(a, device=device, dtype=ot.float32),
                          ot.tensor(b, device=device, dtype=ot.float32), p)
    want = torch.dist(torch.tensor(a, dtype=torch.float32),
                      torch.tensor(b, dtype=torch.float32), p)
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-5)
