"""Checkpoints both ways with real torch (the oracle): torch.save -> omnitensor.load on
every device, omnitensor.save -> torch.load(weights_only=True), value by value and bit by
bit, for every dtype, views sharing storage, real models' and optimizers' state dicts, the
legacy formats, map_location's forms, mmap, and scripts run under omnitensor.as_torch."""
from __future__ import annotations

import io
import pickle
import struct
import subprocess
import sys
import tarfile
import textwrap
from collections import OrderedDict

import numpy as np
import pytest

import omnitensor as ot
from omnitensor.serialization import LoadedStorage

torch = pytest.importorskip("torch")
tnn = torch.nn

DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
          "uint8", "uint16", "uint32", "uint64", "bool", "complex64", "complex128"]


def _torch_tensor(name: str, seed: int = 0) -> "torch.Tensor":
    rng = np.random.default_rng(seed)
    if name == "bfloat16":
        return torch.from_numpy(_special(rng.standard_normal(7).astype(np.float32))).bfloat16()
    dt = np.dtype(name if name != "bool" else np.bool_)
    if dt.kind == "f":
        arr = _special(rng.standard_normal(7).astype(dt))
    elif dt.kind == "c":
        arr = (rng.standard_normal(7) + 1j * rng.standard_normal(7)).astype(dt)
    elif dt.kind == "b":
        arr = rng.integers(0, 2, 7).astype(bool)
    else:
        info = np.iinfo(dt)
        arr = rng.integers(info.min, info.max, 7, dtype=dt, endpoint=True)
        arr[:2] = [info.min, info.max]
    return torch.from_numpy(arr)


def _special(arr: np.ndarray) -> np.ndarray:
    arr[:3] = [np.nan, np.inf, -0.0]
    return arr


def _host(t) -> np.ndarray:
    """A torch tensor's values as NumPy, bfloat16 bit for bit (NaN payloads too)."""
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ot.bfloat16.np)
    return t.numpy()


def _tbytes(t) -> np.ndarray:
    """A torch tensor's bytes (bit-exact comparison, NaNs included)."""
    return t.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy()


def _obytes(t) -> np.ndarray:
    return np.ascontiguousarray(t.detach().cpu().numpy()).reshape(-1).view(np.uint8)


def _tag(device: str) -> bytes:
    """The location torch's files carry for ``device``: CUDA devices keep theirs (real
    torch on a CPU build then needs map_location="cpu", as for its own CUDA checkpoints;
    the tests pass it), every other device is saved as cpu."""
    dev = ot.device(device)
    return (str(dev) if dev.type == "cuda" else "cpu").encode()


def _supports(device: str, name: str) -> bool:
    return ot.device(device).supports_dtype(getattr(ot, name))


# ---------------------------------------------------------------------- dtypes
def test_torch_save_every_dtype_loads_on_every_device(tmp_path, device):
    names = [n for n in DTYPES if _supports(device, n)]
    theirs = {n: _torch_tensor(n, i) for i, n in enumerate(names)}
    torch.save(theirs, tmp_path / "t.pt")
    mine = ot.load(tmp_path / "t.pt", map_location=device)
    assert list(mine) == names
    for n in names:
        assert mine[n].dtype.name == n and str(mine[n].device) == str(ot.device(device)), n
        np.testing.assert_array_equal(_obytes(mine[n]), _tbytes(theirs[n]), err_msg=n)


def test_omnitensor_save_every_dtype_reads_in_torch(tmp_path, device):
    names = [n for n in DTYPES if _supports(device, n)]
    want = {n: _torch_tensor(n, i) for i, n in enumerate(names)}
    mine = {n: ot.tensor(_host(t), device=device, dtype=getattr(ot, n)) for n, t in want.items()}
    ot.save(mine, tmp_path / "o.pt")
    import json
    import zipfile
    with zipfile.ZipFile(tmp_path / "o.pt") as zf:
        pkl, records = zf.read("archive/data.pkl"), zf.namelist()
        dev = ot.device(device)
        assert _tag(device) in pkl
        if dev.type not in ("cpu", "cuda"):  # torch sees cpu tags; the device is on the side
            assert str(dev).encode() not in pkl
            side = json.loads(zf.read("archive/.data/omnitensor_devices"))
            assert set(side.values()) == {str(dev)} and len(side) == len(names)
        else:
            assert "archive/.data/omnitensor_devices" not in records
    got = torch.load(tmp_path / "o.pt", weights_only=True, map_location="cpu")
    for n in names:
        assert str(got[n].dtype) == f"torch.{n}" and got[n].device.type == "cpu", n
        np.testing.assert_array_equal(_tbytes(got[n]), _tbytes(want[n]), err_msg=n)
    back = ot.load(tmp_path / "o.pt")  # and back onto the device it was saved from
    assert all(str(back[n].device) == str(ot.device(device)) for n in names)


