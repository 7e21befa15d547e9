"""The same model, weights and inputs in omnitensor and PyTorch (CPU, float64): outputs,
input gradients and parameter gradients agree. Skipped where torch is not installed (CI);
the NumPy-reference tests cover the same layers everywhere."""
import numpy as np
import pytest

import omnitensor as ot
from omnitensor import nn

torch = pytest.importorskip("torch")


def _pair(build, x_shape, seed=0, train=True):
    tm, om = build(torch.nn).double(), build(nn).double()
    om.load_state_dict({k: ot.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    tm.train(train), om.train(train)
    x = np.random.default_rng(seed).standard_normal(x_shape)
    return tm, om, x


MODELS = {
    "cnn": (lambda m: m.Sequential(m.Conv2d(2, 4, 3, padding=1), m.BatchNorm2d(4), m.ReLU(),
                                   m.MaxPool2d(2), m.Conv2d(4, 4, 3, stride=2, groups=2),
                                   m.GELU(), m.AdaptiveAvgPool2d(1), m.Flatten(),
                                   m.Linear(4, 3)), (2, 2, 8, 8)),
    "deconv": (lambda m: m.Sequential(m.ConvTranspose2d(2, 3, 3, stride=2, padding=1,
                                                        output_padding=1),
                                      m.GroupNorm(3, 3), m.SiLU(),
                                      m.AvgPool2d(3, 2, 1, ceil_mode=True)), (2, 2, 4, 4)),
    "mlp": (lambda m: m.Sequential(m.Linear(6, 5), m.LayerNorm(5), m.LeakyReLU(0.1),
                                   m.Linear(5, 4), m.Tanh(), m.Linear(4, 3), m.LogSoftmax(1)),
            (4, 6)),
    "seq1d": (lambda m: m.Sequential(m.Conv1d(3, 4, 3, padding=1, padding_mode="circular"),
                                     m.BatchNorm1d(4), m.Sigmoid()), (2, 3, 5)),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_forward_backward_matches_torch(name):
    build, shape = MODELS[name]
    tm, om, x = _pair(build, shape)
    xt, xo = torch.tensor(x, requires_grad=True), ot.tensor(x, requires_grad=True)
    yt, yo = tm(xt), om(xo)
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), rtol=1e-9, atol=1e-10)
    g = np.random.default_rng(1).standard_normal(yt.shape)
    yt.backward(torch.tensor(g))
    yo.backward(ot.tensor(g))
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-8, atol=1e-10)
    for (n, pt), (_, po) in zip(tm.named_parameters(), om.named_parameters()):
        np.testing.assert_allclose(po.grad.numpy(), pt.grad.numpy(), rtol=1e-8, atol=1e-10,
                                   err_msg=n)
    for (n, bt), (_, bo) in zip(tm.named_buffers(), om.named_buffers()):
        np.testing.assert_allclose(bo.numpy(), bt.numpy(), rtol=1e-9, atol=1e-12, err_msg=n)


@pytest.mark.parametrize("kw", [dict(), dict(label_smoothing=0.15), dict(reduction="sum"),
                                dict(ignore_index=2), dict(weight=[1.0, 2.0, 0.5])])
def test_cross_entropy_matches_torch(kw):
    kw = dict(kw)
    x = np.random.default_rng(0).standard_normal((6, 3))
    t = np.array([0, 2, 1, 2, -100, 0])
    if "ignore_index" in kw:   # -100 is then an out-of-range class: both raise
        with pytest.raises(IndexError):
            nn.functional.cross_entropy(ot.tensor(x), ot.tensor(t), **kw)
        t[4] = 1
    tw = kw.pop("weight", None)
    xt, xo = torch.tensor(x, requires_grad=True), ot.tensor(x, requires_grad=True)
    tw_t = None if tw is None else torch.tensor(tw, dtype=torch.float64)
    a = torch.nn.functional.cross_entropy(xt, torch.tensor(t), **kw, weight=tw_t)
    b = nn.functional.cross_entropy(xo, ot.tensor(t), **kw,
                                    weight=None if tw is None else ot.tensor(tw))
    a.backward()
    b.backward()
    np.testing.assert_allclose(b.item(), a.item(), rtol=1e-12)
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_default_initialization_statistics_match_torch():
    # same distributions (not the same numbers: the generators differ)
    torch.manual_seed(0)
    ot.manual_seed(0)
    for build in (lambda m: m.Linear(400, 300), lambda m: m.Conv2d(16, 32, 3),
                  lambda m: m.Embedding(300, 40), lambda m: m.Bilinear(20, 30, 40)):
        t, o = build(torch.nn), build(nn)
        for (n, pt), (_, po) in zip(t.named_parameters(), o.named_parameters()):
            a, b = pt.detach().numpy(), po.detach().numpy()
            if a.size >= 1000:                   # enough samples for a 5% std check
                assert abs(a.std() - b.std()) < 0.05 * a.std(), n
                assert abs(np.abs(a).max() - np.abs(b).max()) < 0.25 * np.abs(a).max(), n
            else:                                # biases: the same U(-1/sqrt(fan_in), ..)
                fan_in = np.prod(t.weight.shape[1:]) if not isinstance(t, torch.nn.Bilinear) \
                    else t.weight.shape[1]
                assert np.abs(b).max() <= 1 / np.sqrt(fan_in) + 1e-7, n


@pytest.mark.parametrize("shape", [(0, 4), (0, 4, 3, 3), (2, 0), (3, 4), (2, 3, 5)])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_cross_entropy_probability_targets_like_torch_incl_empty(device, shape, label_smoothing):
    """The mean over an empty batch is 0/0 = nan (torch), not 0; no classes is no error."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(shape), rng.random(shape)
    want = torch.nn.functional.cross_entropy(torch.tensor(a), torch.tensor(b),
                                             label_smoothing=label_smoothing)
    dt = ot.float64 if ot.device(device).supports_dtype(ot.float64) else ot.float32
    got = ot.nn.functional.cross_entropy(ot.tensor(a, dtype=dt, device=device),
                                         ot.tensor(b, dtype=dt, device=device),
                                         label_smoothing=label_smoothing)
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-5)
