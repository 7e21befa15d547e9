"""Functional ops and losses against NumPy references, on every device."""
import math

import numpy as np
import pytest
from nn_helpers import N, T, fdtype, np_log_softmax, np_softmax, rng, tol

import omnitensor as ot
import omnitensor.nn.functional as F
from omnitensor import nn

LOGITS = rng(4).standard_normal((5, 4)) * 2
TARGET = np.array([0, 3, 1, -100, 2])
W = np.array([0.5, 2.0, 1.0, 1.5])


# ------------------------------------------------------------------- softmax family
def test_softmax_log_softmax_values_and_stability(device):
    x = rng().standard_normal((3, 4))
    np.testing.assert_allclose(N(F.softmax(T(x, device), dim=1)), np_softmax(x, 1), **tol(device))
    np.testing.assert_allclose(N(F.log_softmax(T(x, device), dim=0)), np_log_softmax(x, 0),
                               **tol(device))
    big = np.array([[1000.0, 0.0, -1000.0], [-1e4, -1e4, -1e4]])
    ls = N(F.log_softmax(T(big, device), dim=1))
    assert np.all(np.isfinite(ls))
    np.testing.assert_allclose(ls, np_log_softmax(big, 1), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(N(F.softmax(T(big, device), 1)).sum(1), [1, 1], rtol=1e-6)
    assert F.softmax(T(x, device), 1, dtype=ot.float32).dtype is ot.float32
    with pytest.warns(UserWarning, match="Implicit dimension"):
        F.softmax(T(x, device))
    np.testing.assert_allclose(N(F.softmin(T(x, device), 1)), np_softmax(-x, 1), **tol(device))


def test_one_hot(device):
    t = T(np.array([[0, 2], [1, 0]]), device)
    oh = F.one_hot(t)
    assert oh.dtype is ot.int64 and oh.shape == (2, 2, 3)
    np.testing.assert_array_equal(N(oh), np.eye(3, dtype=np.int64)[N(t)])
    assert F.one_hot(t, 5).shape == (2, 2, 5)
    with pytest.raises(ValueError):
        F.one_hot(t, 2)
    with pytest.raises(TypeError):
        F.one_hot(T(np.ones(2), device))


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_modes(device, mode):
    x = rng().standard_normal((2, 3, 4))
    np_mode = {"replicate": "edge", "circular": "wrap"}.get(mode, mode)
    got = F.pad(T(x, device), (1, 2, 2, 1), mode=mode)
    ref = np.pad(x, ((0, 0), (2, 1), (1, 2)), mode=np_mode)
    np.testing.assert_allclose(N(got), ref, **tol(device))
    if mode == "constant":
        np.testing.assert_allclose(N(F.pad(T(x, device), (-1, 1), value=7.0)),
                                   np.pad(x[..., 1:], ((0, 0), (0, 0), (0, 1)),
                                          constant_values=7.0), **tol(device))


def test_unfold_fold_are_adjoint(device):
    x = rng().standard_normal((1, 2, 5, 4))
    cols = N(F.unfold(T(x, device), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)))
    y = rng(2).standard_normal(cols.shape)
    back = N(F.fold(T(y, device), (5, 4), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)))
    # <unfold(x), y> == <x, fold(y)>
    assert np.vdot(cols, y) == pytest.approx(np.vdot(x, back), rel=1e-6)
    # unfold's layout: channel, then kernel row, then kernel column (torch)
    c1 = N(F.unfold(T(x, device), 2))
    np.testing.assert_allclose(c1[0, :, 0], [x[0, c, i, j] for c in range(2) for i in range(2)
                                             for j in range(2)], **tol(device))


