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
    rn = lambda *s: ot.tensor(g.standard_normal(s).astype(np.float32), device=device)  # noqa
    res = ResBlock().to(device)
    _trained_bn(res, rn(6, 4, 5, 5))
    return {
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


@pytest.mark.parametrize("name", ["mlp", "cnn", "lstm", "encoder", "resblock"])
def test_export_matches_onnxruntime_dynamic_batch(device, name):
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
    loaded = ot.onnx.load(io.BytesIO(data) if False else _tmp(data), device=device)
    a = make(4)
    res = loaded(*a)
    res = res if isinstance(res, (tuple, list)) else (res,)
    for w, o in zip(_eager(model, a), res):
        np.testing.assert_allclose(_host(o), w, rtol=TOL, atol=TOL)


def _tmp(data: bytes) -> str:
    import tempfile
    f = tempfile.NamedTemporaryFile(suffix=".onnx", delete=False)
    f.write(data)
    f.close()
    return f.name
