"""Hostile and damaged torch-format checkpoints: the default load (weights_only=True) runs
nothing a file names (a marker file a payload would create stays absent), refuses with a
``pickle.UnpicklingError`` that names the global, and answers damage with CheckpointError;
a file costs at most a small multiple of its own size."""
from __future__ import annotations

import io
import os
import pickle
import random
import struct
import subprocess
import sys
import tarfile
import zipfile

import pytest

import omnitensor as ot
from omnitensor.serialization import (CheckpointError, WeightsOnlyError, add_safe_globals,
                                      clear_safe_globals, get_unsafe_globals_in_checkpoint)

torch = pytest.importorskip("torch")
REFUSED = (CheckpointError, WeightsOnlyError)


def _zip(path, pkl: bytes, records: dict | None = None, method=zipfile.ZIP_STORED):
    """A torch-style archive holding ``pkl`` as data.pkl (what an attacker writes)."""
    with zipfile.ZipFile(path, "w", compression=method) as zf:
        zf.writestr("archive/data.pkl", pkl)
        for name, data in (records or {}).items():
            zf.writestr(f"archive/{name}", data)
        zf.writestr("archive/version", "3\n")
    return path


def _rezip(src, dst, pkl: bytes):
    """``src`` (a real torch zip) with its data.pkl replaced (CRCs recomputed)."""
    with zipfile.ZipFile(src) as zf:
        records = {i.filename.split("/", 1)[1]: zf.read(i) for i in zf.infolist()}
    records.pop("data.pkl")
    records.pop("version", None)
    return _zip(dst, pkl, records)


def _pkl(src) -> bytes:
    with zipfile.ZipFile(src) as zf:
        return zf.read(next(n for n in zf.namelist() if n.endswith("/data.pkl")))


@pytest.fixture
def marker(tmp_path):
    path = tmp_path / "pwned"
    yield path
    assert not path.exists() or path.read_text() == "expected", "a payload ran"


class _Payload:
    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def _payloads(marker):
    touch = f"touch {marker}"
    return [
        (os.system, (touch,)),
        (eval, (f"open({str(marker)!r}, 'w')",)),
        (exec, (f"open({str(marker)!r}, 'w')",)),
        (subprocess.call, (["touch", str(marker)],)),
        (getattr, ("touch", "upper")),
        (__import__, ("os",)),
        (open, (str(marker), "w")),
        (pickle.loads, (b"\x80\x02cos\nsystem\nq\x00.",)),
    ]


@pytest.mark.parametrize("protocol", [2, 4])
def test_reduce_payloads_raise_and_run_nothing(tmp_path, marker, protocol):
    for i, (func, args) in enumerate(_payloads(marker)):
        pkl = pickle.dumps({"w": _Payload(func, *args)}, protocol=protocol)
        path = _zip(tmp_path / f"evil{i}.pt", pkl)
        with pytest.raises(WeightsOnlyError) as e:
            ot.load(path)
        assert isinstance(e.value, pickle.UnpicklingError)
        name = getattr(func, "__name__", "")
        assert name in str(e.value), (func, str(e.value)[-300:])
        assert not marker.exists(), func


def test_refusal_names_the_global_and_add_safe_globals(tmp_path):
    pkl = pickle.dumps(_Payload(getattr, "abc", "upper"), protocol=2)
    with pytest.raises(pickle.UnpicklingError, match=r"builtins\.getattr") as e:
        ot.load(_zip(tmp_path / "g.pt", pkl))
    assert "add_safe_globals([getattr])" in str(e.value)
    assert "weights_only=False" in str(e.value)


def test_blocked_modules_stay_blocked_when_allowlisted(tmp_path, marker):
    pkl = pickle.dumps(_Payload(os.system, f"touch {marker}"), protocol=2)
    try:
        add_safe_globals([os.system, (os.system, "posix.system")])
        with pytest.raises(WeightsOnlyError, match="never allowed"):
            ot.load(_zip(tmp_path / "b.pt", pkl))
    finally:
        clear_safe_globals()
    assert not marker.exists()


def test_code_running_opcodes_are_refused(tmp_path, marker):
    cases = {
        "INST": b"(S'touch " + str(marker).encode() + b"'\nios\nsystem\n.",
        "OBJ": b"\x80\x02(ccollections\nOrderedDict\no.",
        "EXT1": b"\x80\x02\x82\x01.",
        "PERSID": b"\x80\x02P0\n.",
    }
    for name, pkl in cases.items():
        with pytest.raises(REFUSED, match=name):
            ot.load(_zip(tmp_path / f"{name}.pt", pkl))
    assert not marker.exists()