def test_scaled_dot_product_attention(device):
    r = rng()
    q, k, v = r.standard_normal((2, 3, 4)), r.standard_normal((2, 5, 4)), r.standard_normal(
        (2, 5, 4))
    mask = r.random((3, 5)) > 0.3
    mask[:, 0] = True
    scores = q @ k.transpose(0, 2, 1) / 2.0
    ref = np_softmax(np.where(mask, scores, -np.inf), -1) @ v
    got = F.scaled_dot_product_attention(T(q, device), T(k, device), T(v, device),
                                         attn_mask=T(mask, device))
    np.testing.assert_allclose(N(got), ref, **tol(device))
    add = r.standard_normal((3, 5))
    got = F.scaled_dot_product_attention(T(q, device), T(k, device), T(v, device),
                                         attn_mask=T(add, device), scale=0.3)
    np.testing.assert_allclose(N(got), np_softmax(q @ k.transpose(0, 2, 1) * 0.3 + add, -1) @ v,
                               **tol(device))
    kk = r.standard_normal((2, 3, 4))
    causal = np.tril(np.ones((3, 3), bool))
    ref = np_softmax(np.where(causal, q @ kk.transpose(0, 2, 1) / 2.0, -np.inf), -1) @ kk
    got = F.scaled_dot_product_attention(T(q, device), T(kk, device), T(kk, device),
                                         is_causal=True)
    np.testing.assert_allclose(N(got), ref, **tol(device))


def test_misc_activations(device):
    x = rng().standard_normal((2, 6)) * 3
    np.testing.assert_allclose(N(F.glu(T(x, device))), x[:, :3] / (1 + np.exp(-x[:, 3:])),
                               **tol(device))
    np.testing.assert_allclose(N(F.relu6(T(x, device))), np.clip(x, 0, 6), **tol(device))
    np.testing.assert_allclose(N(F.hardswish(T(x, device))), x * np.clip(x + 3, 0, 6) / 6,
                               **tol(device))
    np.testing.assert_allclose(N(F.mish(T(x, device))), x * np.tanh(np.log1p(np.exp(x))),
                               **tol(device))
    np.testing.assert_allclose(N(F.normalize(T(x, device))),
                               x / np.linalg.norm(x, axis=1, keepdims=True), **tol(device))


# ------------------------------------------------------------------------------ losses
def _np_ce(x, t, weight=None, ignore=-100, smoothing=0.0, reduction="mean"):
    c = x.shape[1]
    lp = np_log_softmax(x, 1)
    w = np.ones(c) if weight is None else weight
    valid = t != ignore
    ts = np.where(valid, t, 0)
    wt = w[ts] * valid
    nll = -lp[np.arange(len(t)), ts] * wt
    smooth = -(lp * w).sum(1) * valid
    loss = (1 - smoothing) * nll + smoothing / c * smooth
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / wt.sum()


@pytest.mark.parametrize("kw", [dict(), dict(reduction="sum"), dict(reduction="none"),
                                dict(label_smoothing=0.2), dict(weight=True),
                                dict(weight=True, label_smoothing=0.1, reduction="sum")])
def test_cross_entropy_class_indices(device, kw):
    kw = dict(kw)
    weight = W if kw.pop("weight", False) else None
    got = F.cross_entropy(T(LOGITS, device), T(TARGET, device),
                          weight=None if weight is None else T(weight, device), **kw)
    ref = _np_ce(LOGITS, TARGET, weight, -100, kw.get("label_smoothing", 0.0),
                 kw.get("reduction", "mean"))
    np.testing.assert_allclose(N(got), ref, **tol(device))


def test_cross_entropy_gradient_closed_form(device):
    x = T(LOGITS, device, rg=True)
    F.cross_entropy(x, T(TARGET, device)).backward()
    p = np_softmax(LOGITS, 1)
    valid = TARGET != -100
    onehot = np.eye(4)[np.where(valid, TARGET, 0)] * valid[:, None]
    np.testing.assert_allclose(N(x.grad), (p - onehot) * valid[:, None] / valid.sum(),
                               **tol(device))


