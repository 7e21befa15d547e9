"""Every layer's forward (and the key gradients) against a NumPy reference, on every
device. Small shapes, few distinct shapes: each new shape may compile kernels on OpenCL."""
import numpy as np
import pytest
from nn_helpers import (N, T, fdtype, np_adaptive_avg_pool2d, np_avg_pool2d, np_conv2d,
                        np_conv_transpose2d, np_layer_norm, np_max_pool2d, rng, tol)

import omnitensor as ot
from omnitensor import nn

X4 = rng(1).standard_normal((2, 4, 6, 5))      # the image batch most tests share


def _to(module, device):
    return module.to(device, fdtype(device))


def test_linear_forward_backward(device):
    m = _to(nn.Linear(5, 3), device)
    x = rng().standard_normal((4, 5))
    xt = T(x, device, rg=True)
    y = m(xt)
    w, b = N(m.weight), N(m.bias)
    np.testing.assert_allclose(N(y), x @ w.T + b, **tol(device))
    g = rng(2).standard_normal((4, 3))
    y.backward(T(g, device))
    np.testing.assert_allclose(N(xt.grad), g @ w, **tol(device))
    np.testing.assert_allclose(N(m.weight.grad), g.T @ x, **tol(device))
    np.testing.assert_allclose(N(m.bias.grad), g.sum(0), **tol(device))
    y3 = m(T(x.reshape(2, 2, 5), device))                # leading batch dims
    np.testing.assert_allclose(N(y3), (x @ w.T + b).reshape(2, 2, 3), **tol(device))
    assert nn.Linear(5, 3, bias=False).bias is None


def test_linear_default_init_bounds():
    m = nn.Linear(100, 50)
    bound = 1 / np.sqrt(100)
    assert np.abs(N(m.weight)).max() <= bound and np.abs(N(m.bias)).max() <= bound
    assert N(m.weight).std() > 0.8 * bound / np.sqrt(3)    # uniform: std = bound / sqrt(3)


def test_bilinear(device):
    m = _to(nn.Bilinear(3, 4, 2), device)
    a, b = rng().standard_normal((5, 3)), rng(2).standard_normal((5, 4))
    ref = np.einsum("ni,kij,nj->nk", a, N(m.weight), b) + N(m.bias)
    np.testing.assert_allclose(N(m(T(a, device), T(b, device))), ref, **tol(device))


@pytest.mark.parametrize("cfg", [
    dict(stride=1, padding=1, dilation=1, groups=1),
    dict(stride=(2, 1), padding=(0, 2), dilation=(1, 2), groups=2),
])
def test_conv2d(device, cfg):
    m = _to(nn.Conv2d(4, 6, (3, 2), **cfg), device)
    x = T(X4, device, rg=True)
    y = m(x)
    pair = lambda v: v if isinstance(v, tuple) else (v, v)
    ref = np_conv2d(X4, N(m.weight), N(m.bias), pair(cfg["stride"]), pair(cfg["padding"]),
                    pair(cfg["dilation"]), cfg["groups"])
    np.testing.assert_allclose(N(y), ref, **tol(device))
    y.sum().backward()
    # d(sum y)/dx: the adjoint of the convolution applied to ones
    ones = np.ones_like(ref)
    gx = np_conv_transpose2d(ones, N(m.weight), None, pair(cfg["stride"]),
                             pair(cfg["padding"]), (0, 0), cfg["groups"], pair(cfg["dilation"]))
    gx = np.pad(gx, [(0, 0), (0, 0), (0, X4.shape[2] - gx.shape[2]),
                     (0, X4.shape[3] - gx.shape[3])])
    np.testing.assert_allclose(N(x.grad), gx, **tol(device))
    np.testing.assert_allclose(N(m.bias.grad), np.full(6, ref[:, 0].size), **tol(device))


def test_conv2d_padding_modes_and_same(device):
    m = _to(nn.Conv2d(4, 2, 3, padding=1, padding_mode="replicate"), device)
    xp = np.pad(X4, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="edge")
    ref = np_conv2d(xp, N(m.weight), N(m.bias), (1, 1), (0, 0), (1, 1), 1)
    np.testing.assert_allclose(N(m(T(X4, device))), ref, **tol(device))
    same = _to(nn.Conv2d(4, 2, (3, 2), padding="same"), device)
    out = same(T(X4, device))
    assert out.shape == (2, 2, 6, 5)
    xs = np.pad(X4, ((0, 0), (0, 0), (1, 1), (0, 1)))   # even kernel: the extra pad is right
    np.testing.assert_allclose(N(out), np_conv2d(xs, N(same.weight), N(same.bias), (1, 1),
                                                 (0, 0), (1, 1), 1), **tol(device))


