"""omnitensor.jit: trace replays the captured graph; save writes one self-contained file
(graph JSON + safetensors, no pickle) that load runs on every device, equal to eager; script
raises naming data-dependent control flow; load refuses pickles and tampered programs."""
from __future__ import annotations

import io
import json
import pickle
import zipfile

import numpy as np
import pytest

pytest.importorskip("safetensors")

import omnitensor as ot
from omnitensor import nn
from omnitensor.nn import functional as F

TOL = 1e-5


class Net(nn.Module):
    """A small CNN with batch norm, pooling, dropout and a skip: the common layers."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
        self.drop = nn.Dropout(0.3)
        self.fc = nn.Linear(4 * 4 * 4, 10)

    def forward(self, x):
        y = F.relu(self.bn(self.conv(x)))
        y = F.max_pool2d(F.relu(self.conv2(y)) + y, 2)
        return F.log_softmax(self.fc(self.drop(y.flatten(1))), dim=1)


class Seq(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(11, 6)
        self.gru = nn.GRU(6, 5, batch_first=True)
        self.lstm = nn.LSTM(5, 4, batch_first=True)
        self.norm = nn.LayerNorm(4)

    def forward(self, tokens):
        y, _ = self.gru(self.emb(tokens))
        y, (h, c) = self.lstm(y)
        return self.norm(y), (h, c)


def _model(kind: str, device: str):
    ot.manual_seed(0)
    g = np.random.default_rng(1)
    if kind == "net":
        m = Net().to(device)
        m.train()
        with ot.no_grad():
            m(ot.tensor(g.standard_normal((8, 1, 8, 8)).astype(np.float32), device=device))
        make = lambda n: (ot.tensor(g.standard_normal((n, 1, 8, 8)).astype(np.float32),
                                    device=device),)
    else:
        m = Seq().to(device)
        make = lambda n: (ot.tensor(g.integers(0, 11, (n, 5)), device=device),)
    return m.eval(), make


def _flat(o) -> list:
    if isinstance(o, (tuple, list)):
        return [x for y in o for x in _flat(y)]
    return [o]


def _close(a, b) -> None:
    fa, fb = _flat(a), _flat(b)
    assert len(fa) == len(fb)
    for x, y in zip(fa, fb):
        assert tuple(x.shape) == tuple(y.shape)
        np.testing.assert_allclose(x.detach().cpu().numpy(), y.detach().cpu().numpy(),
                                   rtol=TOL, atol=TOL)


@pytest.mark.parametrize("kind", ["net", "seq"])
def test_trace_replays_and_save_load_runs_on_every_device(device, kind, tmp_path):
    model, make = _model(kind, device)
    x = make(3)
    traced = ot.jit.trace(model, x)
    assert isinstance(traced, ot.jit.ScriptModule) and isinstance(traced, nn.Module)
    assert set(traced.state_dict()) == set(model.state_dict())
    with ot.no_grad():
        want = model(*x)
        _close(traced(*x), want)
        # another batch size: the in-session module captures that signature too
        x5 = make(5)
        _close(traced(*x5), model(*x5))
    path = tmp_path / "model.otj"
    ot.jit.save(traced, str(path))
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["program.json", "tensors.safetensors"]
    for target in ("cpu", device):
        loaded = ot.jit.load(str(path), map_location=target)
        with ot.no_grad():
            got = loaded(*[a.to(target) for a in x])
        _close(got, want)
        assert all(str(t.device) == target for t in _flat(got))
        with ot.no_grad():
            got5 = loaded(*[a.to(target) for a in x5])
        _close(got5, model(*x5))


def test_loaded_program_runs_other_batch_sizes_and_refuses_other_shapes(device):
    model, make = _model("net", device)
    traced = ot.jit.trace(model, make(2))
    buf = io.BytesIO()
    traced.save(buf)
    loaded = ot.jit.load(io.BytesIO(buf.getvalue()), map_location=device)
    with ot.no_grad():
        for n in (1, 2, 6, 17):               # one graph template for every batch size
            x = make(n)
            _close(loaded(*x), model(*x))
        wrong = ot.randn(2, 1, 9, 9, device=device)
        with pytest.raises(RuntimeError, match=r"traced for arguments .*\(2, 1, 8, 8\)"):
            loaded(wrong)


def test_program_traced_in_training_mode_stays_specialized():
    model, make = _model("net", "cpu")
    model.train()
    traced = ot.jit.trace(model, make(2), check_trace=False)
    buf = io.BytesIO()
    traced.save(buf)
    loaded = ot.jit.load(io.BytesIO(buf.getvalue()))
    with ot.no_grad(), pytest.raises(RuntimeError, match="in training mode"):
        loaded(make(3)[0])


def test_traced_function_and_state_follow_the_module(device):
    def f(a, b):
        return (a * b).sum(1) + a.exp().mean()
    a = ot.randn(3, 4, device=device)
    b = ot.randn(3, 4, device=device)
    tf = ot.jit.trace(f, (a, b))
    _close(tf(a, b), f(a, b))
    model, make = _model("net", device)
    traced = ot.jit.trace(model, make(2))
    with ot.no_grad():
        model.fc.weight.mul_(0.5)              # the traced module reads the live weights
        x = make(2)
        _close(traced(*x), model(*x))


def test_traced_module_trains_through_autograd():
    model, make = _model("net", "cpu")
    traced = ot.jit.trace(model, make(2))
    x = make(2)[0]
    loss = traced(x).sum()
    loss.backward()
    assert model.fc.weight.grad is not None


def test_script_names_data_dependent_control_flow():
    class Branchy(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x * 2
            return x

    class Item(nn.Module):
        def forward(self, x):
            return x * x.max().item()

    s = ot.jit.script(Branchy())
    with ot.no_grad(), pytest.raises(ot.jit.TracingError, match=r"bool\(\).*test_jit.py"):
        s(ot.ones(3))
    with ot.no_grad(), pytest.raises(ot.jit.TracingError, match=r"\.item\(\)"):
        ot.jit.script(Item())(ot.ones(3))
    with pytest.raises(ot.jit.TracingError, match="host read"):
        ot.jit.trace(Item(), ot.ones(3))
    # no data-dependent flow: script works and records on first call
    lin = nn.Linear(3, 2)
    sl = ot.jit.script(lin)
    with ot.no_grad():
        x = ot.randn(4, 3)
        _close(sl(x), lin(x))


def _saved() -> bytes:
    model, make = _model("net", "cpu")
    buf = io.BytesIO()
    ot.jit.trace(model, make(2)).save(buf)
    return buf.getvalue()


def _rewrite(data: bytes, edit) -> bytes:
    zin = zipfile.ZipFile(io.BytesIO(data))
    meta = json.loads(zin.read("program.json"))
    edit(meta)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("program.json", json.dumps(meta))
        z.writestr("tensors.safetensors", zin.read("tensors.safetensors"))
    return out.getvalue()


def test_load_refuses_pickles_and_tampered_programs(tmp_path):
    with pytest.raises(ot.jit.ProgramError, match="pickle"):
        ot.jit.load(io.BytesIO(pickle.dumps({"a": 1})))
    # a TorchScript-like archive (a zip with data.pkl) is refused without reading it
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps(1))
    with pytest.raises(ot.jit.ProgramError, match="TorchScript"):
        ot.jit.load(io.BytesIO(buf.getvalue()))
    data = _saved()

    def evil_op(meta):
        meta["entries"][0]["graph"]["nodes"][0][0] = "__class__"

    def evil_kw(meta):
        node = meta["entries"][0]["graph"]["nodes"][0]
        node[2] = {"$d": {"x=__import__('os').system('true')": 1}}

    def evil_dtype(meta):
        meta["entries"][0]["graph"]["inputs"][0][0]["$v"][2] = "object"

    def evil_template(meta):
        assert meta["templates"], "the batch-generic template is saved"
        meta["templates"][0]["graph"]["nodes"][0][0] = "__class__"

    for edit, what in ((evil_op, "__class__"), (evil_kw, "keyword"),
                       (evil_dtype, "malformed value"), (evil_template, "__class__")):
        with pytest.raises(ot.jit.ProgramError, match=what):
            ot.jit.load(io.BytesIO(_rewrite(data, edit)))
    with pytest.raises(ot.jit.ProgramError, match="zip"):
        ot.jit.load(io.BytesIO(b"not a program"))
    # a truncated weights file
    zin = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("program.json", zin.read("program.json"))
        z.writestr("tensors.safetensors", zin.read("tensors.safetensors")[:40])
    with pytest.raises(ot.jit.ProgramError, match="corrupt"):
        ot.jit.load(io.BytesIO(out.getvalue()))


def test_torch_names():
    assert ot.jit.is_scripting() is False and ot.jit.is_tracing() is False
    seen = []

    class M(nn.Module):
        def forward(self, x):
            seen.append(ot.jit.is_tracing())
            return x + 1

    m = M()
    frozen = ot.jit.freeze(ot.jit.trace(m.eval(), ot.ones(2)))
    assert seen[0] is True
    assert ot.jit.optimize_for_inference(frozen) is frozen
    tm = ot.jit.trace_module(m, {"forward": ot.ones(2)})
    _close(tm(ot.ones(2)), m(ot.ones(2)))

    @ot.jit.ignore
    def helper(x):
        return x
    assert helper(3) == 3 and ot.jit.annotate(list, [1]) == [1]
    with pytest.raises(TypeError, match="jit.save"):
        ot.jit.save(m, io.BytesIO())