def test_cross_entropy_ignore_index_inside_range_and_kdim(device):
    got = F.cross_entropy(T(LOGITS, device), T(np.array([0, 3, 1, 1, 2]), device),
                          ignore_index=1)
    np.testing.assert_allclose(N(got), _np_ce(LOGITS, np.array([0, 3, 1, 1, 2]), ignore=1),
                               **tol(device))
    x3 = rng().standard_normal((2, 4, 3))
    t3 = np.array([[0, 1, 3], [2, -100, 1]])
    flat = x3.transpose(0, 2, 1).reshape(-1, 4)
    np.testing.assert_allclose(N(F.cross_entropy(T(x3, device), T(t3, device))),
                               _np_ce(flat, t3.ravel()), **tol(device))
    none = F.cross_entropy(T(x3, device), T(t3, device), reduction="none")
    assert none.shape == (2, 3)


def test_cross_entropy_probabilities(device):
    probs = np_softmax(rng(3).standard_normal((5, 4)), 1)
    got = F.cross_entropy(T(LOGITS, device), T(probs, device), weight=T(W, device),
                          label_smoothing=0.1)
    sm = probs * 0.9 + 0.1 / 4
    ref = -(np_log_softmax(LOGITS, 1) * sm * W).sum(1).mean()
    np.testing.assert_allclose(N(got), ref, **tol(device))


def test_cross_entropy_errors(device):
    with pytest.raises(IndexError, match="out of bounds"):
        F.cross_entropy(T(LOGITS, device), T(np.array([0, 9, 1, 1, 2]), device))
    with pytest.raises(ValueError, match="batch_size"):
        F.cross_entropy(T(LOGITS, device), T(np.array([0, 1]), device))
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(T(LOGITS, device), T(TARGET, device), reduction="avg")


def test_nll_loss(device):
    lp = np_log_softmax(LOGITS, 1)
    got = F.nll_loss(T(lp, device), T(TARGET, device), weight=T(W, device))
    valid = TARGET != -100
    ts = np.where(valid, TARGET, 0)
    ref = -(lp[np.arange(5), ts] * W[ts] * valid).sum() / (W[ts] * valid).sum()
    np.testing.assert_allclose(N(got), ref, **tol(device))
    m = nn.NLLLoss(reduction="sum")
    np.testing.assert_allclose(N(m(T(lp, device), T(TARGET, device))),
                               -(lp[np.arange(5), ts] * valid).sum(), **tol(device))


def test_regression_losses(device):
    a, b = rng().standard_normal((3, 4)), rng(2).standard_normal((3, 4))
    ta, tb = T(a, device), T(b, device)
    d = a - b
    np.testing.assert_allclose(N(nn.MSELoss()(ta, tb)), (d ** 2).mean(), **tol(device))
    np.testing.assert_allclose(N(nn.MSELoss(reduction="sum")(ta, tb)), (d ** 2).sum(),
                               **tol(device))
    np.testing.assert_allclose(N(nn.L1Loss(reduction="none")(ta, tb)), np.abs(d), **tol(device))
    ad = np.abs(d)
    hub = np.where(ad < 0.7, 0.5 * d ** 2, 0.7 * (ad - 0.35))
    np.testing.assert_allclose(N(nn.HuberLoss(delta=0.7)(ta, tb)), hub.mean(), **tol(device))
    sl1 = np.where(ad < 0.5, 0.5 * d ** 2 / 0.5, ad - 0.25)
    np.testing.assert_allclose(N(nn.SmoothL1Loss(beta=0.5)(ta, tb)), sl1.mean(), **tol(device))