def test_conv1d(device):
    m = _to(nn.Conv1d(4, 3, 3, stride=2, padding=1), device)
    x = X4[:, :, 0, :]                                   # (2, 4, 5)
    ref = np_conv2d(x[:, :, None], N(m.weight)[:, :, None], N(m.bias), (1, 2), (0, 1),
                    (1, 1), 1)[:, :, 0]
    np.testing.assert_allclose(N(m(T(x, device))), ref, **tol(device))


def test_conv_transpose2d(device):
    m = _to(nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1), device)
    y = m(T(X4, device))
    ref = np_conv_transpose2d(X4, N(m.weight), N(m.bias), (2, 2), (1, 1), (1, 1), 1, (1, 1))
    assert y.shape == (2, 2, 12, 10)
    np.testing.assert_allclose(N(y), ref, **tol(device))
    y2 = m(T(X4, device), output_size=(11, 9))          # output_padding from the size
    assert y2.shape == (2, 2, 11, 9)


def test_conv_default_init_bounds():
    m = nn.Conv2d(4, 8, 3)
    bound = 1 / np.sqrt(4 * 9)
    assert np.abs(N(m.weight)).max() <= bound and np.abs(N(m.bias)).max() <= bound


@pytest.mark.parametrize("cfg", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1,
                                                          ceil_mode=True),
                                 dict(kernel_size=2, stride=1, dilation=2)])
def test_max_pool2d(device, cfg):
    x = T(X4, device, rg=True)
    y = nn.MaxPool2d(**cfg)(x)
    k = (cfg["kernel_size"],) * 2
    s = (cfg.get("stride", cfg["kernel_size"]),) * 2
    ref = np_max_pool2d(X4, k, s, (cfg.get("padding", 0),) * 2, (cfg.get("dilation", 1),) * 2,
                        cfg.get("ceil_mode", False))
    np.testing.assert_allclose(N(y), ref, **tol(device))
    y.sum().backward()
    g = N(x.grad)
    # each output routes its gradient to exactly one input equal to it
    assert g.sum() == pytest.approx(ref.size) and set(np.unique(g)) <= set(range(10))


def test_max_pool2d_ties_go_to_first(device):
    x = T(np.zeros((1, 1, 2, 4)), device, rg=True)      # all ties
    nn.MaxPool2d(2)(x).sum().backward()
    np.testing.assert_array_equal(N(x.grad), [[[[1, 0, 1, 0], [0, 0, 0, 0]]]])
    _, idx = nn.MaxPool2d(2, return_indices=True)(T(X4, device))
    flat = X4.reshape(2, 4, -1)
    picked = np.take_along_axis(flat, N(idx).reshape(2, 4, -1), 2).reshape(N(idx).shape)
    np.testing.assert_allclose(picked, np_max_pool2d(X4, (2, 2), (2, 2), (0, 0)))


@pytest.mark.parametrize("cfg", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1,
                                                          ceil_mode=True,
                                                          count_include_pad=False)])
def test_avg_pool2d(device, cfg):
    y = nn.AvgPool2d(**cfg)(T(X4, device))
    k = cfg["kernel_size"]
    ref = np_avg_pool2d(X4, (k, k), (cfg.get("stride", k),) * 2, (cfg.get("padding", 0),) * 2,
                        cfg.get("ceil_mode", False), cfg.get("count_include_pad", True))
    np.testing.assert_allclose(N(y), ref, **tol(device))


@pytest.mark.parametrize("size", [(3, 1), 1, (2, None)])
def test_adaptive_avg_pool2d(device, size):
    y = nn.AdaptiveAvgPool2d(size)(T(X4, device))
    hw = (size, size) if isinstance(size, int) else (size[0], size[1] or X4.shape[3])
    np.testing.assert_allclose(N(y), np_adaptive_avg_pool2d(X4, hw), **tol(device))


