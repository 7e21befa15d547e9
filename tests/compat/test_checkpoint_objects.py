"""Whole-object checkpoints, safe by default as torch >= 2.6: save(model) works, load refuses
classes unless weights_only=False or allowlisted, and never runs code from the file."""
import collections

import numpy as np
import pytest

import omnitensor as ot
from omnitensor import nn
from omnitensor.serialization import (WeightsOnlyError, add_safe_globals, clear_safe_globals,
                                      get_safe_globals, safe_globals)


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(7, 4)
        self.fc = nn.Linear(4, 4)
        self.act = nn.Tanh()
        self.out = nn.Linear(4, 7, bias=False)
        self.out.weight = self.emb.weight  # tied, as word_language_model's --tied
        self.register_buffer("scale", ot.ones(1) * 2)

    def forward(self, idx):
        return self.out(self.act(self.fc(self.emb(idx)))) * self.scale


def _trained(device):
    ot.manual_seed(0)
    model = TinyNet().to(device)
    opt = ot.optim.Adam(model.parameters(), lr=1e-2)
    idx = ot.tensor([1, 2, 3], device=device)
    for _ in range(2):
        opt.zero_grad()
        model(idx).sum().backward()
        opt.step()
    return model, opt, idx


def test_whole_model_round_trip(tmp_path, device):
    model, opt, idx = _trained(device)
    path = tmp_path / "model.pt"
    ot.save(model, path)
    loaded = ot.load(path, weights_only=False)
    assert type(loaded) is TinyNet and loaded is not model
    assert loaded.out.weight is loaded.emb.weight  # shared identity survives
    assert loaded.fc.weight.device == ot.device(device)
    assert ot.allclose(loaded(idx), model(idx))
    assert list(loaded.state_dict()) == list(model.state_dict())
    loaded(idx).sum().backward()  # trainable as saved
    assert loaded.fc.weight.grad is not None


def test_model_and_optimizer_together(tmp_path, device):
    model, opt, idx = _trained(device)
    path = tmp_path / "ckpt.pt"
    extra = {"epoch": 3, "sizes": ot.Size([2, 3]), "dev": ot.device(device), "dt": ot.float16,
             "od": collections.OrderedDict(b=1, a=2), "tags": {"x", "y"}, "z": 1 + 2j,
             "raw": b"\x00\x01"}
    ot.save({"model": model, "optimizer": opt, **extra}, path)
    ck = ot.load(path, weights_only=False, map_location="cpu")
    m2, o2 = ck["model"], ck["optimizer"]
    for k, v in extra.items():
        if k == "dev":
            assert ck[k] == v
        else:
            assert ck[k] == v and type(ck[k]) is type(v)
    assert o2.param_groups[0]["params"][0] is m2.emb.weight
    assert set(map(id, o2.state)) <= set(map(id, m2.parameters()))
    assert m2.fc.weight.device == ot.device("cpu")
    np.testing.assert_allclose(o2.state_dict()["state"][1]["exp_avg"].numpy(),
                               opt.state_dict()["state"][1]["exp_avg"].cpu().numpy())


def test_weights_only_refuses_classes_with_torchs_explanation(tmp_path):
    model, _, _ = _trained("cpu")
    path = tmp_path / "model.pt"
    ot.save(model, path)
    for kwargs in ({}, {"weights_only": True}, {"weights_only": None}):
        with pytest.raises(WeightsOnlyError, match="Weights only load failed") as e:
            ot.load(path, **kwargs)
        msg = str(e.value)
        assert "weights_only=False" in msg and "arbitrary code execution" in msg
        assert f"{TinyNet.__module__}.TinyNet was not an allowed global" in msg
        assert "add_safe_globals([TinyNet])" in msg
    # plain data and state dicts load by default
    ot.save({"sd": model.state_dict(), "n": 1}, tmp_path / "sd.pt")
    assert set(ot.load(tmp_path / "sd.pt")["sd"]) == set(model.state_dict())


def test_safe_globals_allowlist(tmp_path):
    model, _, idx = _trained("cpu")
    path = tmp_path / "model.pt"
    ot.save(model, path)
    classes = [TinyNet, nn.Embedding, nn.Linear, nn.Tanh]
    with safe_globals(classes):
        assert set(classes) <= set(get_safe_globals())
        loaded = ot.load(path)
    assert ot.allclose(loaded(idx), model(idx))
    assert TinyNet not in get_safe_globals()
    with pytest.raises(WeightsOnlyError, match="TinyNet"):
        ot.load(path)
    with safe_globals([TinyNet]):  # the children's classes are needed too
        with pytest.raises(WeightsOnlyError, match="Embedding"):
            ot.load(path)
    try:
        add_safe_globals(classes)
        assert type(ot.load(path)) is TinyNet
    finally:
        clear_safe_globals()
    assert get_safe_globals() == []


def test_functions_are_references_not_code(tmp_path):
    ot.save({"act": ot.nn.functional.relu}, tmp_path / "f.pt")
    with pytest.raises(WeightsOnlyError, match="relu"):
        ot.load(tmp_path / "f.pt")
    assert ot.load(tmp_path / "f.pt", weights_only=False)["act"] is ot.nn.functional.relu
    with pytest.raises(TypeError, match="lambdas"):
        ot.save({"act": lambda x: x}, tmp_path / "g.pt")


def test_default_load_never_imports_what_the_file_names(tmp_path, monkeypatch):
    import sys
    model, _, idx = _trained("cpu")
    path = tmp_path / "m.pt"
    ot.save(model, path, format="safetensors")  # the zip format: test_zip_load_never_imports...
    # rewrite the class path to an importable module of the same length (so the file stays
    # well formed) whose import leaves a mark: weights_only must refuse without importing it
    orig = TinyNet.__module__
    probe = "p" + "x" * (len(orig) - 1)
    mark = tmp_path / "imported"
    (tmp_path / f"{probe}.py").write_text(
        f"import pathlib, sys\npathlib.Path({str(mark)!r}).touch()\n"
        f"TinyNet = sys.modules[{orig!r}].TinyNet\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, probe, raising=False)
    data = path.read_bytes()
    assert f"{orig}.TinyNet".encode() in data
    bad = tmp_path / "bad.pt"
    bad.write_bytes(data.replace(f"{orig}.TinyNet".encode(), f"{probe}.TinyNet".encode()))
    with pytest.raises(WeightsOnlyError, match=f"Unsupported global: {probe}.TinyNet"):
        ot.load(bad)
    assert probe not in sys.modules and not mark.exists()
    # the rewrite is effective: a trusted load imports the named module and rebuilds
    back = ot.load(bad, weights_only=False)
    assert mark.exists() and probe in sys.modules and isinstance(back, TinyNet)
    assert ot.equal(back(idx), model(idx)).all()
