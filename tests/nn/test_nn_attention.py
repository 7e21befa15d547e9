"""MultiheadAttention and TransformerEncoderLayer against NumPy references (and PyTorch
when installed)."""
import numpy as np
import pytest
from nn_helpers import N, T, fdtype, np_layer_norm, np_mha, rng, tol

import omnitensor as ot
from omnitensor import nn


def _mha(device, **kw):
    return nn.MultiheadAttention(8, 2, **kw).to(device, fdtype(device))


def test_mha_self_attention_with_masks(device):
    m = _mha(device)
    x = rng().standard_normal((3, 2, 8))                  # (L, N, E)
    kpm = np.zeros((2, 3), bool)
    kpm[1, 2] = True
    am = np.triu(np.ones((3, 3), bool), 1)
    out, w = m(T(x, device), T(x, device), T(x, device), key_padding_mask=T(kpm, device),
               attn_mask=T(am, device))
    add = np.where(am, -np.inf, 0.0)[None] + np.repeat(np.where(kpm, -np.inf, 0.0), 2, 0)[:, None]
    ref_out, ref_w = np_mha(x, x, x, N(m.in_proj_weight), N(m.in_proj_bias),
                            N(m.out_proj.weight), N(m.out_proj.bias), 2, add)
    np.testing.assert_allclose(N(out), ref_out, **tol(device))
    np.testing.assert_allclose(N(w), ref_w, **tol(device))
    out.sum().backward()
    assert m.in_proj_weight.grad is not None and m.out_proj.weight.grad is not None


def test_mha_batch_first_cross_attention_and_options(device):
    m = _mha(device, batch_first=True)
    q, kv = rng().standard_normal((2, 3, 8)), rng(2).standard_normal((2, 4, 8))
    out, w = m(T(q, device), T(kv, device), T(kv, device), average_attn_weights=False)
    ref_out, _ = np_mha(q.transpose(1, 0, 2), kv.transpose(1, 0, 2), kv.transpose(1, 0, 2),
                        N(m.in_proj_weight), N(m.in_proj_bias), N(m.out_proj.weight),
                        N(m.out_proj.bias), 2)
    np.testing.assert_allclose(N(out), ref_out.transpose(1, 0, 2), **tol(device))
    assert w.shape == (2, 2, 3, 4)
    assert m(T(q, device), T(kv, device), T(kv, device), need_weights=False)[1] is None
    sep = _mha(device, kdim=5, vdim=3)
    assert sep.in_proj_weight is None and sep.k_proj_weight.shape == (8, 5)
    o, _ = sep(T(q[0][:, None], device), T(rng().standard_normal((4, 1, 5)), device),
               T(rng().standard_normal((4, 1, 3)), device))
    assert o.shape == (3, 1, 8)
    un, uw = m(T(q[0], device), T(kv[0], device), T(kv[0], device))   # unbatched (L, E)
    assert un.shape == (3, 8) and uw.shape == (3, 4)


def _np_encoder_layer(layer, x, norm_first):
    p = {k: N(v) for k, v in layer.state_dict().items()}

    def sa(h):
        return np_mha(h, h, h, p["self_attn.in_proj_weight"], p["self_attn.in_proj_bias"],
                      p["self_attn.out_proj.weight"], p["self_attn.out_proj.bias"], 2)[0]

    def ff(h):
        return np.maximum(h @ p["linear1.weight"].T + p["linear1.bias"], 0) @ \
            p["linear2.weight"].T + p["linear2.bias"]

    def ln(h, i):
        return np_layer_norm(h, (2,)) * p[f"norm{i}.weight"] + p[f"norm{i}.bias"]
    if norm_first:
        x = x + sa(ln(x, 1))
        return x + ff(ln(x, 2))
    x = ln(x + sa(x), 1)
    return ln(x + ff(x), 2)


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layer(device, norm_first):
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, norm_first=norm_first)
    layer = layer.to(device, fdtype(device)).eval()          # eval: dropout off
    x = rng().standard_normal((3, 2, 8))
    np.testing.assert_allclose(N(layer(T(x, device))), _np_encoder_layer(layer, x, norm_first),
                               **tol(device))
    layer.train()
    xt = T(x, device, rg=True)
    layer(xt).sum().backward()
    assert xt.grad is not None and all(p.grad is not None for p in layer.parameters())


def test_transformer_encoder_stack(device):
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                           batch_first=True), 2,
                                norm=nn.LayerNorm(8)).to(device)
    l0, l1 = enc.layers
    assert l0.linear1.weight is not l1.linear1.weight       # independent deep copies
    y = enc(ot.randn(2, 3, 8, device=device),
            src_key_padding_mask=ot.tensor([[False, False, True], [False, False, False]],
                                           device=device))
    assert y.shape == (2, 3, 8) and np.all(np.isfinite(N(y)))
    assert len(enc.state_dict()) == 2 * 12 + 2


def test_attention_matches_torch():
    torch = pytest.importorskip("torch")
    tl = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu",
                                          batch_first=True).double().eval()
    ol = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu",
                                    batch_first=True).double().eval()
    assert list(tl.state_dict()) == list(ol.state_dict())
    ol.load_state_dict({k: ot.tensor(v.detach().numpy()) for k, v in tl.state_dict().items()})
    x = rng().standard_normal((2, 4, 8))
    kpm = np.zeros((2, 4), bool)
    kpm[0, 3] = True
    xt, xo = torch.tensor(x, requires_grad=True), ot.tensor(x, requires_grad=True)
    a = tl(xt, src_key_padding_mask=torch.tensor(kpm))
    b = ol(xo, src_key_padding_mask=ot.tensor(kpm))
    np.testing.assert_allclose(N(b), a.detach().numpy(), rtol=1e-9, atol=1e-10)
    a.pow(2).sum().backward()
    b.pow(2).sum().backward()
    np.testing.assert_allclose(N(xo.grad), xt.grad.numpy(), rtol=1e-8, atol=1e-9)


def test_mha_forward_names_a_missing_projection_weight(device):
    F = nn.functional
    x = ot.ones((3, 2, 4), device=device)
    w_out = ot.ones((4, 4), device=device)
    with pytest.raises(ValueError, match="in_proj_weight is None"):
        F.multi_head_attention_forward(x, x, x, 4, 2, None, None, None, None, False, 0.0,
                                       w_out, None)
    with pytest.raises(ValueError, match="q_proj_weight, k_proj_weight or v_proj_weight"):
        F.multi_head_attention_forward(x, x, x, 4, 2, None, None, None, None, False, 0.0,
                                       w_out, None, use_separate_proj_weight=True,
                                       q_proj_weight=ot.ones((4, 4), device=device))