def test_zero_size_zero_dim_and_non_contiguous(tmp_path):
    theirs = {"empty": torch.zeros(0, 3), "scalar": torch.tensor(2.5),
              "strided": torch.arange(12.).reshape(3, 4)[:, ::2], "t": torch.ones(2, 3).t()}
    torch.save(theirs, tmp_path / "t.pt")
    mine = ot.load(tmp_path / "t.pt")
    for k, v in theirs.items():
        assert mine[k].shape == tuple(v.shape) and mine[k].tolist() == v.tolist(), k
    arr = np.arange(6.0).reshape(2, 3).T  # a base that is not contiguous
    ot.save({"x": ot.from_numpy(arr), "s": ot.tensor(3)}, tmp_path / "o.pt")
    got = torch.load(tmp_path / "o.pt", weights_only=True)
    assert got["x"].tolist() == arr.tolist() and got["s"].item() == 3


# ---------------------------------------------------------------------- views
def _views(base):
    return OrderedDict(base=base, row=base[1], col=base[:, 2], t=base.t(),
                       block=base[1:3, 2:5], corner=base[2:4, 4:6], wide=base[3, 1:],
                       step=base[:, ::2], expanded=base[0, :1].expand(3, 1))


def test_torch_views_come_back_sharing_memory(tmp_path, device):
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    torch.save(_views(base), tmp_path / "v.pt")
    mine = ot.load(tmp_path / "v.pt", map_location=device)
    for k, v in _views(base).items():
        assert mine[k].shape == tuple(v.shape) and mine[k].cpu().tolist() == v.tolist(), k
    mine["base"].add_(100)  # one write through the base reaches every view
    for k, v in _views(base + 100).items():
        assert mine[k].cpu().tolist() == v.tolist(), k


def test_omnitensor_views_share_one_storage_in_torch(tmp_path, device):
    base = ot.arange(24, dtype=ot.float32, device=device).reshape(4, 6)
    ot.save(_views(base), tmp_path / "v.pt")
    got = torch.load(tmp_path / "v.pt", weights_only=True, map_location="cpu")
    ptrs = {k: v.untyped_storage().data_ptr() for k, v in got.items()}
    assert len(set(ptrs.values())) == 1, ptrs  # written once, shared on load
    for k, v in _views(base).items():
        assert got[k].tolist() == v.cpu().tolist(), k
    import zipfile
    names = zipfile.ZipFile(tmp_path / "v.pt").namelist()
    assert [n for n in names if "/data/" in n] == ["archive/data/0"]


def test_tied_weights_and_state_dict_aliases_share(tmp_path):
    emb = ot.nn.Embedding(10, 4)
    head = ot.nn.Linear(4, 10, bias=False)
    head.weight = emb.weight
    sd = {"emb": emb.state_dict(), "head": head.state_dict()}
    ot.save(sd, tmp_path / "tied.pt")
    got = torch.load(tmp_path / "tied.pt", weights_only=True)
    assert got["emb"]["weight"].data_ptr() == got["head"]["weight"].data_ptr()
    back = ot.load(tmp_path / "tied.pt")
    back["emb"]["weight"].fill_(3.0)
    assert back["head"]["weight"].tolist() == [[3.0] * 4] * 10


def test_overlapping_layout_is_copied(tmp_path):
    base = torch.arange(10.)
    torch.save({"win": base.as_strided((4, 3), (2, 1))}, tmp_path / "w.pt")
    assert ot.load(tmp_path / "w.pt")["win"].tolist() == base.as_strided((4, 3), (2, 1)).tolist()


