"""omnitensor.onnx.load runs ONNX files on every device, equal to onnxruntime.

The models are torch modules exported with torch's TorchScript-based exporter
(``dynamo=False``), so the files are ones users have; each runs in onnxruntime (CPU) and in
omnitensor on every device, with a batch size other than the export's (dynamic axis)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import omnitensor as ot  # noqa: E402

tnn = torch.nn


class _ResBlock(tnn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1, self.b1 = tnn.Conv2d(4, 4, 3, padding=1, bias=False), tnn.BatchNorm2d(4)
        self.c2, self.b2 = tnn.Conv2d(4, 4, 3, padding=1, bias=False), tnn.BatchNorm2d(4)
        self.head = tnn.Linear(4, 3)

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        y = torch.relu(self.b2(self.c2(y)) + x)
        return self.head(torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1))


class _Seq(tnn.Module):
    def __init__(self, cell: str) -> None:
        super().__init__()
        self.emb = tnn.Embedding(20, 8)
        rnn = {"lstm": tnn.LSTM, "gru": tnn.GRU}[cell]
        self.rnn = rnn(8, 6, num_layers=2, batch_first=True, bidirectional=True)
        self.out = tnn.Linear(12, 5)

    def forward(self, tokens):
        y, _ = self.rnn(self.emb(tokens))
        return self.out(y).log_softmax(-1)


def _models():
    torch.manual_seed(0)
    return {
        "mlp": (tnn.Sequential(tnn.Linear(64, 32), tnn.ReLU(), tnn.Linear(32, 32), tnn.GELU(),
                               tnn.Linear(32, 10), tnn.Softmax(-1)), (3, 64), "float"),
        "cnn": (tnn.Sequential(tnn.Conv2d(1, 8, 3, padding=1), tnn.BatchNorm2d(8), tnn.ReLU(),
                               tnn.MaxPool2d(2), tnn.Conv2d(8, 4, 3, stride=2), tnn.Tanh(),
                               tnn.AvgPool2d(1), tnn.Flatten(), tnn.Linear(4, 10)),
                (2, 1, 8, 8), "float"),
        "resblock": (_ResBlock(), (2, 4, 6, 6), "float"),
        "deconv": (tnn.Sequential(tnn.ConvTranspose2d(3, 2, 3, stride=2, padding=1,
                                                      output_padding=1), tnn.LeakyReLU(0.1)),
                   (2, 3, 5, 5), "float"),
        "lstm": (_Seq("lstm"), (2, 7), "tokens"),
        "gru": (_Seq("gru"), (2, 7), "tokens"),
        "encoder": (tnn.TransformerEncoder(tnn.TransformerEncoderLayer(
            16, 4, 32, dropout=0.0, batch_first=True), 2, enable_nested_tensor=False),
            (2, 5, 16), "float"),
        "norms": (tnn.Sequential(tnn.Conv1d(4, 6, 3), tnn.GroupNorm(2, 6), tnn.SiLU(),
                                 tnn.Flatten(), tnn.LayerNorm(36), tnn.Hardswish()),
                  (2, 4, 8), "float"),
    }


def _input(shape, kind, seed):
    rng = np.random.default_rng(seed)
    if kind == "tokens":
        return rng.integers(0, 20, shape).astype(np.int64)
    return rng.standard_normal(shape).astype(np.float32)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = {}
    for name, (model, shape, kind) in _models().items():
        model.eval()
        path = tmp_path_factory.mktemp("onnx") / f"{name}.onnx"
        x = torch.from_numpy(_input(shape, kind, 0))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, (x,), str(path), dynamo=False, input_names=["x"],
                              output_names=["y"], dynamic_axes={"x": {0: "batch"},
                                                                "y": {0: "batch"}},
                              opset_version=17)
        out[name] = (str(path), shape, kind)
    return out


@pytest.mark.parametrize("name", list(_models()))
def test_matches_onnxruntime(device, exported, name):
    path, shape, kind = exported[name]
    x = _input((shape[0] + 3,) + tuple(shape[1:]), kind, 1)   # another batch size
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    model = ot.onnx.load(path, device=device)
    got = model(ot.asarray(x, device=device))
    assert got.device == ot.device(device)
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-5, atol=1e-5)
    (again,) = model.run(None, {"x": x})                       # onnxruntime's call form
    np.testing.assert_allclose(again.cpu().numpy(), want, rtol=1e-5, atol=1e-5)


def test_unsupported_op_is_named_at_load(tmp_path):
    from onnx import TensorProto, helper
    node = helper.make_node("NonMaxSuppression", ["b", "s"], ["y"])
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 4, 4]),
                               helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, 1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, [None, 3])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(NotImplementedError, match="NonMaxSuppression"):
        ot.onnx.load(m)


def test_bad_feeds_are_clear(exported):
    path, shape, kind = exported["mlp"]
    model = ot.onnx.load(path, device="cpu")
    with pytest.raises(ValueError, match="missing"):
        model.run(None, {"z": np.zeros(shape, np.float32)})
    with pytest.raises(ValueError, match="takes 1 input"):
        model(1, 2)


def test_handmade_graph_shape_ops(device):
    """Shape arithmetic (Shape, Gather, Concat, Reshape, Slice with negative steps, Expand,
    Where, reductions) on a graph built with onnx.helper, against onnxruntime."""
    from onnx import TensorProto, helper, numpy_helper
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["b"], axis=0),
        helper.make_node("Unsqueeze", ["b", "ax0"], ["b1"]),
        helper.make_node("Concat", ["b1", "minus1"], ["shape2"], axis=0),
        helper.make_node("Reshape", ["x", "shape2"], ["flat"]),
        helper.make_node("Slice", ["flat", "st", "en", "ax1", "step"], ["rev"]),
        helper.make_node("ReduceMean", ["rev", "ax1"], ["m"], keepdims=1),
        helper.make_node("Sub", ["rev", "m"], ["c"]),
        helper.make_node("Greater", ["c", "zerof"], ["pos"]),
        helper.make_node("Where", ["pos", "c", "zerof"], ["r"]),
        helper.make_node("CumSum", ["r", "one"], ["y"]),
    ]
    init = [numpy_helper.from_array(np.array(v, dtype=d), n) for n, v, d in [
        ("zero", 0, np.int64), ("ax0", [0], np.int64), ("minus1", [-1], np.int64),
        ("st", [-1], np.int64), ("en", [-(1 << 62)], np.int64), ("ax1", [1], np.int64),
        ("step", [-2], np.int64), ("zerof", 0.0, np.float32), ("one", 1, np.int64)]]
    graph = helper.make_graph(nodes, "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                             ["n", 3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 6])],
                              init)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = np.random.default_rng(0).standard_normal((5, 3, 4)).astype(np.float32)
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = ot.onnx.load(m, device=device)(x)
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-5, atol=1e-6)
