"""The layers of issue 15 against torch on every device: N-d convolutions and pools,
adaptive max pools, unpooling, resampling (Upsample/interpolate, PixelShuffle),
nn.Transformer with its decoder, weight/spectral norm. Each compares forward, input and
parameter gradients and state_dict keys; the new functionals are gradchecked in float64."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import omnitensor as ot
import omnitensor.nn as nn
import omnitensor.nn.functional as F
from omnitensor.autograd import gradcheck, gradgradcheck

from nn_helpers import N, fdtype

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _tol(device):
    return dict(rtol=1e-7, atol=1e-9) if fdtype(device) is ot.float64 else \
        dict(rtol=2e-4, atol=2e-5)


def _tdt(device):
    return torch.float64 if fdtype(device) is ot.float64 else torch.float32


def _load(om, tm, device):
    """Copy torch's state into ``om`` (keys must match exactly)."""
    sd = tm.state_dict()
    assert sorted(om.state_dict().keys()) == sorted(sd.keys())
    om.load_state_dict({k: ot.tensor(v.detach().numpy(), device=device) for k, v in sd.items()})


def _compare(om, tm, inputs, device, out_index=None, grad_inputs=True):
    """Forward, then backward of a fixed random cotangent: outputs, input and parameter
    gradients equal torch's."""
    tdt = _tdt(device)
    tin = [torch.tensor(a, dtype=tdt if a.dtype.kind == "f" else None,
                        requires_grad=grad_inputs and a.dtype.kind == "f") for a in inputs]
    oin = [ot.tensor(a, dtype=fdtype(device) if a.dtype.kind == "f" else None, device=device,
                     requires_grad=grad_inputs and a.dtype.kind == "f") for a in inputs]
    yt, yo = tm(*tin), om(*oin)
    if out_index is not None:
        yt, yo = yt[out_index], yo[out_index]
    assert tuple(yo.shape) == tuple(yt.shape)
    np.testing.assert_allclose(N(yo), yt.detach().numpy(), **_tol(device))
    cot = np.random.default_rng(1).standard_normal(tuple(yt.shape))
    (yt * torch.tensor(cot, dtype=tdt)).sum().backward()
    (yo * ot.tensor(cot, dtype=fdtype(device), device=device)).sum().backward()
    for a, b in zip(oin, tin):
        if b.requires_grad:
            np.testing.assert_allclose(N(a.grad), b.grad.numpy(), **_tol(device))
    tp = dict(tm.named_parameters())
    for name, p in om.named_parameters():
        np.testing.assert_allclose(N(p.grad), tp[name].grad.numpy(), **_tol(device),
                                   err_msg=name)


def _pair(device, make):
    """The same layer built in torch (in the device's float dtype) and in omnitensor,
    omnitensor's loaded from torch's state dict."""
    torch.manual_seed(0)
    tm = make(torch.nn).to(_tdt(device))
    om = make(nn).to(device=device, dtype=fdtype(device))
    _load(om, tm, device)
    return om, tm


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# ----------------------------------------------------------------- convolutions
CONV_LAYERS = {
    "conv3d": (lambda m: m.Conv3d(4, 6, (3, 2, 3), stride=(2, 1, 1), padding=(1, 0, 2),
                                  dilation=(1, 2, 1), groups=2), (2, 4, 6, 7, 5)),
    "conv3d_same": (lambda m: m.Conv3d(2, 3, 3, padding="same", bias=False), (1, 2, 4, 5, 4)),
    "conv3d_reflect": (lambda m: m.Conv3d(2, 3, 3, padding=1, padding_mode="circular"),
                       (1, 2, 4, 4, 4)),
    "conv1d_same_even": (lambda m: m.Conv1d(3, 4, 4, padding="same", dilation=2), (2, 3, 11)),
    "convT1d": (lambda m: m.ConvTranspose1d(4, 6, 3, stride=3, padding=1, output_padding=2,
                                            groups=2), (2, 4, 7)),
    "convT3d": (lambda m: m.ConvTranspose3d(2, 4, (2, 3, 2), stride=(2, 1, 2), padding=(0, 1, 1),
                                            output_padding=(1, 0, 1), dilation=(1, 2, 1)),
                (2, 2, 3, 4, 3)),
    "convT2d_unbatched": (lambda m: m.ConvTranspose2d(3, 2, 3, stride=2), (3, 4, 5)),
}


