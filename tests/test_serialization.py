"""omnitensor.save/load: round trips of model and optimizer state across devices, safe
refusal of pickles and broken files, atomic writes, the optional dependency."""
import os
import pickle
import struct
import subprocess
import sys

import numpy as np
import pytest

import omnitensor as ot
from omnitensor import nn, optim
from omnitensor.serialization import CheckpointError

pytest.importorskip("safetensors")


def _model_and_opt(device):
    ot.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2)).to(device)
    opt = optim.Adam(m.parameters(), lr=0.01)
    m(ot.randn(5, 3, device=device)).sum().backward()
    opt.step()
    return m, opt


def test_roundtrip_structure_and_values(tmp_path, device):
    m, opt = _model_and_opt(device)
    obj = {"model": m.state_dict(), "optim": opt.state_dict(), "epoch": 3, "lr": 0.5,
           "best": float("inf"), "nan": float("nan"), "name": "run-1", "none": None,
           "flags": [True, False], "shape": (2, 3), "arr": np.arange(4, dtype=np.int16),
           "c": ot.tensor([1 + 2j, 3j], device=device) if
           ot.device(device).supports_dtype(ot.complex64) else None,
           7: "int key", "half": ot.ones(2, dtype=ot.float16, device=device)
           if ot.device(device).supports_dtype(ot.float16) else None}
    path = tmp_path / "ckpt.safetensors"
    ot.save(obj, path)
    back = ot.load(path)
    assert back["epoch"] == 3 and back["lr"] == 0.5 and back["best"] == float("inf")
    assert np.isnan(back["nan"]) and back["name"] == "run-1" and back["none"] is None
    assert back["flags"] == [True, False] and back["shape"] == (2, 3) and back[7] == "int key"
    assert back["arr"].dtype == np.int16 and back["arr"].tolist() == [0, 1, 2, 3]
    for k, v in m.state_dict().items():
        got = back["model"][k]
        assert got.device == ot.device(device) and got.dtype is v.dtype and got.shape == v.shape
        np.testing.assert_array_equal(got.cpu().numpy(), v.cpu().numpy())
    st = back["optim"]["state"]
    assert sorted(st) == [0, 1, 2, 3, 4, 5] and st[0]["step"] == 1
    assert back["optim"]["param_groups"][0]["betas"] == (0.9, 0.999)
    if obj["c"] is not None:
        assert back["c"].dtype is ot.complex64 and back["c"].tolist() == [1 + 2j, 3j]
    if obj["half"] is not None:
        assert back["half"].dtype is ot.float16
    # the restored state drives a model and an optimizer that continue identically
    m2, opt2 = _model_and_opt(device)
    m2.load_state_dict(back["model"])
    opt2.load_state_dict(back["optim"])


def test_load_onto_other_devices(tmp_path, device):
    m, _ = _model_and_opt(device)
    path = tmp_path / "m.safetensors"
    ot.save(m.state_dict(), path)
    on_cpu = ot.load(path, map_location="cpu")
    assert all(t.device == ot.device("cpu") for t in on_cpu.values())
    back = ot.load(path, map_location=ot.device(device))
    assert all(t.device == ot.device(device) for t in back.values())
    mapped = ot.load(path, map_location={str(ot.device(device)): "cpu"})
    assert all(t.device == ot.device("cpu") for t in mapped.values())
    fn = ot.load(path, map_location=lambda saved: "cpu")
    assert all(t.device == ot.device("cpu") for t in fn.values())
    cpu_model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))
    cpu_model.load_state_dict(on_cpu)
    x = ot.randn(2, 3)
    m.eval(), cpu_model.eval()
    np.testing.assert_allclose(cpu_model(x).detach().numpy(),
                               m(x.to(device)).detach().cpu().numpy(), rtol=1e-5, atol=1e-6)


def test_parameters_and_requires_grad_survive(tmp_path):
    p = nn.Parameter(ot.ones(2))
    t = ot.zeros(3, requires_grad=True)
    ot.save({"p": p, "t": t, "plain": ot.ones(1)}, tmp_path / "p.st")
    back = ot.load(tmp_path / "p.st")
    assert isinstance(back["p"], nn.Parameter) and back["p"].requires_grad
    assert back["t"].requires_grad and not back["plain"].requires_grad


def test_file_objects(tmp_path):
    import io
    buf = io.BytesIO()
    ot.save({"a": ot.arange(3)}, buf)
    buf.seek(0)
    assert ot.load(buf)["a"].tolist() == [0, 1, 2]


class _Exploit:
    def __reduce__(self):
        return (os.system, ("touch " + os.environ.get("OT_MARKER", "/nonexistent/x"),))


