"""omnitensor.onnx.export: the file passes ``onnx.checker`` and onnxruntime (CPU) gives
omnitensor's eager outputs within 1e-5 (float32), at the export's batch size and another
(dynamic batch axis); the same file runs back in ``omnitensor.onnx.load`` on every device."""
from __future__ import annotations

import io

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import omnitensor as ot  # noqa: E402
from omnitensor import nn  # noqa: E402
from omnitensor.nn import functional as F  # noqa: E402

TOL = 1e-5


class DigitsMLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(64, 32), nn.Linear(32, 16), nn.Linear(16, 10)
        self.drop = nn.Dropout(0.2)

    def forward(self, x):
        x = x.view(x.size(0), -1)
        x = self.drop(F.relu(self.fc1(x)))
        x = F.relu(self.fc2(x))
        return F.log_softmax(self.fc3(x), dim=1)


class DigitsCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 2 * 2, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(ot.flatten(x, 1))


class SeqLSTM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(20, 8)
        self.rnn = nn.LSTM(8, 6, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(12, 3)

    def forward(self, tokens):
        out, (h, c) = self.rnn(self.emb(tokens))
        return self.head(out[:, -1]), h


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.1,
                                           batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(16, 5)

    def forward(self, x):
        return self.head(self.enc(x).mean(1))


class ResBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(4, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4)
        self.c2, self.b2 = nn.Conv2d(4, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4)

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        return F.relu(self.b2(self.c2(y)) + x)


def _trained_bn(model: nn.Module, x: ot.Tensor) -> None:
    """Give BatchNorm running statistics that are not the initial 0/1."""
    model.train()
    with ot.no_grad():
        model(x)
        model(x * 2.0 + 0.5)
    model.eval()


def _cases(device: str) -> dict:
    ot.manual_seed(0)
    g = np.random.default_rng(0)
    rn = lambda *s: ot.tensor(g.standard_normal(s).astype(np.float32), device=device)
    res = ResBlock().to(device)
    _trained_bn(res, rn(6, 4, 5, 5))
    from omnitensor.demos.train_digits import build
    return {
        "digits_mlp": (build("mlp").to(device), lambda n: (rn(n, 64),)),
        "digits_cnn": (build("cnn").to(device), lambda n: (rn(n, 1, 8, 8),)),
        "mlp": (DigitsMLP().to(device), lambda n: (rn(n, 1, 8, 8),)),
        "cnn": (DigitsCNN().to(device), lambda n: (rn(n, 1, 8, 8),)),
        "lstm": (SeqLSTM().to(device),
                 lambda n: (ot.tensor(g.integers(0, 20, (n, 7)), device=device),)),
        "encoder": (Encoder().to(device), lambda n: (rn(n, 6, 16),)),
        "resblock": (res, lambda n: (rn(n, 4, 5, 5),)),
    }


def _host(t) -> np.ndarray:
    return t.detach().cpu().numpy()


def _eager(model, args) -> list:
    with ot.no_grad():
        out = model(*args)
    outs = out if isinstance(out, tuple) else (out,)
    return [_host(o) for o in outs]


def _export(model, args, **kw) -> bytes:
    buf = io.BytesIO()
    ot.onnx.export(model, args, buf, **kw)
    data = buf.getvalue()
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    return data


@pytest.mark.parametrize("name", ["digits_mlp", "digits_cnn", "mlp", "cnn", "lstm", "encoder",
                                  "resblock"])
def test_export_matches_onnxruntime_dynamic_batch(device, name, tmp_path):
    model, make = _cases(device)[name]
    model.eval()
    args = make(3)
    n_out = len(_eager(model, args))
    outs = [f"y{i}" for i in range(n_out)]
    dyn = {"x": {0: "batch"}}
    dyn.update({o: {0 if not (name == "lstm" and i == 1) else 1: "batch"}
                for i, o in enumerate(outs)})
    data = _export(model, args, input_names=["x"], output_names=outs, dynamic_axes=dyn)
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    for n in (3, 5, 1):
        a = make(n)
        want = _eager(model, a)
        got = sess.run(None, {"x": _host(a[0])})
        assert len(got) == len(want)
        for w, o in zip(want, got):
            assert o.shape == w.shape, (name, n)
            np.testing.assert_allclose(o, w, rtol=TOL, atol=TOL, err_msg=f"{name} batch {n}")
    # round trip: the exported file runs in omnitensor.onnx.load on this device
    loaded = ot.onnx.load(_tmp(data, tmp_path), device=device)
    a = make(4)
    res = loaded(*a)
    res = res if isinstance(res, (tuple, list)) else (res,)
    for w, o in zip(_eager(model, a), res):
        np.testing.assert_allclose(_host(o), w, rtol=TOL, atol=TOL)


def _tmp(data: bytes, folder) -> str:
    path = folder / "model.onnx"
    path.write_bytes(data)
    return str(path)


class Shapes(nn.Module):
    """The shape ops users write: reshape, permute, cat, slicing, gather, expand."""

    def forward(self, x, idx):
        y = x.reshape(x.shape[0], 4, 6).permute(0, 2, 1)             # (N, 6, 4)
        y = ot.cat([y, y[:, :2] * 2.0], dim=1)                          # (N, 8, 4)
        y = y[:, 1:7:2, ::-1]                                           # (N, 3, 4)
        g = ot.gather(y, 2, idx)                                        # (N, 3, 2)
        e = g[:, :1].expand(-1, 3, -1)
        return ot.stack([g, e], 0).transpose(0, 1).flatten(1), y.unsqueeze(1).squeeze(1)


def _layers(device: str) -> dict:
    g = np.random.default_rng(3)
    rn = lambda *s: ot.tensor(g.standard_normal(s).astype(np.float32), device=device)
    mha = nn.MultiheadAttention(8, 2, batch_first=True)

    class MHA(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.mha = mha

        def forward(self, x):
            return self.mha(x, x, x)[0]

    gn = nn.Sequential(nn.Conv2d(4, 6, 1), nn.GroupNorm(3, 6), nn.SiLU())
    bn1 = nn.Sequential(nn.Conv1d(3, 4, 3, padding="same"), nn.BatchNorm1d(4),
                        nn.ELU()).to(device)
    bn1.train()
    with ot.no_grad():
        bn1(rn(5, 3, 9))
    table = {
        "linear3d": (nn.Sequential(nn.Linear(6, 5), nn.GELU(), nn.Linear(5, 4, bias=False)),
                     lambda n: (rn(n, 3, 6),)),
        "gelu_tanh": (nn.GELU(approximate="tanh"), lambda n: (rn(n, 7),)),
        "conv1d_bn1d": (bn1, lambda n: (rn(n, 3, 9),)),
        "conv2d_strided": (nn.Sequential(nn.Conv2d(2, 4, 3, stride=2, padding=1, dilation=1,
                                                   groups=2), nn.LeakyReLU(0.1)),
                           lambda n: (rn(n, 2, 9, 9),)),
        "conv_transpose2d": (nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1,
                                                output_padding=1), lambda n: (rn(n, 4, 5, 5),)),
        "pools": (nn.Sequential(nn.MaxPool2d(3, 2, 1), nn.AvgPool2d(2), nn.Tanh(),
                                nn.AdaptiveAvgPool2d(1)), lambda n: (rn(n, 3, 12, 12),)),
        "pools_1d": (nn.Sequential(nn.MaxPool1d(2), nn.AvgPool1d(3, 1, 1,
                                                                 count_include_pad=False),
                                   nn.Sigmoid()), lambda n: (rn(n, 3, 10),)),
        "pool_ceil": (nn.Sequential(nn.MaxPool2d(2, ceil_mode=True),
                                    nn.AvgPool2d(2, ceil_mode=True, padding=1)),
                      lambda n: (rn(n, 2, 7, 7),)),
        "groupnorm_silu": (gn, lambda n: (rn(n, 4, 3, 3),)),
        "layernorm_softplus": (nn.Sequential(nn.LayerNorm([3, 4]), nn.Softplus(),
                                             nn.Hardtanh()), lambda n: (rn(n, 3, 4),)),
        "softmax": (nn.Softmax(dim=-1), lambda n: (rn(n, 3, 5),)),
        "mha": (MHA(), lambda n: (rn(n, 5, 8),)),
        "gru": (nn.GRU(4, 3, num_layers=2), lambda n: (rn(6, n, 4),)),
        "embedding_padding": (nn.Embedding(10, 4, padding_idx=0),
                              lambda n: (ot.tensor(g.integers(0, 10, (n, 3)), device=device),)),
    }
    return table


_LAYERS = list(_layers("cpu"))


@pytest.mark.parametrize("name", _LAYERS)
def test_every_listed_layer_exports(device, name, tmp_path):
    model, make = _layers(device)[name]
    model = model.to(device).eval()
    a = make(2)
    batch_axis = 1 if name == "gru" else 0
    data = _export(model, a, input_names=["x"], dynamic_axes={"x": {batch_axis: "batch"}})
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    for n in (2, 3):
        a = make(n)
        want = _eager(model, a)
        got = sess.run(None, {"x": _host(a[0])})
        for w, o in zip(want, got):
            np.testing.assert_allclose(o, w, rtol=TOL, atol=TOL, err_msg=f"{name} batch {n}")
    loaded = ot.onnx.load(_tmp(data, tmp_path), device=device)
    res = loaded(*a)
    res = res if isinstance(res, (tuple, list)) else (res,)
    for w, o in zip(_eager(model, a), res):
        np.testing.assert_allclose(_host(o), w, rtol=TOL, atol=TOL)


def test_shape_ops_export(device, tmp_path):
    g = np.random.default_rng(4)
    x = ot.tensor(g.standard_normal((3, 24)).astype(np.float32), device=device)
    idx = ot.tensor(g.integers(0, 4, (3, 3, 2)), device=device)
    model = Shapes()
    data = _export(model, (x, idx), input_names=["x", "idx"],
                   dynamic_axes={"x": {0: "n"}, "idx": {0: "n"}})
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    want = _eager(model, (x, idx))
    got = sess.run(None, {"x": _host(x), "idx": _host(idx)})
    for w, o in zip(want, got):
        np.testing.assert_allclose(o, w, rtol=TOL, atol=TOL)
    x5 = ot.tensor(g.standard_normal((5, 24)).astype(np.float32), device=device)
    idx5 = ot.tensor(g.integers(0, 4, (5, 3, 2)), device=device)
    got = sess.run(None, {"x": _host(x5), "idx": _host(idx5)})
    for w, o in zip(_eager(model, (x5, idx5)), got):
        np.testing.assert_allclose(o, w, rtol=TOL, atol=TOL)
    loaded = ot.onnx.load(_tmp(data, tmp_path), device=device)
    for w, o in zip(want, loaded(x, idx)):
        np.testing.assert_allclose(_host(o), w, rtol=TOL, atol=TOL)


def test_unmapped_op_is_named_with_the_layer():
    class Odd(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            return self.fc(x).cumprod(1)

    with pytest.raises(NotImplementedError, match=r"'cumprod'.*cannot be exported"):
        ot.onnx.export(Odd(), (ot.randn(2, 3),), io.BytesIO())

    class Noisy(nn.Module):
        def forward(self, x):
            return F.dropout(x, 0.5, training=True)

    with pytest.raises(NotImplementedError, match=r"random_bits.*model.eval\(\)"):
        ot.onnx.export(Noisy(), (ot.randn(2, 3),), io.BytesIO())


def test_export_arguments_and_errors(tmp_path):
    model = DigitsMLP()
    x = ot.randn(2, 1, 8, 8)
    path = tmp_path / "m.onnx"
    prog = ot.onnx.export(model, x, str(path), dynamo=True, opset_version=17,
                          do_constant_folding=True, export_params=True)
    proto = onnx.load(str(path))
    assert proto.opset_import[0].version == 17
    assert {i.name for i in proto.graph.initializer} >= {"fc1.weight", "fc1.bias"}
    assert [i.name for i in proto.graph.input] == ["x"]       # forward's parameter name
    assert prog.model_proto.graph.output[0].name == "output"
    assert model.training                                      # restored after the export
    with pytest.raises(ValueError, match="opset_version 11"):
        ot.onnx.export(model, x, io.BytesIO(), opset_version=11)
    with pytest.raises(ValueError, match="neither an input"):
        ot.onnx.export(model, x, io.BytesIO(), dynamic_axes={"nope": [0]})
    with pytest.raises(TypeError, match="unexpected keyword"):
        ot.onnx.export(model, x, io.BytesIO(), bogus=1)
    with pytest.raises(NotImplementedError, match="'random_bits' inside dropout in layer 'drop'"):
        ot.onnx.export(model, x, io.BytesIO(), training=ot.onnx.TrainingMode.PRESERVE)
    assert model.training
    nop = ot.onnx.export(model, x, io.BytesIO(), export_params=False)
    assert "fc1.weight" in [i.name for i in nop.model_proto.graph.input]


def test_dynamic_axes_follow_counts_and_refuse_size_dependent_constants():
    class Mean(nn.Module):
        def forward(self, x):
            return x - x.mean(0)            # divides by the (dynamic) batch size

    data = _export(Mean(), (ot.randn(3, 4),), input_names=["x"], dynamic_axes={"x": [0]})
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    for n in (3, 6):
        x = ot.randn(n, 4)
        np.testing.assert_allclose(sess.run(None, {"x": _host(x)})[0], _eager(Mean(), (x,))[0],
                                   rtol=TOL, atol=TOL)

    class Ramp(nn.Module):
        def forward(self, x):               # a host-built constant sized by the batch
            return x + ot.tensor(np.arange(x.shape[0], dtype=np.float32))[:, None]

    _export(Ramp(), (ot.randn(3, 4),))       # at a fixed size: fine
    with pytest.raises(ValueError, match="changes with the size of a dynamic axis"):
        ot.onnx.export(Ramp(), (ot.randn(3, 4),), io.BytesIO(), input_names=["x"],
                       dynamic_axes={"x": [0]})


def test_encoder_with_dynamic_batch_and_sequence(device):
    model, make = _cases(device)["encoder"]
    model.eval()
    g = np.random.default_rng(5)
    x = ot.tensor(g.standard_normal((2, 6, 16)).astype(np.float32), device=device)
    data = _export(model, (x,), input_names=["x"],
                   dynamic_axes={"x": {0: "batch", 1: "seq"}})
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    for n, s in ((2, 6), (3, 9), (1, 4)):
        x = ot.tensor(g.standard_normal((n, s, 16)).astype(np.float32), device=device)
        np.testing.assert_allclose(sess.run(None, {"x": _host(x)})[0], _eager(model, (x,))[0],
                                   rtol=TOL, atol=TOL, err_msg=f"batch {n} seq {s}")


_FUNCS = {
    "unary": lambda x: (x.abs().expm1() + x.abs().log1p() + x.abs().add(1).log2()
                        + x.abs().add(1).log10() + x.square() + x.erfc() + x.trunc()
                        + x.sign() + x.floor() + x.ceil() + x.round() + x.sin().asin()
                        + x.cos() + x.tanh().atanh() + x.sinh() + x.reciprocal().clamp(-3, 3)
                        + x.asinh() + x.abs().add(1).acosh()),
    "binary": lambda x: (ot.remainder(x, 0.7) + ot.floor_divide(x, 0.3) + ot.hypot(x, x + 1)
                         + ot.logaddexp(x, x * 2) + ot.maximum(x, -x) * ot.minimum(x, 0.5)
                         + x.pow(2) + ot.where(x > 0, x, x * 0.1)),
    "compare": lambda x: ((x > 0) & (x < 1) | ~(x != 0.5) ^ x.isfinite()).to(ot.float32)
                          + x.isnan().float() + x.isinf().float(),
    "reduce": lambda x: (x.sum(1, keepdim=True) + x.amax(1, keepdim=True)
                         + x.amin(0) + x.prod(1, keepdim=True)
                         + (x > 0).any(1, keepdim=True).float()
                         + (x > -9).all(1, keepdim=True).float()),
    "index": lambda x: (x.argmax(1).float(), x.argmin().float(), x.cumsum(1),
                        x.sort(1)[0], x.sort(1, descending=True)[1].float(), x.flip(1),
                        F.pad(x, (1, 2), value=0.5), ot.arange(5, device=x.device).float() * 0.5,
                        ot.full((2, 3), 1.5, device=x.device) + x[:2, :3], x.clamp(min=0).sqrt().exp()),
    "int_ops": lambda x: ((x * 10).to(ot.int64) // 3 + (x * 10).to(ot.int64) % 4,
                         ((x * 10).to(ot.int64) & 6) | ((x * 7).to(ot.int64) ^ ~(x * 3).to(ot.int64))),
    "scatter": lambda x: ((x * 2).index_put((ot.tensor([0, 2, 0], device=x.device),),
                                            x[:3], accumulate=True),
                          (x + 1).index_put((ot.tensor([1, 3], device=x.device),), x[:2])),
}


@pytest.mark.parametrize("name", list(_FUNCS))
def test_primitive_mappings_match_onnxruntime(device, name):
    g = np.random.default_rng(6)
    x = ot.tensor(g.standard_normal((4, 6)).astype(np.float32) * 0.9, device=device)
    fn = _FUNCS[name]
    data = _export(fn, (x,), input_names=["x"])
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    got = sess.run(None, {"x": _host(x)})
    want = _eager(fn, (x,))
    mine = ot.onnx.load(data, device=device)(x)  # every operator it writes, load runs
    mine = [_host(t) for t in (mine if isinstance(mine, (tuple, list)) else [mine])]
    assert len(got) == len(want) == len(mine)
    for w, o, m in zip(want, got, mine):
        np.testing.assert_allclose(o, w, rtol=TOL, atol=TOL, err_msg=name)
        np.testing.assert_allclose(m, w, rtol=TOL, atol=TOL, err_msg=f"{name}: onnx.load")


def test_lstm_with_dynamic_batch_and_sequence():
    model, make = _cases("cpu")["lstm"]
    model.eval()
    g = np.random.default_rng(7)
    data = _export(model, make(3), input_names=["x"],
                   dynamic_axes={"x": {0: "batch", 1: "seq"}})
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    assert sum(n.op_type == "LSTM" for n in onnx.load_from_string(data).graph.node) == 2
    for n, t in ((3, 7), (2, 11), (4, 1)):
        x = ot.tensor(g.integers(0, 20, (n, t)))
        for w, o in zip(_eager(model, (x,)), sess.run(None, {"x": _host(x)})):
            np.testing.assert_allclose(o, w, rtol=TOL, atol=TOL, err_msg=f"{n}x{t}")


def test_a_write_into_part_of_a_returned_tensor_is_refused():
    # ONNX values are immutable: the returned y would be exported as it was before the
    # write into its rows (silently stale); a write into all of it is exported
    x = ot.tensor(np.arange(24, dtype=np.float32).reshape(4, 6))

    def part(x):
        y = x * 1
        y[1:3].add_(1)
        return y

    def whole(x):
        y = x * 1
        y[:].add_(1)
        return y.permute(1, 0)

    with pytest.raises(Exception, match="writes in place into a view whose base is read"):
        _export(part, (x,), input_names=["x"])
    data = _export(whole, (x,), input_names=["x"])
    np.testing.assert_array_equal(_host(ot.onnx.load(data)(x)), _host(whole(x)))