@pytest.mark.parametrize("name", sorted(CONV_LAYERS))
def test_conv_layers_like_torch(device, name):
    make, shape = CONV_LAYERS[name]
    om, tm = _pair(device, make)
    _compare(om, tm, [_x(*shape)], device)


def test_conv_transpose_output_size(device):
    om, tm = _pair(device, lambda m: m.ConvTranspose3d(2, 3, 3, stride=2, padding=1))
    x = _x(1, 2, 3, 4, 3)
    yt = tm(torch.tensor(x, dtype=_tdt(device)), output_size=(6, 8, 6))
    yo = om(ot.tensor(x, dtype=fdtype(device), device=device), output_size=(6, 8, 6))
    assert tuple(yo.shape) == tuple(yt.shape) == (1, 3, 6, 8, 6)
    np.testing.assert_allclose(N(yo), yt.detach().numpy(), **_tol(device))


# ---------------------------------------------------------------------- pools
POOL_LAYERS = {
    "maxpool3d": (lambda m: m.MaxPool3d((2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0),
                                        dilation=(1, 1, 2), ceil_mode=True), (2, 3, 5, 7, 6)),
    "avgpool3d": (lambda m: m.AvgPool3d(3, stride=2, padding=1, count_include_pad=False,
                                        ceil_mode=True), (2, 3, 5, 6, 7)),
    "avgpool3d_div": (lambda m: m.AvgPool3d(2, divisor_override=3), (1, 2, 4, 4, 4)),
    "adaptive_avg3d": (lambda m: m.AdaptiveAvgPool3d((3, None, 2)), (2, 3, 7, 5, 5)),
    "adaptive_max1d": (lambda m: m.AdaptiveMaxPool1d(4), (2, 3, 10)),
    "adaptive_max2d_uneven": (lambda m: m.AdaptiveMaxPool2d((3, 4)), (2, 3, 7, 9)),
    "adaptive_max3d": (lambda m: m.AdaptiveMaxPool3d(2), (1, 2, 5, 3, 4)),
    "adaptive_max2d_unbatched": (lambda m: m.AdaptiveMaxPool2d(3), (2, 8, 7)),
    "lppool2d": (lambda m: m.LPPool2d(2, 2), (1, 2, 6, 6)),
    "lppool1d": (lambda m: m.LPPool1d(3, 3, stride=2), (2, 2, 9)),
}


@pytest.mark.parametrize("name", sorted(POOL_LAYERS))
def test_pool_layers_like_torch(device, name):
    make, shape = POOL_LAYERS[name]
    om, tm = _pair(device, make)
    x = _x(*shape)
    if name.startswith("lppool"):
        x = np.abs(x) + 0.1  # torch's lp_pool of negatives to an odd power is NaN-prone
    _compare(om, tm, [x], device)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_pool_indices_and_unpool(device, nd):
    shape = (2, 3) + (6, 5, 4)[:nd]
    x = _x(*shape)
    tp = getattr(torch.nn, f"MaxPool{nd}d")(2, return_indices=True)
    op = getattr(nn, f"MaxPool{nd}d")(2, return_indices=True)
    yt, it = tp(torch.tensor(x))
    yo, io = op(ot.tensor(x, device=device, dtype=fdtype(device)))
    np.testing.assert_array_equal(N(io), it.numpy())
    tu = getattr(torch.nn, f"MaxUnpool{nd}d")(2)
    ou = getattr(nn, f"MaxUnpool{nd}d")(2)
    ut = tu(yt, it, output_size=shape)
    uo = ou(yo, io, output_size=shape)
    np.testing.assert_allclose(N(uo), ut.numpy(), **_tol(device))
    for nm in ("adaptive_max_pool", ):
        at, ait = getattr(TF, f"{nm}{nd}d")(torch.tensor(x), 3, return_indices=True)
        ao, aio = getattr(F, f"{nm}{nd}d")(ot.tensor(x, device=device), 3, return_indices=True)
        np.testing.assert_array_equal(N(aio), ait.numpy())