def test_binary_losses(device):
    p = rng().uniform(0.05, 0.95, (3, 4))
    y = (rng(2).random((3, 4)) > 0.5).astype(float)
    ref = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    np.testing.assert_allclose(N(nn.BCELoss()(T(p, device), T(y, device))), ref.mean(),
                               **tol(device))
    edge = N(F.binary_cross_entropy(T(np.array([0.0, 1.0]), device),
                                    T(np.array([1.0, 0.0]), device), reduction="none"))
    np.testing.assert_allclose(edge, [100.0, 100.0])        # logs clamped at -100, as torch
    x = rng(3).standard_normal((3, 4)) * 30                 # large logits: no overflow
    sig = 1 / (1 + np.exp(-x))
    pw = np.array([1.0, 2.0, 0.5, 3.0])
    ref = -(pw * y * np.log(np.clip(sig, 1e-300, 1)) + (1 - y) * np.log(np.clip(1 - sig,
                                                                                1e-300, 1)))
    ref = np.where(np.isfinite(ref), ref, 0)
    stable = (1 - y) * x + (1 + (pw - 1) * y) * (np.log1p(np.exp(-np.abs(x))) +
                                                  np.maximum(-x, 0))
    got = nn.BCEWithLogitsLoss(pos_weight=T(pw, device), reduction="none")(T(x, device),
                                                                           T(y, device))
    np.testing.assert_allclose(N(got), stable, **tol(device))
    assert np.all(np.isfinite(N(got)))


def test_kl_div(device):
    lp = np_log_softmax(LOGITS, 1)
    q = np_softmax(rng(2).standard_normal((5, 4)), 1)
    ref = (q * (np.log(q) - lp)).sum() / 5
    np.testing.assert_allclose(N(F.kl_div(T(lp, device), T(q, device), reduction="batchmean")),
                               ref, **tol(device))
    np.testing.assert_allclose(N(nn.KLDivLoss(reduction="sum", log_target=True)(
        T(lp, device), T(np.log(q), device))), (q * (np.log(q) - lp)).sum(), **tol(device))


def test_loss_modules_match_functional(device):
    x, t = T(LOGITS, device), T(TARGET, device)
    np.testing.assert_allclose(N(nn.CrossEntropyLoss(weight=T(W, device), label_smoothing=0.1)(
        x, t)), _np_ce(LOGITS, TARGET, W, smoothing=0.1), **tol(device))
    m = nn.CrossEntropyLoss(ignore_index=3)
    np.testing.assert_allclose(N(m(x, T(np.array([0, 3, 1, 2, 2]), device))),
                               _np_ce(LOGITS, np.array([0, 3, 1, 2, 2]), ignore=3),
                               **tol(device))
    assert "weight" in nn.CrossEntropyLoss(weight=T(W, device)).state_dict()


def test_dtype_follows_input(device):
    x = ot.randn(4, 3, device=device)
    assert F.cross_entropy(x, ot.tensor([0, 1, 2, 0], device=device)).dtype is ot.float32
    if fdtype(device) is ot.float64:
        assert F.linear(x.double(), ot.ones(2, 3, device=device, dtype=ot.float64)).dtype \
            is ot.float64
    assert math.isfinite(float(F.mse_loss(x, x * 2)))


def test_losses_at_the_edges_give_torch_gradients(device):
    """Saturated BCE probabilities and fully ignored batches: finite (or zero) gradients
    where a naive formula gives NaN and poisons the weights."""
    p = ot.tensor([0.0, 1.0, 0.5], requires_grad=True, device=device)
    loss = F.binary_cross_entropy(p, ot.tensor([1.0, 0.0, 1.0], device=device))
    loss.backward()
    assert abs(loss.item() - 66.8977) < 1e-3
    g = p.grad.cpu().numpy()
    np.testing.assert_allclose(g, [-1 / 3e-12, 1 / 3e-12, -2 / 3], rtol=1e-5)
    p = ot.tensor([0.0, 1.0], requires_grad=True, device=device)
    F.binary_cross_entropy(p, ot.tensor([0.0, 1.0], device=device)).backward()
    assert p.grad.tolist() == [0.0, 0.0]
    ignored = ot.tensor([-100, -100], device=device)
    for loss_fn in (lambda x: F.cross_entropy(x, ignored),
                    lambda x: F.cross_entropy(x, ignored, label_smoothing=0.1),
                    lambda x: F.cross_entropy(x, ignored, weight=ot.ones(3, device=device)),
                    lambda x: F.nll_loss(F.log_softmax(x, 1), ignored)):
        x = ot.randn(2, 3, requires_grad=True, device=device)
        loss = loss_fn(x)
        loss.backward()
        assert np.isnan(loss.item()) and x.grad.tolist() == [[0.0] * 3] * 2


