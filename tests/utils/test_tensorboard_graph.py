"""SummaryWriter.add_graph writes a real GraphDef that TensorBoard's event reader loads:
torch ops in their module scopes with torch's output shapes and edges (torch's own
add_graph as the oracle), on every device."""
from __future__ import annotations

import pytest

import omnitensor as ot
from omnitensor import nn
from omnitensor.nn import functional as F
from omnitensor.utils.tensorboard import SummaryWriter

torch = pytest.importorskip("torch")
pytest.importorskip("tensorboard")


def _net(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = lib.nn.Conv2d(1, 2, 3)
            self.fc1 = lib.nn.Linear(2 * 6 * 6, 4)
            self.bn = lib.nn.BatchNorm1d(4)

        def forward(self, x):
            x = lib.nn.functional.relu(self.conv(x))
            return self.bn(self.fc1(x.flatten(1)))
    return Net()


def _read_graph(logdir):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(str(logdir))
    acc.Reload()
    return acc.Graph()


def _shape(node):
    shapes = node.attr["_output_shapes"].list.shape
    return [d.size for d in shapes[0].dim] if shapes else None


def test_add_graph_matches_torchs_graph(device, tmp_path):
    model = _net(ot).to(device)
    model.train()
    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(model, ot.randn(2, 1, 8, 8, device=device))
    assert model.training  # the trace ran in eval mode and put the mode back
    g = _read_graph(tmp_path)
    by_name = {n.name: n for n in g.node}
    ops = {(n.name.rsplit("/", 1)[0], n.op): _shape(n) for n in g.node
           if n.op.startswith("aten::")}
    from torch.utils.tensorboard._pytorch_graph import graph as torch_graph
    tgd, _ = torch_graph(_net(torch), (torch.randn(2, 1, 8, 8),))
    rename = {"aten::_convolution": "aten::conv2d"}
    theirs = {(n.name.rsplit("/", 1)[0], rename.get(n.op, n.op)): _shape(n) for n in tgd.node
              if n.op.startswith("aten::")}
    assert ops == theirs  # same ops, same module scopes, same output shapes
    # edges: the linear reads the flatten's output and its own module's parameters
    lin = next(n for n in g.node if n.op == "aten::linear")
    assert [by_name[i].op for i in lin.input] == ["aten::flatten", "prim::GetAttr",
                                                   "prim::GetAttr"]
    assert list(lin.input)[1:] == ["Net/Linear[fc1]/weight", "Net/Linear[fc1]/bias"]
    assert by_name["input/input.0"].op == "IO Node" and _shape(by_name["input/input.0"]) == \
        [2, 1, 8, 8]
    out = by_name["output/output.0"]
    assert by_name[out.input[0]].op == "aten::batch_norm" and _shape(out) == [2, 4]
    kind = str(ot.device(device)).split(":")[0].upper()
    assert lin.device == f"/device:{kind}:{ot.device(device).index or 0}"


def test_add_graph_inputs_and_bad_model(tmp_path, capsys):
    class Two(nn.Module):
        def forward(self, a, b):
            return F.relu(a) + b, a * 2
    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(Two(), (ot.ones(3), ot.ones(3)), verbose=True)
        with pytest.raises(TypeError, match="nn.Module"):
            w.add_graph(lambda x: x, ot.ones(1))
    printed = capsys.readouterr().out
    assert "aten::relu(input/input.0)" in printed
    g = _read_graph(tmp_path)
    names = [n.name for n in g.node]
    assert {"input/input.0", "input/input.1", "output/output.0", "output/output.1"} <= \
        set(names)
    add = next(n for n in g.node if n.op == "aten::add")
    assert sorted(add.input) == sorted(["Two/aten::relu.0", "input/input.1"])