def test_max_pool_ties_route_to_first_maximum(device):
    x = np.maximum(_x(2, 3, 6, 6, 6), 0)  # ReLU zeros: ties in most windows
    tx = torch.tensor(x, requires_grad=True)
    ox = ot.tensor(x, device=device, dtype=fdtype(device), requires_grad=True)
    TF.max_pool3d(tx, 2).sum().backward()
    F.max_pool3d(ox, 2).sum().backward()
    np.testing.assert_allclose(N(ox.grad), tx.grad.numpy())


# ----------------------------------------------------------------- resampling
INTERP = [
    ("nearest", 1, dict(scale_factor=2.5)), ("nearest", 2, dict(size=(7, 3))),
    ("nearest", 3, dict(scale_factor=(1.5, 0.5, 2))),
    ("nearest-exact", 2, dict(scale_factor=1.7)),
    ("linear", 1, dict(size=9, align_corners=True)), ("linear", 1, dict(scale_factor=0.6)),
    ("bilinear", 2, dict(size=(9, 4))), ("bilinear", 2, dict(scale_factor=2, align_corners=True)),
    ("bilinear", 2, dict(scale_factor=1.3, recompute_scale_factor=True)),
    ("bicubic", 2, dict(size=(8, 11))), ("bicubic", 2, dict(scale_factor=0.7, align_corners=True)),
    ("trilinear", 3, dict(scale_factor=(2, 1.5, 0.8))),
    ("trilinear", 3, dict(size=(3, 6, 5), align_corners=True)),
    ("area", 2, dict(size=(3, 4))), ("area", 1, dict(scale_factor=0.5)),
    ("area", 3, dict(size=(2, 3, 5))),
]


@pytest.mark.parametrize("mode,nd,kw", INTERP, ids=[f"{m}-{nd}d-{i}" for i, (m, nd, _) in
                                                     enumerate(INTERP)])
def test_upsample_like_torch(device, mode, nd, kw):
    shape = (2, 3) + (5, 6, 4)[:nd]
    om, tm = _pair(device, lambda m: m.Upsample(mode=mode, **kw))
    _compare(om, tm, [_x(*shape)], device)


def test_interpolate_nearest_integer_and_errors(device):
    x = np.arange(24, dtype=np.uint8).reshape(1, 2, 3, 4)
    y = F.interpolate(ot.tensor(x, device=device), scale_factor=2)
    np.testing.assert_array_equal(N(y), TF.interpolate(torch.tensor(x), scale_factor=2).numpy())
    t = ot.ones(1, 2, 4, 4, device=device)
    with pytest.raises(ValueError):
        F.interpolate(t, size=3, scale_factor=2)
    with pytest.raises(ValueError):
        F.interpolate(t)
    with pytest.raises(ValueError):
        F.interpolate(t, scale_factor=2, mode="linear")  # 4-D input, 1-D mode
    with pytest.raises(ValueError):
        F.interpolate(t, scale_factor=2, mode="nearest", align_corners=True)
    with pytest.raises(ValueError):
        F.interpolate(t, scale_factor=2, mode="cubic")


@pytest.mark.parametrize("r", [2, 3])
def test_pixel_shuffle_like_torch(device, r):
    om, tm = _pair(device, lambda m: m.Sequential(m.PixelShuffle(r), m.PixelUnshuffle(r),
                                                  m.PixelShuffle(r)))
    _compare(om, tm, [_x(2, 1, 2 * r * r, 3, 4)], device)
    with pytest.raises(ValueError):
        F.pixel_shuffle(ot.ones(1, 3, 2, 2, device=device), 2)
    with pytest.raises(ValueError):
        F.pixel_unshuffle(ot.ones(1, 3, 3, 2, device=device), 2)