# ---------------------------------------------------------------------- models
class TorchCNN(tnn.Module):
    def __init__(self):
        super().__init__()
        self.features = tnn.Sequential(tnn.Conv2d(3, 8, 3, padding=1), tnn.BatchNorm2d(8),
                                       tnn.ReLU(), tnn.MaxPool2d(2))
        self.head = tnn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


class OtCNN(ot.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = ot.nn.Sequential(ot.nn.Conv2d(3, 8, 3, padding=1),
                                         ot.nn.BatchNorm2d(8), ot.nn.ReLU(), ot.nn.MaxPool2d(2))
        self.head = ot.nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def _trained_torch_cnn():
    torch.manual_seed(0)
    m = TorchCNN()
    m(torch.randn(4, 3, 8, 8))  # BatchNorm running stats move
    return m.eval()


def test_torch_cnn_state_dict_drives_an_omnitensor_model(tmp_path, device):
    tm = _trained_torch_cnn()
    torch.save(tm.state_dict(), tmp_path / "cnn.pt")
    sd = ot.load(tmp_path / "cnn.pt", map_location=device)
    assert type(sd) is OrderedDict and list(sd) == list(tm.state_dict())
    om = OtCNN().to(device)
    om.load_state_dict(sd)
    om.eval()
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(om(ot.tensor(x, device=device)).detach().cpu().numpy(),
                               tm(torch.from_numpy(x)).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_omnitensor_cnn_state_dict_drives_a_torch_model(tmp_path, device):
    ot.manual_seed(0)
    om = OtCNN().to(device)
    om(ot.randn(4, 3, 8, 8, device=device))
    om.eval()
    ot.save(om.state_dict(), tmp_path / "cnn.pt")
    tm = TorchCNN()
    tm.load_state_dict(torch.load(tmp_path / "cnn.pt", weights_only=True, map_location="cpu"))
    tm.eval()
    x = np.random.default_rng(2).standard_normal((2, 3, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(tm(torch.from_numpy(x)).detach().numpy(),
                               om(ot.tensor(x, device=device)).detach().cpu().numpy(),
                               rtol=1e-4, atol=1e-5)


def test_transformer_state_dict_both_ways(tmp_path, device):
    torch.manual_seed(0)
    tm = tnn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True).eval()
    torch.save(tm.state_dict(), tmp_path / "enc.pt")
    om = ot.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True).to(device)
    om.load_state_dict(ot.load(tmp_path / "enc.pt", map_location=device))
    om.eval()
    x = np.random.default_rng(3).standard_normal((2, 5, 16)).astype(np.float32)
    want = tm(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(om(ot.tensor(x, device=device)).detach().cpu().numpy(), want,
                               rtol=1e-4, atol=1e-5)
    ot.save(om.state_dict(), tmp_path / "back.pt")
    tm2 = tnn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True).eval()
    tm2.load_state_dict(torch.load(tmp_path / "back.pt", weights_only=True, map_location="cpu"))
    np.testing.assert_allclose(tm2(torch.from_numpy(x)).detach().numpy(), want, rtol=1e-6)


def test_adam_state_after_a_step_both_ways(tmp_path):
    torch.manual_seed(0)
    tlin = tnn.Linear(3, 2)
    topt = torch.optim.Adam(tlin.parameters(), lr=0.1)
    x = torch.randn(4, 3)
    tlin(x).sum().backward()
    topt.step()
    torch.save({"model": tlin.state_dict(), "optim": topt.state_dict(), "epoch": 1},
               tmp_path / "ck.pt")
    ck = ot.load(tmp_path / "ck.pt")
    olin = ot.nn.Linear(3, 2)
    olin.load_state_dict(ck["model"])
    oopt = ot.optim.Adam(olin.parameters(), lr=0.1)
    oopt.load_state_dict(ck["optim"])
    assert ck["epoch"] == 1 and ck["optim"]["param_groups"][0]["betas"] == (0.9, 0.999)
    # one more step on each side, from the same state: the same parameters
    for opt, lin, xx in ((topt, tlin, x), (oopt, olin, ot.tensor(x.numpy()))):
        opt.zero_grad()
        lin(xx).sum().backward()
        opt.step()
    np.testing.assert_allclose(olin.weight.detach().numpy(), tlin.weight.detach().numpy(),
                               rtol=1e-6)
    # and back: omnitensor's optimizer state drives torch's Adam
    ot.save(oopt.state_dict(), tmp_path / "oopt.pt")
    topt2 = torch.optim.Adam(tlin.parameters(), lr=0.1)
    topt2.load_state_dict(torch.load(tmp_path / "oopt.pt", weights_only=True))
    assert float(topt2.state_dict()["state"][0]["step"]) == 2


def test_parameters_plain_data_and_containers_both_ways(tmp_path):
    theirs = {"p": tnn.Parameter(torch.ones(2)), "frozen": tnn.Parameter(torch.ones(1), False),
              "g": torch.zeros(2, requires_grad=True), "size": torch.Size([2, 3]),
              "dtype": torch.float16, "dev": torch.device("cpu"), "raw": b"\x00\xff",
              "tags": {"a", "b"}, "c": 1 + 2j, "nested": [(1, 2.5, None, "s", True)],
              "big": 1 << 70, "neg": -(1 << 40), "ba": bytearray(b"xy")}
    torch.save(theirs, tmp_path / "t.pt")
    mine = ot.load(tmp_path / "t.pt")
    assert isinstance(mine["p"], ot.nn.Parameter) and mine["p"].requires_grad
    assert isinstance(mine["frozen"], ot.nn.Parameter) and not mine["frozen"].requires_grad
    assert mine["g"].requires_grad and mine["size"] == ot.Size([2, 3])
    assert mine["dtype"] is ot.float16 and mine["dev"] == ot.device("cpu")
    for k in ("raw", "tags", "c", "nested", "big", "neg", "ba"):
        assert mine[k] == theirs[k] and type(mine[k]) is type(theirs[k]), k
    ot.save(mine, tmp_path / "o.pt")
    back = torch.load(tmp_path / "o.pt", weights_only=True)
    assert isinstance(back["p"], tnn.Parameter) and back["p"].requires_grad
    assert not back["frozen"].requires_grad and back["g"].requires_grad
    assert back["size"] == torch.Size([2, 3]) and back["dtype"] is torch.float16
    for k in ("dev", "raw", "tags", "c", "nested", "big", "neg", "ba"):
        assert back[k] == theirs[k] and type(back[k]) is type(theirs[k]), k


def test_numpy_arrays_in_checkpoints(tmp_path):
    arr = np.arange(6, dtype=np.int16).reshape(2, 3)
    ot.save({"a": arr, "f": np.asfortranarray(arr.astype(np.float64))}, tmp_path / "n.pt")
    back = ot.load(tmp_path / "n.pt")  # numeric NumPy arrays: data, loaded by default
    assert back["a"].dtype == np.int16 and back["a"].tolist() == arr.tolist()
    assert back["f"].tolist() == arr.tolist()
    got = torch.load(tmp_path / "n.pt", weights_only=False)
    assert got["a"].tolist() == arr.tolist()
    torch.save({"a": arr}, tmp_path / "t.pt")
    assert ot.load(tmp_path / "t.pt")["a"].tolist() == arr.tolist()


# ---------------------------------------------------------------------- locations
def test_map_location_forms(tmp_path, device):
    torch.save({"w": torch.arange(4.)}, tmp_path / "t.pt")
    p = tmp_path / "t.pt"
    dev = ot.device(device)
    seen = []
    forms = [device, dev, {"cpu": device}, lambda storage, loc: storage.to(device),
             lambda storage, loc: seen.append((type(storage), loc)), lambda loc: device]
    for form in forms:
        w = ot.load(p, map_location=form)["w"]
        want = "cpu" if form is forms[4] else str(dev)
        assert str(w.device) == want and w.tolist() == [0, 1, 2, 3], form
    assert seen == [(LoadedStorage, "cpu")]
    ot.save({"w": ot.ones(2, device=device)}, tmp_path / "o.pt")
    assert str(ot.load(tmp_path / "o.pt")["w"].device) == str(dev)  # where it was saved
    assert ot.load(tmp_path / "o.pt", map_location={str(dev): "cpu"})["w"].device.type == "cpu"
    cpu = ot.load(tmp_path / "o.pt", map_location=lambda s, loc: s.cpu())["w"]
    assert cpu.device.type == "cpu"


def test_a_device_that_is_absent_says_how_to_load_elsewhere(tmp_path):
    torch.save({"w": torch.ones(1)}, tmp_path / "t.pt")
    try:
        ot.zeros(1, device="cuda")
        pytest.skip("this machine has a cuda device")
    except Exception:
        pass
    with pytest.raises(RuntimeError, match="map_location='cpu'"):
        ot.load(tmp_path / "t.pt", map_location="cuda:0")


def test_mmap_shares_the_mapping(tmp_path):
    w = torch.arange(1 << 12, dtype=torch.float32)
    torch.save({"w": w, "v": w[10:20]}, tmp_path / "m.pt")
    before = (tmp_path / "m.pt").read_bytes()
    sd = ot.load(tmp_path / "m.pt", mmap=True)
    assert sd["w"].tolist() == w.tolist() and sd["v"].tolist() == w[10:20].tolist()
    sd["w"].add_(1)  # copy-on-write pages: the view sees it, the file does not
    assert sd["v"][0].item() == 11.0 and (tmp_path / "m.pt").read_bytes() == before
    ot.save({"x": ot.ones(3)}, tmp_path / "o.pt")
    assert ot.load(tmp_path / "o.pt", mmap=True)["x"].tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="file path"):
        ot.load(io.BytesIO(before), mmap=True)


def test_saved_records_are_aligned_for_mmap(tmp_path):
    import zipfile
    ot.save({f"t{i}": ot.ones(i + 1) for i in range(5)}, tmp_path / "a.pt")
    raw = (tmp_path / "a.pt").read_bytes()
    for info in zipfile.ZipFile(tmp_path / "a.pt").infolist():
        n, e = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
        assert (info.header_offset + 30 + n + e) % 64 == 0, info.filename
    assert torch.load(tmp_path / "a.pt", mmap=True, weights_only=True)["t4"].tolist() == [1.0] * 5


def test_streams_both_ways():
    buf = io.BytesIO()
    torch.save({"a": torch.arange(3)}, buf)
    assert ot.load(io.BytesIO(buf.getvalue()))["a"].tolist() == [0, 1, 2]
    out = io.BytesIO()
    ot.save({"a": ot.arange(3)}, out)
    out.seek(0)
    assert torch.load(out, weights_only=True)["a"].tolist() == [0, 1, 2]


# ---------------------------------------------------------------------- legacy formats
def test_legacy_raw_format_both_ways(tmp_path, device):
    base = torch.arange(12.).reshape(3, 4)
    theirs = {"w": base, "row": base[1], "b": torch.ones(2, dtype=torch.bfloat16),
              "i": torch.tensor([1, 2], dtype=torch.int64), "p": tnn.Parameter(torch.ones(2))}
    torch.save(theirs, tmp_path / "old.pt", _use_new_zipfile_serialization=False)
    mine = ot.load(tmp_path / "old.pt", map_location=device)
    for k, v in theirs.items():
        assert mine[k].cpu().tolist() == v.tolist(), k
    assert isinstance(mine["p"], ot.nn.Parameter)
    mine["w"].add_(1)
    assert mine["row"].cpu().tolist() == (base[1] + 1).tolist()  # shared storage
    ot.save(mine, tmp_path / "mine_old.pt", _use_new_zipfile_serialization=False)
    assert (tmp_path / "mine_old.pt").read_bytes()[:2] == b"\x80\x02"
    got = torch.load(tmp_path / "mine_old.pt", weights_only=True, map_location="cpu")
    assert got["row"].tolist() == (base[1] + 1).tolist()
    assert got["row"].untyped_storage().data_ptr() == got["w"].untyped_storage().data_ptr()


def _tar_checkpoint(path):
    """A pre-0.4 tar checkpoint, built as torch wrote it (its members and framing), with
    real torch's classes pickled by Python's pickler."""
    def member(tar, name, data):
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))

    storages = io.BytesIO()
    pickle.dump(1, storages, protocol=2)
    pickle.dump((10, "cpu", torch.FloatStorage), storages, protocol=2)  # one key space
    storages.write(struct.pack("<q", 6) + np.arange(6, dtype=np.float32).tobytes())
    pickle.dump([], storages, protocol=2)
    tensors = io.BytesIO()
    pickle.dump(2, tensors, protocol=2)
    for key, size, stride, offset in ((0, (2, 3), (3, 1), 0), (1, (3,), (1,), 3)):
        pickle.dump((key, 10, torch.FloatTensor), tensors, protocol=2)
        tensors.write(struct.pack("<i4x", len(size)) +
                      struct.pack(f"<{2 * len(size) + 1}q", *size, *stride, offset))

    class Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            return obj[1] if isinstance(obj, tuple) and obj[:1] == ("tensor",) else None

    main = io.BytesIO()
    Pickler(main, protocol=2).dump({"w": ("tensor", "0"), "row": ("tensor", "1"), "n": 7})
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        member(tar, "sys_info", pickle.dumps({"little_endian": True}, protocol=2))
        member(tar, "pickle", main.getvalue())
        member(tar, "tensors", tensors.getvalue())
        member(tar, "storages", storages.getvalue())