def test_bce_gradcheck_with_weight(device):
    if not ot.device(device).backend.device_info(ot.device(device).index).get("fp64", True):
        pytest.skip("no float64")
    p = ot.tensor([0.3, 0.6, 0.9], dtype=ot.float64, requires_grad=True, device=device)
    y = ot.tensor([0.2, 0.7, 1.0], dtype=ot.float64, requires_grad=True, device=device)
    w = ot.tensor([1.0, 2.0, 0.5], dtype=ot.float64, device=device)
    assert ot.autograd.gradcheck(lambda a, b: F.binary_cross_entropy(a, b, weight=w), (p, y))
    assert ot.autograd.gradgradcheck(lambda a, b: F.binary_cross_entropy(a, b), (p, y))


def test_embedding_max_norm_renormalises_used_rows_like_torch(device):
    torch = pytest.importorskip("torch", reason="compared with PyTorch")
    w0 = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0], [0.0, 2.0]], np.float32)
    idx = np.array([[0, 1], [0, 3]])
    for norm_type in (2.0, 1.0):
        w, tw = ot.tensor(w0, device=device), torch.tensor(w0)
        out = F.embedding(ot.tensor(idx, device=device), w, max_norm=1.5, norm_type=norm_type)
        tout = torch.nn.functional.embedding(torch.tensor(idx), tw, max_norm=1.5,
                                             norm_type=norm_type)
        np.testing.assert_allclose(w.cpu().numpy(), tw.numpy(), rtol=1e-6)  # in place
        np.testing.assert_allclose(out.cpu().numpy(), tout.numpy(), rtol=1e-6)
    emb = nn.Embedding(4, 2, max_norm=1.0).to(device)
    emb(ot.tensor([1, 2], device=device)).sum().backward()
    assert emb.weight.grad is not None


@pytest.mark.parametrize("name", ["hardswish", "hardsigmoid"])
def test_hard_activation_gradients_at_the_corners_are_torchs(name, device):
    """At -3 and 3 (and at NaN, +-inf) the gradients are torch's piecewise ones, not a
    clamp's (which passes the inner slope at the corners)."""
    torch = pytest.importorskip("torch")
    values = [-4.0, -3.0, -2.0, 0.0, 2.9, 3.0, 5.0, float("nan"), float("inf"), -float("inf")]
    xt = torch.tensor(values, requires_grad=True)
    getattr(torch.nn.functional, name)(xt).sum().backward()
    xo = ot.tensor(values, requires_grad=True, device=device)
    out = getattr(F, name)(xo)
    out.sum().backward()
    np.testing.assert_allclose(xo.grad.cpu().numpy(), xt.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(out.detach().cpu().numpy(),
                               getattr(torch.nn.functional, name)(xt).detach().numpy(),
                               rtol=1e-6)
    x64 = ot.tensor([-3.5, -1.0, 0.5, 2.0, 3.5], dtype=ot.float64, requires_grad=True)
    assert ot.autograd.gradgradcheck(getattr(F, name), (x64,))


def test_local_response_norm_of_integers_averages_in_integers_as_torch(device):
    """torch pools an integer input's squares in its integer dtype (the mean truncates),
    then scales in float."""
    torch = pytest.importorskip("torch")
    x = np.arange(2 * 5 * 3, dtype=np.int64).reshape(2, 5, 3) % 7
    expected = torch.nn.functional.local_response_norm(torch.tensor(x), 3, alpha=0.5)
    actual = F.local_response_norm(ot.tensor(x, device=device), 3, alpha=0.5)
    assert str(actual.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    np.testing.assert_allclose(actual.cpu().numpy(), expected.numpy(), rtol=1e-6)