# ---------------------------------------------------------------- transformer
def _masks(device, t_len, s_len, batch):
    kpm = np.zeros((batch, s_len), bool)
    kpm[0, -2:] = True
    tkpm = np.zeros((batch, t_len), bool)
    tkpm[1, -1] = True
    causal_t = torch.nn.Transformer.generate_square_subsequent_mask(t_len, dtype=_tdt(device))
    causal_o = nn.Transformer.generate_square_subsequent_mask(t_len, device=device,
                                                              dtype=fdtype(device))
    np.testing.assert_array_equal(N(causal_o), causal_t.numpy())
    return kpm, tkpm, causal_t, causal_o


@pytest.mark.parametrize("norm_first,batch_first,act", [(False, False, "relu"),
                                                        (True, True, "gelu")])
def test_transformer_like_torch(device, norm_first, batch_first, act):
    warnings.simplefilter("ignore")  # torch's nested-tensor notice
    om, tm = _pair(device, lambda m: m.Transformer(16, 4, 2, 2, 24, dropout=0.0,
                                                   activation=act, batch_first=batch_first,
                                                   norm_first=norm_first))
    s_len, t_len, b = 5, 4, 3
    kpm, tkpm, ct, co = _masks(device, t_len, s_len, b)
    src = _x(b, s_len, 16) if batch_first else _x(s_len, b, 16)
    tgt = _x(b, t_len, 16, seed=2) if batch_first else _x(t_len, b, 16, seed=2)

    class T:  # bind the masks so _compare can call tm(src, tgt)
        def __init__(self, m, masks, lib):
            self.m, self.masks, self.lib = m, masks, lib

        def __call__(self, s, t):
            causal, kp, tkp = self.masks
            return self.m(s, t, tgt_mask=causal, src_key_padding_mask=kp,
                          memory_key_padding_mask=kp, tgt_key_padding_mask=tkp)

        def named_parameters(self):
            return self.m.named_parameters()

    tmasks = (ct, torch.tensor(kpm), torch.tensor(tkpm))
    omasks = (co, ot.tensor(kpm, device=device), ot.tensor(tkpm, device=device))
    _compare(T(om, omasks, ot), T(tm, tmasks, torch), [src, tgt], device)


def test_transformer_decoder_layer_like_torch(device):
    om, tm = _pair(device, lambda m: m.TransformerDecoder(
        m.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2,
        norm=m.LayerNorm(8)))
    _compare(om, tm, [_x(2, 3, 8), _x(2, 5, 8, seed=3)], device)


def test_transformer_rejects_mismatched_inputs():
    m = nn.Transformer(8, 2, 1, 1, 16)
    with pytest.raises(ValueError):
        m(ot.ones(5, 2, 8), ot.ones(4, 3, 8))  # batch sizes differ
    with pytest.raises(ValueError):
        m(ot.ones(5, 2, 6), ot.ones(4, 2, 6))  # not d_model features


# ------------------------------------------------------- weight and spectral norm
NORMS = {
    "weight_norm": (lambda u: u.parametrizations.weight_norm, ["original0", "original1"]),
    "spectral_norm": (lambda u: u.parametrizations.spectral_norm, ["original", "0._u", "0._v"]),
    "legacy_weight_norm": (lambda u: u.weight_norm, None),
    "legacy_spectral_norm": (lambda u: u.spectral_norm, None),
}