def test_batch_norm_train_eval_running_stats(device):
    bn = _to(nn.BatchNorm2d(4, momentum=0.2), device)
    with ot.no_grad():
        bn.weight.copy_(T([1.0, 2.0, 0.5, -1.0], device))
        bn.bias.copy_(T([0.0, 1.0, -1.0, 0.5], device))
    x = T(X4, device)
    y = bn(x)
    m = X4.mean((0, 2, 3))
    v = X4.var((0, 2, 3))
    w = np.array([1.0, 2.0, 0.5, -1.0])[None, :, None, None]
    b = np.array([0.0, 1.0, -1.0, 0.5])[None, :, None, None]
    ref = (X4 - m[None, :, None, None]) / np.sqrt(v[None, :, None, None] + 1e-5) * w + b
    np.testing.assert_allclose(N(y), ref, **tol(device))
    n = X4.size // 4
    np.testing.assert_allclose(N(bn.running_mean), 0.2 * m, **tol(device))
    np.testing.assert_allclose(N(bn.running_var), 0.8 + 0.2 * v * n / (n - 1), **tol(device))
    assert int(bn.num_batches_tracked.item()) == 1
    bn.eval()
    ye = bn(x)
    rm, rv = N(bn.running_mean), N(bn.running_var)
    ref_e = (X4 - rm[None, :, None, None]) / np.sqrt(rv[None, :, None, None] + 1e-5) * w + b
    np.testing.assert_allclose(N(ye), ref_e, **tol(device))
    assert int(bn.num_batches_tracked.item()) == 1


def test_batch_norm1d_cumulative_average_and_no_tracking(device):
    bn = _to(nn.BatchNorm1d(3, momentum=None, affine=False), device)
    a, b = rng().standard_normal((5, 3)), rng(2).standard_normal((5, 3))
    bn(T(a, device))
    bn(T(b, device))
    np.testing.assert_allclose(N(bn.running_mean), (a.mean(0) + b.mean(0)) / 2, **tol(device))
    free = _to(nn.BatchNorm1d(3, track_running_stats=False), device).eval()
    np.testing.assert_allclose(N(free(T(a, device))), np_layer_norm(a, (0,)), **tol(device))
    with pytest.raises(ValueError, match="expected 2D or 3D"):
        bn(T(X4, device))


def test_layer_norm_and_group_norm(device):
    ln = _to(nn.LayerNorm((5,)), device)
    with ot.no_grad():
        ln.weight.copy_(T(np.arange(1.0, 6.0), device))
    x = T(X4, device)
    np.testing.assert_allclose(N(ln(x)), np_layer_norm(X4, (3,)) * np.arange(1.0, 6.0),
                               **tol(device))
    ln2 = _to(nn.LayerNorm([6, 5], elementwise_affine=False), device)
    np.testing.assert_allclose(N(ln2(x)), np_layer_norm(X4, (2, 3)), **tol(device))
    gn = _to(nn.GroupNorm(2, 4), device)
    g = X4.reshape(2, 2, -1)
    ref = np_layer_norm(g, (2,)).reshape(X4.shape)
    np.testing.assert_allclose(N(gn(x)), ref, **tol(device))
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNorm(3, 4)


def test_dropout(device):
    ot.manual_seed(0)
    d = nn.Dropout(0.25)
    x = ot.ones(4000, device=device)
    y = N(d(x))
    kept = y != 0
    assert 0.70 < kept.mean() < 0.80
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    ot.manual_seed(0)
    np.testing.assert_array_equal(N(d(x)), y)              # reproducible with the seed
    d.eval()
    assert d(x) is x
    assert N(nn.Dropout(1.0)(x)).sum() == 0
    with pytest.raises(ValueError):
        nn.Dropout(1.5)


def test_embedding(device):
    emb = _to(nn.Embedding(6, 3, padding_idx=1), device)
    assert np.all(N(emb.weight)[1] == 0)
    idx = np.array([[0, 1, 5], [5, 5, 2]])
    out = emb(T(idx, device))
    np.testing.assert_allclose(N(out), N(emb.weight)[idx], **tol(device))
    out.sum().backward()
    counts = np.bincount(idx.ravel(), minlength=6)[:, None] * np.ones((1, 3))
    counts[1] = 0                                          # padding row gets no gradient
    np.testing.assert_allclose(N(emb.weight.grad), counts, **tol(device))
    pre = nn.Embedding.from_pretrained(T(np.eye(3), device))
    assert not pre.weight.requires_grad


ACTIVATIONS = [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.LeakyReLU(0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    (nn.GELU(), lambda x: 0.5 * x * (1 + np.vectorize(__import__("math").erf)(x / np.sqrt(2)))),
    (nn.GELU("tanh"), lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) *
                                                       (x + 0.044715 * x ** 3)))),
    (nn.SiLU(), lambda x: x / (1 + np.exp(-x))),
    (nn.Tanh(), np.tanh),
    (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (nn.Softplus(), lambda x: np.log1p(np.exp(x))),
    (nn.ELU(), lambda x: np.where(x > 0, x, np.expm1(x))),
    (nn.Hardtanh(), lambda x: np.clip(x, -1, 1)),
    (nn.LogSigmoid(), lambda x: -np.log1p(np.exp(-x))),
    (nn.Softmax(dim=1), lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True)),
    (nn.LogSoftmax(dim=1), lambda x: x - np.log(np.exp(x).sum(1, keepdims=True))),
]