def test_build_and_newobj_on_objects_that_are_not_allowed(tmp_path):
    build_list = b"\x80\x02]}(X\x01\x00\x00\x00aK\x01ub."  # [] .__setstate__({'a': 1})
    with pytest.raises(WeightsOnlyError, match="BUILD"):
        ot.load(_zip(tmp_path / "bl.pt", build_list))
    newobj = b"\x80\x02ccollections\nOrderedDict\n)\x81."  # OrderedDict.__new__
    with pytest.raises(WeightsOnlyError, match="NEWOBJ"):
        ot.load(_zip(tmp_path / "no.pt", newobj))
    call_value = b"\x80\x02c__builtin__\nint\nX\x01\x00\x00\x007\x85R."  # int('7'): a value
    with pytest.raises(WeightsOnlyError, match="REDUCE"):
        ot.load(_zip(tmp_path / "cv.pt", call_value))
    # BUILD on a rebuilt tensor (torch's legacy set_): its storage is not ours to replace
    torch.save(torch.ones(2), tmp_path / "t.pt")
    pkl = _pkl(tmp_path / "t.pt")[:-1] + b"}X\x05\x00\x00\x00_dataK\x01sb."
    with pytest.raises(WeightsOnlyError, match="BUILD"):
        ot.load(_rezip(tmp_path / "t.pt", tmp_path / "tb.pt", pkl))