@pytest.mark.parametrize("kind", sorted(NORMS))
@pytest.mark.parametrize("layer", ["linear", "conv", "conv_transpose"])
def test_norm_reparametrizations_like_torch(device, kind, layer):
    warnings.simplefilter("ignore")  # torch's deprecation of the legacy weight_norm
    make = {"linear": lambda m: m.Linear(5, 4),
            "conv": lambda m: m.Conv2d(2, 3, 3),
            "conv_transpose": lambda m: m.ConvTranspose2d(2, 3, 3)}[layer]
    get, keys = NORMS[kind]
    torch.manual_seed(0)
    tm = make(torch.nn).to(_tdt(device))
    om = make(nn).to(device=device, dtype=fdtype(device))
    _load(om, tm, device)
    get(torch.nn.utils)(tm)
    get(nn.utils)(om)
    if keys is not None:
        assert {f"parametrizations.weight.{k}" for k in keys} <= set(om.state_dict())
    _load(om, tm, device)  # the same power-iteration vectors as torch's
    x = _x(3, 5) if layer == "linear" else _x(2, 2, 5, 5)
    for _ in range(2):  # two training steps: the power iteration advances alike
        _compare(om, tm, [x], device)
        om.zero_grad()
        tm.zero_grad()
    om.eval()
    tm.eval()
    _compare(om, tm, [x], device)


def test_parametrize_api():
    class Symmetric(nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).mT

    m = nn.Linear(4, 4)
    P = nn.utils.parametrize
    P.register_parametrization(m, "weight", Symmetric())
    assert P.is_parametrized(m) and P.is_parametrized(m, "weight")
    assert type(m).__name__ == "ParametrizedLinear"
    assert "parametrizations.weight.original" in m.state_dict()
    w = m.weight
    np.testing.assert_allclose(N(w), N(w).T)
    m(ot.ones(2, 4)).sum().backward()
    assert m.parametrizations.weight.original.grad is not None
    with P.cached():
        assert m.weight is m.weight
    P.remove_parametrizations(m, "weight")
    assert not P.is_parametrized(m) and type(m) is nn.Linear
    np.testing.assert_allclose(N(m.weight), N(w))
    with pytest.raises(ValueError):
        P.register_parametrization(m, "nope", Symmetric())


def test_weight_norm_remove_round_trip():
    m = nn.Linear(3, 2)
    w = N(m.weight)
    nn.utils.weight_norm(m)
    assert {"weight_g", "weight_v"} <= set(m.state_dict())
    np.testing.assert_allclose(N(m.weight), w, rtol=1e-6)
    nn.utils.remove_weight_norm(m)
    assert "weight" in dict(m.named_parameters())
    np.testing.assert_allclose(N(m.weight), w, rtol=1e-6)


# --------------------------------------------------------------- gradchecks
def _d(*shape, seed=0):
    return ot.tensor(_x(*shape, seed=seed), dtype=ot.float64, requires_grad=True)


GRADCHECKS = {
    "conv3d": lambda: (lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=1,
                                                dilation=(2, 1, 1)),
                       [_d(1, 2, 4, 4, 3), _d(3, 2, 2, 2, 2, seed=1), _d(3, seed=2)]),
    "conv_transpose3d": lambda: (lambda x, w: F.conv_transpose3d(x, w, stride=2, padding=1,
                                                                 output_padding=1),
                                 [_d(1, 2, 2, 3, 2), _d(2, 2, 3, 2, 2, seed=1)]),
    "conv_transpose1d_groups": lambda: (lambda x, w: F.conv_transpose1d(x, w, stride=2,
                                                                        groups=2),
                                        [_d(2, 4, 3), _d(4, 1, 3, seed=1)]),
    "max_pool3d": lambda: (lambda x: F.max_pool3d(x, 2, stride=1, padding=1),
                           [_d(1, 2, 3, 3, 3)]),
    "avg_pool3d": lambda: (lambda x: F.avg_pool3d(x, 3, stride=2, padding=1,
                                                  count_include_pad=False),
                           [_d(1, 2, 4, 5, 3)]),
    "adaptive_avg_pool3d": lambda: (lambda x: F.adaptive_avg_pool3d(x, (2, 3, 2)),
                                    [_d(1, 2, 5, 4, 3)]),
    "adaptive_max_pool2d": lambda: (lambda x: F.adaptive_max_pool2d(x, (3, 2)),
                                    [_d(2, 2, 5, 7)]),
    "interpolate_bicubic": lambda: (lambda x: F.interpolate(x, size=(5, 4), mode="bicubic"),
                                    [_d(1, 2, 3, 3)]),
    "interpolate_trilinear": lambda: (lambda x: F.interpolate(x, scale_factor=1.5,
                                                              mode="trilinear",
                                                              align_corners=True),
                                      [_d(1, 1, 2, 3, 2)]),
    "interpolate_nearest": lambda: (lambda x: F.interpolate(x, scale_factor=(1.7, 0.6)),
                                    [_d(1, 2, 3, 5)]),
    "pixel_shuffle": lambda: (lambda x: F.pixel_shuffle(x, 2), [_d(1, 8, 2, 3)]),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradcheck_new_functionals(name):
    fn, inputs = GRADCHECKS[name]()
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("name", ["conv3d", "conv_transpose1d_groups", "max_pool3d"])
def test_gradgradcheck_windows(name):
    fn, inputs = GRADCHECKS[name]()
    assert gradgradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("layer", ["conv2d", "conv2d_nobias", "conv3d", "convT2d_tiles",
                                   "maxpool", "avgpool_tiles"])