def test_legacy_tar_format(tmp_path):
    _tar_checkpoint(tmp_path / "tar.pt")
    theirs = torch.load(tmp_path / "tar.pt", weights_only=False)  # the crafted file is torch's
    mine = ot.load(tmp_path / "tar.pt")  # weights_only=True: torch refuses tar files here
    assert mine["n"] == 7 and mine["w"].tolist() == theirs["w"].tolist()
    assert mine["row"].tolist() == theirs["row"].tolist() == [3.0, 4.0, 5.0]
    mine["w"].mul_(2)
    assert mine["row"].tolist() == [6.0, 8.0, 10.0]


# ---------------------------------------------------------------------- whole objects
def test_real_torch_whole_model_loads_as_omnitensor_modules_when_trusted(tmp_path):
    tm = _trained_torch_cnn()
    torch.save(tm.features, tmp_path / "whole.pt")
    with pytest.raises(ot.serialization.WeightsOnlyError, match="Sequential"):
        ot.load(tmp_path / "whole.pt")
    assert ot.serialization.get_unsafe_globals_in_checkpoint(tmp_path / "whole.pt") == [
        "torch.nn.modules.activation.ReLU", "torch.nn.modules.batchnorm.BatchNorm2d",
        "torch.nn.modules.container.Sequential", "torch.nn.modules.conv.Conv2d",
        "torch.nn.modules.pooling.MaxPool2d"]
    # torch's paths match omnitensor's classes of the same name (torch is omnitensor under
    # as_torch): allowlisting them loads the real torch model safely
    classes = [ot.nn.Sequential, ot.nn.Conv2d, ot.nn.BatchNorm2d, ot.nn.ReLU, ot.nn.MaxPool2d]
    with ot.serialization.safe_globals(classes):
        allowed = ot.load(tmp_path / "whole.pt")
    om = ot.load(tmp_path / "whole.pt", weights_only=False)
    assert type(om) is ot.nn.Sequential and isinstance(om[0], ot.nn.Conv2d)
    assert type(allowed) is ot.nn.Sequential and isinstance(allowed[1], ot.nn.BatchNorm2d)
    x = np.random.default_rng(4).standard_normal((1, 3, 8, 8)).astype(np.float32)
    for m in (om, allowed):
        np.testing.assert_allclose(m(ot.tensor(x)).detach().numpy(),
                                   tm.features(torch.from_numpy(x)).detach().numpy(), atol=1e-5)


SCRIPT = """
import sys
import numpy as np
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
assert torch.save.__module__.startswith("omnitensor"), torch.save.__module__
torch.save(model.state_dict(), sys.argv[1])
np.savez(sys.argv[2], **{k: v.detach().cpu().numpy() for k, v in model.state_dict().items()})
"""


def test_as_torch_script_writes_a_file_real_torch_loads(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(SCRIPT))
    out = subprocess.run([sys.executable, "-m", "omnitensor.as_torch", str(script),
                          str(tmp_path / "m.pt"), str(tmp_path / "ref.npz")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    sd = torch.load(tmp_path / "m.pt", weights_only=True)
    ref = np.load(tmp_path / "ref.npz")
    assert list(sd) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    for k, v in sd.items():
        np.testing.assert_array_equal(v.numpy(), ref[k])
    model = tnn.Sequential(tnn.Linear(4, 3), tnn.ReLU(), tnn.Linear(3, 2))
    model.load_state_dict(sd)