class TinyNet(ot.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = ot.nn.Linear(2, 2)

    def forward(self, x):
        return self.fc(x)


def test_whole_model_zip_default_load_never_imports_what_the_file_names(tmp_path,
                                                                        monkeypatch):
    """As tests/compat/test_checkpoint_objects.py does for the safetensors format: the
    class's module is rewritten to an importable module whose import leaves a mark."""
    model = TinyNet()
    ot.save(model, tmp_path / "m.pt")
    orig = TinyNet.__module__
    probe, mark = "ot_probe_module_26", tmp_path / "imported"
    (tmp_path / f"{probe}.py").write_text(
        f"import pathlib, sys\npathlib.Path({str(mark)!r}).touch()\n"
        f"TinyNet = sys.modules[{orig!r}].TinyNet\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, probe, raising=False)
    pkl = _pkl(tmp_path / "m.pt")
    assert f"c{orig}\nTinyNet\n".encode() in pkl
    bad = _rezip(tmp_path / "m.pt", tmp_path / "bad.pt",
                 pkl.replace(f"{orig}\nTinyNet".encode(), f"{probe}\nTinyNet".encode()))
    with pytest.raises(WeightsOnlyError, match=f"Unsupported global: {probe}.TinyNet"):
        ot.load(bad)
    assert probe not in sys.modules and not mark.exists()
    with ot.serialization.safe_globals([TinyNet, ot.nn.Linear]):
        with pytest.raises(WeightsOnlyError, match=probe):  # allowlisted under its own name
            ot.load(bad)
        assert type(ot.load(tmp_path / "m.pt")) is TinyNet
    back = ot.load(bad, weights_only=False)  # trusted: the named module is imported
    assert mark.exists() and isinstance(back, TinyNet)
    x = ot.ones(1, 2)
    assert back(x).tolist() == model(x).tolist()


def test_legacy_and_tar_payloads(tmp_path, marker):
    from omnitensor.serialization.legacy_format import MAGIC
    head = b"".join(pickle.dumps(v, protocol=2) for v in
                    (MAGIC, 1001, {"little_endian": True}))
    evil = pickle.dumps(_Payload(os.system, f"touch {marker}"), protocol=2)
    (tmp_path / "raw.pt").write_bytes(head + evil + pickle.dumps([], protocol=2))
    with pytest.raises(WeightsOnlyError):
        ot.load(tmp_path / "raw.pt")
    with tarfile.open(tmp_path / "tar.pt", "w") as tar:
        for name, data in (("storages", pickle.dumps(0, protocol=2) +
                            pickle.dumps([], protocol=2)),
                           ("tensors", pickle.dumps(0, protocol=2)), ("pickle", evil)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    with pytest.raises(WeightsOnlyError):
        ot.load(tmp_path / "tar.pt")
    assert not marker.exists()


def test_weights_only_false_runs_the_code_as_documented(tmp_path, marker):
    pkl = pickle.dumps(_Payload(exec, f"open({str(marker)!r}, 'w').write('expected')"),
                       protocol=2)
    path = _zip(tmp_path / "trusted.pt", pkl)
    assert get_unsafe_globals_in_checkpoint(path) == ["builtins.exec"]
    assert not marker.exists()  # scanning ran nothing
    ot.load(path, weights_only=False)  # a full unpickler: a trusted file's code runs
    assert marker.read_text() == "expected"


# ------------------------------------------------------------------- sizes
def test_declared_sizes_are_checked_before_allocating(tmp_path):
    torch.save(torch.zeros(4), tmp_path / "t.pt")
    good = _pkl(tmp_path / "t.pt")
    assert b"K\x04t" in good  # numel 4, then TUPLE
    huge = good.replace(b"K\x04t", b"\x8a\x08" + (1 << 50).to_bytes(8, "little") + b"t", 1)
    with pytest.raises(CheckpointError, match="holds 16 bytes"):
        ot.load(_rezip(tmp_path / "t.pt", tmp_path / "h.pt", huge))
    # a tensor reaching past its storage
    past = good.replace(b"K\x04\x85", b"\x8a\x06" + (1 << 40).to_bytes(6, "little") + b"\x85", 1)
    with pytest.raises(CheckpointError, match="reaches past its storage"):
        ot.load(_rezip(tmp_path / "t.pt", tmp_path / "p.pt", past))


def test_overlapping_layout_costs_are_bounded(tmp_path):
    base = torch.zeros(1 << 16)
    torch.save({"w": base.as_strided((1 << 15, 1 << 15), (1, 1))}, tmp_path / "o.pt")
    with pytest.raises(CheckpointError, match="more than 2x the file's size"):
        ot.load(tmp_path / "o.pt")
    # an expanded (stride 0) view is a view: no copy, no charge
    torch.save({"e": torch.ones(1).expand(1 << 30)}, tmp_path / "e.pt")
    assert ot.load(tmp_path / "e.pt")["e"].shape == (1 << 30,)


def test_allocating_calls_and_lengths_are_bounded(tmp_path):
    cases = {
        "bytearray": b"\x80\x02c__builtin__\nbytearray\nJ\x00\xca\x9a;\x85R.",
        "truncated": b"\x80\x02X\xff\xff\xff\xff",
        "long4": b"\x80\x02\x8b\xff\xff\xff\x7f",
        "codec": b"\x80\x02c_codecs\nencode\nX\x01\x00\x00\x00aX\x04\x00\x00\x00zlib\x86R.",
        "stack": b"\x80\x02t.",
        "memo": b"\x80\x02h\x07.",
        "nostop": b"\x80\x02K\x01",
    }
    for name, pkl in cases.items():
        with pytest.raises(CheckpointError):
            ot.load(_zip(tmp_path / f"{name}.pt", pkl))


def test_deep_nesting_is_refused(tmp_path):
    # top-down through the memo: each level constant stack, so no mark depth limits it
    body = b"\x80\x02]r\x00\x00\x00\x00"
    for i in range(1, 1000):
        body += b"j" + struct.pack("<I", i - 1) + b"]r" + struct.pack("<I", i) + b"a0"
    body += b"."
    with pytest.raises(CheckpointError, match="nested more than"):
        ot.load(_zip(tmp_path / "deep.pt", body))
    nested: list = []
    for _ in range(400):
        nested = [nested]
    with pytest.raises(CheckpointError, match="nested more than"):
        ot.load(_zip(tmp_path / "deep2.pt", pickle.dumps(nested, protocol=2)))


# ------------------------------------------------------------------- damage
def _good(tmp_path):
    sd = {"w": torch.randn(8, 8), "b": torch.zeros(8, dtype=torch.int64), "step": 3,
          "names": ["a", "b"], "v": None}
    sd["row"] = sd["w"][2]
    torch.save(sd, tmp_path / "good.pt")
    return (tmp_path / "good.pt").read_bytes()


def test_truncated_archives_raise_checkpoint_error(tmp_path):
    data = _good(tmp_path)
    for cut in range(0, len(data), 7):
        (tmp_path / "cut.pt").write_bytes(data[:cut])
        with pytest.raises(CheckpointError):
            ot.load(tmp_path / "cut.pt")


def test_compressed_and_missing_records(tmp_path):
    _good(tmp_path)
    pkl = _pkl(tmp_path / "good.pt")
    with pytest.raises(CheckpointError, match="compressed"):
        ot.load(_zip(tmp_path / "c.pt", pkl, method=zipfile.ZIP_DEFLATED))
    with pytest.raises(CheckpointError, match="missing"):
        ot.load(_zip(tmp_path / "m.pt", pkl))  # no data/ records
    flipped = bytearray((tmp_path / "good.pt").read_bytes())
    at = flipped.index(b"archive" if b"archive" in flipped else b"good/data.pkl") + 200
    flipped[at] ^= 0xFF
    (tmp_path / "f.pt").write_bytes(bytes(flipped))
    with pytest.raises(CheckpointError):
        ot.load(tmp_path / "f.pt")


def test_mutated_pickles_fail_cleanly(tmp_path):
    """Random damage inside data.pkl, with CRCs recomputed so it reaches the unpickler:
    a load succeeds or raises CheckpointError / WeightsOnlyError, nothing else."""
    _good(tmp_path)
    pkl = _pkl(tmp_path / "good.pt")
    rng = random.Random(26)
    for i in range(300):
        data = bytearray(pkl)
        for _ in range(rng.randint(1, 3)):
            pos = rng.randrange(len(data))
            how = rng.choice(["flip", "cut", "insert"])
            if how == "flip":
                data[pos] = rng.randrange(256)
            elif how == "cut":
                del data[pos:]
            else:
                data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        path = _rezip(tmp_path / "good.pt", tmp_path / "mut.pt", bytes(data))
        try:
            ot.load(path)
        except REFUSED:
            pass
        except RuntimeError as e:  # restoring onto a device a mutated tag names
            assert "map_location" in str(e), (i, e)