@pytest.mark.parametrize("module,ref", ACTIVATIONS, ids=[type(m).__name__ + str(i)
                                                        for i, (m, _) in enumerate(ACTIVATIONS)])
def test_activations(device, module, ref):
    x = rng().standard_normal((3, 4)) * 3
    np.testing.assert_allclose(N(module(T(x, device))), ref(x), **tol(device))


def test_inplace_relu_and_flatten(device):
    x = T(X4, device)
    y = nn.ReLU(inplace=True)(x)
    assert y is x and N(x).min() >= 0
    assert nn.Flatten()(x).shape == (2, 120) and nn.Flatten(0, 2)(x).shape == (48, 5)
    assert nn.Unflatten(1, (2, 2))(x).shape == (2, 2, 2, 6, 5)
    assert nn.Identity(3, foo=1)(x) is x


def test_init_functions(device):
    ot.manual_seed(0)
    w = ot.empty(120, 50, device=device)
    nn.init.xavier_uniform_(w)
    assert np.abs(N(w)).max() <= np.sqrt(6 / 170) + 1e-6
    nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(N(w).std() / np.sqrt(2 / 120) - 1) < 0.05
    nn.init.xavier_normal_(w, gain=2.0)
    assert abs(N(w).std() / (2 * np.sqrt(2 / 170)) - 1) < 0.05
    nn.init.kaiming_uniform_(w, a=0)
    assert np.abs(N(w)).max() <= np.sqrt(6 / 50) + 1e-6
    nn.init.trunc_normal_(w, std=2.0, a=-1.0, b=1.5)
    assert N(w).min() >= -1.0 and N(w).max() <= 1.5
    nn.init.normal_(w, 3.0, 0.5)
    assert abs(N(w).mean() - 3) < 0.02
    nn.init.uniform_(w, -2, -1)
    assert N(w).max() < -1 + 1e-6 and N(w).min() >= -2
    nn.init.zeros_(w)
    assert N(w).max() == 0
    nn.init.ones_(w)
    nn.init.constant_(w, 0.5)
    assert N(w).min() == 0.5
    nn.init.eye_(w)
    np.testing.assert_array_equal(N(w), np.eye(120, 50))
    assert nn.init.calculate_gain("relu") == pytest.approx(np.sqrt(2))
    assert nn.init.calculate_gain("leaky_relu", 0.2) == pytest.approx(np.sqrt(2 / 1.04))
    g = ot.Generator().manual_seed(5)
    a = nn.init.normal_(ot.empty(5), generator=g).tolist()
    b = nn.init.normal_(ot.empty(5), generator=ot.Generator().manual_seed(5)).tolist()
    assert a == b
    p = nn.Parameter(ot.zeros(3, device=device))
    nn.init.uniform_(p)                                   # works on leaves requiring grad
    assert p.requires_grad and p.grad_fn is None


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (3, 2, 2)])
def test_init_orthogonal(device, shape):
    from omnitensor.nn import init
    w = ot.empty(*shape, device=device)
    assert init.orthogonal_(w, gain=2.0) is w
    m = w.reshape(shape[0], -1).cpu().numpy().astype(np.float64)
    gram = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(gram, 4 * np.eye(gram.shape[0]), atol=1e-5)
    ot.manual_seed(3)
    a = init.orthogonal_(ot.empty(*shape, device=device))
    ot.manual_seed(3)
    b = init.orthogonal_(ot.empty(*shape, device=device))
    assert a.tolist() == b.tolist()  # seeded like every other initializer
    with pytest.raises(ValueError, match="2 or more dimensions"):
        init.orthogonal_(ot.empty(3, device=device))


def test_batch_norm_of_a_1d_input_is_torchs(device):
    """A 1-D input has no channel dim: an empty one with empty statistics normalizes to an
    empty result (training or not), as torch's; a non-empty one is refused, as torch does."""
    torch = pytest.importorskip("torch")
    F = ot.nn.functional
    empty = ot.zeros(0, device=device)
    for training in (True, False):
        out = F.batch_norm(empty, ot.zeros(0, device=device), ot.ones(0, device=device),
                           training=training)
        want = torch.nn.functional.batch_norm(torch.zeros(0), torch.zeros(0), torch.ones(0),
                                              training=training)
        assert tuple(out.shape) == tuple(want.shape) == (0,)
        with pytest.raises(ValueError):
            F.batch_norm(ot.tensor(np.ones(3, np.float32), device=device),
                         ot.zeros(3, device=device), ot.ones(3, device=device),
                         training=training)