def test_inplace_activation_after_window_layers(device, layer):
    """``ReLU(inplace=True)`` right after a window layer keeps every gradient (the layer's
    output owns its storage, so the in-place op is recorded on it)."""
    make = {"conv2d": lambda m: m.Conv2d(2, 3, 3, padding=1),
            "conv2d_nobias": lambda m: m.Conv2d(2, 3, 3, bias=False),
            "conv3d": lambda m: m.Conv3d(2, 3, 2),
            "convT2d_tiles": lambda m: m.ConvTranspose2d(2, 3, 2, stride=2, bias=False),
            "maxpool": lambda m: m.MaxPool2d(2),
            "avgpool_tiles": lambda m: m.AvgPool2d(2)}[layer]
    om, tm = _pair(device, lambda m: m.Sequential(make(m), m.ReLU(inplace=True)))
    shape = (2, 2, 4, 4, 4) if layer == "conv3d" else (2, 2, 4, 6)
    _compare(om, tm, [_x(*shape)], device)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_and_grid_sample_like_torch(device, mode, padding_mode, align_corners):
    theta = _x(2, 2, 3) * 0.7
    x = _x(2, 3, 5, 6, seed=1)
    tdt, odt = _tdt(device), fdtype(device)
    tt = torch.tensor(theta, dtype=tdt, requires_grad=True)
    ot_ = ot.tensor(theta, dtype=odt, device=device, requires_grad=True)
    tx = torch.tensor(x, dtype=tdt, requires_grad=True)
    ox = ot.tensor(x, dtype=odt, device=device, requires_grad=True)
    gt = TF.affine_grid(tt, (2, 3, 4, 7), align_corners=align_corners)
    go = F.affine_grid(ot_, (2, 3, 4, 7), align_corners=align_corners)
    np.testing.assert_allclose(N(go), gt.detach().numpy(), **_tol(device))
    yt = TF.grid_sample(tx, gt * 1.2, mode, padding_mode, align_corners)
    yo = F.grid_sample(ox, go * 1.2, mode, padding_mode, align_corners)
    np.testing.assert_allclose(N(yo), yt.detach().numpy(), **_tol(device))
    cot = _x(*yt.shape, seed=2)
    (yt * torch.tensor(cot, dtype=tdt)).sum().backward()
    (yo * ot.tensor(cot, dtype=odt, device=device)).sum().backward()
    np.testing.assert_allclose(N(ox.grad), tx.grad.numpy(), **_tol(device))
    if mode == "bilinear":
        np.testing.assert_allclose(N(ot_.grad), tt.grad.numpy(), **_tol(device))


def test_gradcheck_grid_sample():
    fn = lambda x, g: F.grid_sample(x, g, "bilinear", "border", False)
    g = ot.tensor(np.random.default_rng(0).uniform(-0.9, 0.9, (1, 3, 2, 2)), dtype=ot.float64,
                  requires_grad=True)
    assert gradcheck(fn, [_d(1, 2, 3, 4), g], eps=1e-6, atol=1e-5, rtol=1e-3)