def test_pickle_is_refused_without_running_code(tmp_path, monkeypatch):
    marker = tmp_path / "pwned"
    monkeypatch.setenv("OT_MARKER", str(marker))
    evil = tmp_path / "evil.pt"
    evil.write_bytes(pickle.dumps({"weights": _Exploit()}))
    with pytest.raises(CheckpointError, match="pickle"):
        ot.load(evil)
    assert not marker.exists()
    zipped = tmp_path / "torch_style.pt"
    zipped.write_bytes(b"PK\x03\x04" + b"\x00" * 64)
    with pytest.raises(CheckpointError, match="zip archive"):
        ot.load(zipped)
    with pytest.raises(TypeError, match="not pickled"):
        pickle.dumps(ot.ones(2))
    with pytest.raises(TypeError, match="cannot save an object of type _Exploit"):
        ot.save({"x": _Exploit()}, tmp_path / "no.st")
    assert not (tmp_path / "no.st").exists()


def test_truncated_corrupted_and_foreign_files(tmp_path):
    good = tmp_path / "good.st"
    ot.save({"w": ot.randn(64, 64), "b": ot.zeros(64)}, good)
    data = good.read_bytes()
    for cut, what in ((4, "truncated"), (20, "truncated"), (len(data) - 100, "truncated")):
        bad = tmp_path / f"cut{cut}.st"
        bad.write_bytes(data[:cut])
        with pytest.raises(CheckpointError, match=what):
            ot.load(bad)
    junk = tmp_path / "junk.st"
    junk.write_bytes(struct.pack("<Q", 12) + b"{not json!!}" + b"\x00" * 8)
    with pytest.raises(CheckpointError, match="corrupted"):
        ot.load(junk)
    huge = tmp_path / "huge.st"
    huge.write_bytes(struct.pack("<Q", 1 << 60) + b"{}")
    with pytest.raises(CheckpointError, match="implausible"):
        ot.load(huge)
    import safetensors.numpy as stn
    foreign = tmp_path / "foreign.safetensors"
    stn.save_file({"w": np.ones(3, np.float32)}, str(foreign))
    with pytest.raises(CheckpointError, match="not an omnitensor checkpoint"):
        ot.load(foreign)
    # a header that names a tensor the body lacks
    tree = data[8:8 + struct.unpack("<Q", data[:8])[0]].replace(b'"t1"', b'"t9"', 1)
    broken = tmp_path / "broken.st"
    broken.write_bytes(struct.pack("<Q", len(tree)) + tree + data[8 + len(tree):])
    with pytest.raises(CheckpointError):
        ot.load(broken)


def test_atomic_write_keeps_old_file_on_failure(tmp_path):
    path = tmp_path / "ckpt.st"
    ot.save({"v": ot.ones(2)}, path)
    with pytest.raises(TypeError):
        ot.save({"v": ot.zeros(2), "bad": object()}, path)
    assert ot.load(path)["v"].tolist() == [1.0, 1.0]
    ot.save({"v": ot.zeros(2)}, path)
    assert ot.load(path)["v"].tolist() == [0.0, 0.0]
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.st"]   # no temp files left


def test_missing_safetensors_names_the_extra(tmp_path):
    """The safetensors format needs the package and says which extra installs it; torch's
    zip format (the default) needs nothing."""
    code = ("import sys; sys.modules['safetensors'] = None; sys.modules['safetensors.numpy'] = "
            "None\nimport omnitensor as ot\ntry:\n    ot.save({'a': ot.ones(1)}, 'x', "
            "format='safetensors')\nexcept ImportError as e:\n    print(e)\n"
            "ot.save({'a': ot.ones(1)}, 'y')\nprint(ot.load('y')['a'].tolist())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert "pip install 'omnitensor[checkpoint]'" in out.stdout, out.stderr
    assert "[1.0]" in out.stdout, out.stderr


def test_header_lengths_whose_low_byte_looks_like_a_pickle(tmp_path):
    """The first byte of a safetensors file is the header length's low byte: 0x80 (and
    0x80 0x02, a pickle-2 prefix) must still load."""
    import struct
    path = tmp_path / "c.ot"
    hits = 0
    for n in range(200):
        ot.save({"k" * n: 1, "w": ot.ones(2)}, path, format="safetensors")
        raw = path.read_bytes()
        (length,) = struct.unpack("<Q", raw[:8])
        hits += raw[0] == 0x80
        back = ot.load(path)
        assert back["k" * n] == 1 and back["w"].tolist() == [1.0, 1.0], length
    assert hits, "no header length with low byte 0x80 was exercised"


def test_saved_file_permissions_follow_umask(tmp_path):
    import stat
    old = os.umask(0o022)
    try:
        ot.save({"a": 1}, tmp_path / "p.ot")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "p.ot").st_mode) == 0o644
