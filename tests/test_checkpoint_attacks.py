"""Hostile and damaged checkpoints: every case of issue 21 item 3. A crafted file costs at
most a small multiple of its own size, is refused before reading when it is not a regular
file, and fails with CheckpointError (never RecursionError/ValueError/TypeError from deep
inside, never a silent cast, never a NumPy object array); saves are atomic even when the
writer is killed."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import omnitensor as ot
from omnitensor.serialization import CheckpointError

st = pytest.importorskip("safetensors.numpy")


def _craft(path, tree, arrays=None, version=2):
    """A file with omnitensor's framing and an arbitrary structure (what an attacker
    writes by hand)."""
    meta = {"omnitensor": json.dumps({"format": "omnitensor.checkpoint", "version": version,
                                      "tree": tree})}
    data = st.save(arrays or {"t0": np.zeros(4, np.float32)}, metadata=meta)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _tensor_node(key="t0", dtype="float32", shape=(4,)):
    return {"__tensor__": True, "dtype": dtype, "shape": list(shape), "device": "cpu",
            "key": key}


# ------------------------------------------------------------------- amplification
def test_one_stored_tensor_named_by_many_nodes_is_refused(tmp_path):
    arr = np.zeros(1 << 20, np.float32)  # 4 MiB stored once
    tree = {"__list__": [_tensor_node(shape=arr.shape) for _ in range(1000)]}  # 4 GB if built
    p = _craft(tmp_path / "amp.ot", tree, {"t0": arr})
    with pytest.raises(CheckpointError, match="more than one node"):
        ot.load(p)


def test_references_share_one_tensor_without_copies(tmp_path):
    arr = np.arange(1 << 16, dtype=np.float32)
    first = dict(_tensor_node(shape=arr.shape), id=0)
    tree = {"__list__": [first] + [{"__ref__": 0}] * 1000}
    out = ot.load(_craft(tmp_path / "refs.ot", tree, {"t0": arr}))
    assert len(out) == 1001 and all(t is out[0] for t in out)


def test_materialised_bytes_bounded_by_file_size():
    from omnitensor.serialization import _Decoder
    arrays = {"t0": np.zeros(1 << 20, np.float32)}
    dec = _Decoder(arrays, None, "crafted", True, file_bytes=1000)  # claims a tiny file
    with pytest.raises(CheckpointError, match="more than 2x the file's size"):
        dec.decode(_tensor_node(shape=(1 << 20,)))


def test_implausible_header_length_is_refused(tmp_path):
    p = tmp_path / "hdr.ot"
    p.write_bytes((1 << 40).to_bytes(8, "little") + b"{" + b" " * 100)
    with pytest.raises(CheckpointError, match="implausible|truncated"):
        ot.load(p)
    p.write_bytes((5000).to_bytes(8, "little") + b"{}")  # header longer than the file
    with pytest.raises(CheckpointError, match="truncated"):
        ot.load(p)


# --------------------------------------------------------------- non-regular files
def test_symlink_to_dev_zero_is_refused_before_reading(tmp_path):
    link = tmp_path / "zero.ot"
    os.symlink("/dev/zero", link)
    t0 = time.perf_counter()
    with pytest.raises(CheckpointError, match="character device, not a regular file"):
        ot.load(link)
    assert time.perf_counter() - t0 < 5


def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.ot"
    os.mkfifo(fifo)
    result = {}

    def run():
        try:
            ot.load(fifo)
        except Exception as e:
            result["e"] = e
    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(10)
    assert not th.is_alive(), "load blocked on a FIFO"
    assert isinstance(result.get("e"), CheckpointError) and "FIFO" in str(result["e"])


def test_directory_is_refused(tmp_path):
    with pytest.raises(CheckpointError, match="directory"):
        ot.load(tmp_path)


# ----------------------------------------------------------- malformed structures
def test_deep_nesting_is_a_checkpoint_error(tmp_path):
    tree = "x"
    for _ in range(300):  # valid JSON, deeper than the decoder allows
        tree = {"__list__": [tree]}
    with pytest.raises(CheckpointError, match="nested"):
        ot.load(_craft(tmp_path / "deep.ot", tree))
    # deeper than json itself can parse: the metadata string is 100k brackets
    meta = {"omnitensor": "[" * 100000 + "]" * 100000}
    p = tmp_path / "deeper.ot"
    p.write_bytes(st.save({"t0": np.zeros(1, np.float32)}, metadata=meta))
    with pytest.raises(CheckpointError):
        ot.load(p)


def test_huge_int_is_a_checkpoint_error(tmp_path):
    meta = {"omnitensor": '{"format": "omnitensor.checkpoint", "version": 2, "tree": '
                          + "9" * 5000 + "}"}
    p = tmp_path / "int.ot"
    p.write_bytes(st.save({"t0": np.zeros(1, np.float32)}, metadata=meta))
    with pytest.raises(CheckpointError):
        ot.load(p)


@pytest.mark.parametrize("key", [{"__list__": [1, 2]}, {"__dict__": []},
                                 {"__set__": [1]}])
def test_unhashable_dict_key_is_a_checkpoint_error(tmp_path, key):
    tree = {"__dict__": [[key, 1]]}
    with pytest.raises(CheckpointError, match="not hashable"):
        ot.load(_craft(tmp_path / "key.ot", tree))


def test_header_dtype_disagreeing_with_structure_is_refused(tmp_path):
    tree = _tensor_node(dtype="int64")  # stored float32
    with pytest.raises(CheckpointError, match="stored as float32.*says int64"):
        ot.load(_craft(tmp_path / "dtype.ot", tree))


@pytest.mark.parametrize("dtype", ["object", "float64", "<U4"])
def test_ndarray_dtype_must_match_and_never_be_object(tmp_path, dtype):
    tree = {"__ndarray__": True, "dtype": dtype, "shape": [4], "key": "t0"}
    with pytest.raises(CheckpointError, match="stored as float32"):
        ot.load(_craft(tmp_path / "obj.ot", tree))


def test_bad_dtype_name_is_a_checkpoint_error(tmp_path):
    for bad in (["float32"], 7, "nope"):
        with pytest.raises(CheckpointError, match="bad dtype"):
            ot.load(_craft(tmp_path / "bad.ot", _tensor_node(dtype=bad)))


# --------------------------------------------------------------------- sharing
def test_shared_tensors_are_written_once_and_come_back_shared(tmp_path, device):
    w = ot.randn(64, 64, device=device)
    p = tmp_path / "shared.ot"
    ot.save({"a": w, "b": w, "nested": [w, {"c": w}]}, p, format="safetensors")
    stored = st.load_file(str(p))
    assert len(stored) == 1  # one copy of the data
    out = ot.load(p)
    assert out["a"] is out["b"] is out["nested"][0] is out["nested"][1]["c"]
    assert str(out["a"].device) == device
    np.testing.assert_array_equal(out["a"].cpu().numpy(), w.cpu().numpy())


def test_tied_parameters_stay_tied(tmp_path):
    emb = ot.nn.Embedding(10, 4)
    head = ot.nn.Linear(4, 10, bias=False)
    head.weight = emb.weight
    p = tmp_path / "tied.ot"
    ot.save({"emb": emb.state_dict(keep_vars=True), "head": head.state_dict(keep_vars=True)}, p)
    out = ot.load(p)
    assert out["emb"]["weight"] is out["head"]["weight"]


# ---------------------------------------------------------------- killed saves
SAVER = r"""
import sys, omnitensor as ot
x = ot.ones(1 << 25)             # 128 MiB: a write takes a while
print("ready", flush=True)
while True:
    ot.save({"x": x}, sys.argv[1])
"""


def _temps(directory):
    return [n for n in os.listdir(directory) if n.startswith(".omnitensor-")]


def _start_saver(tmp_path):
    target = tmp_path / "ckpt.ot"
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(SAVER), str(target)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    deadline = time.time() + 60
    while not _temps(tmp_path):  # wait until a write is in progress
        assert time.time() < deadline, "no save started"
        time.sleep(0.001)
    return proc, target


def test_sigterm_during_save_leaves_no_temporary_file(tmp_path):
    proc, target = _start_saver(tmp_path)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == -signal.SIGTERM  # still dies of the signal
    assert _temps(tmp_path) == []
    if target.exists():  # an earlier complete save, never a torn one
        assert ot.load(target)["x"].shape == (1 << 25,)


SIGNAL_AFTER_CREATE = r"""
import os, signal, sys, tempfile, omnitensor as ot
real_mkstemp = tempfile.mkstemp
def mkstemp(*args, **kwargs):  # SIGTERM the moment the temporary file exists
    made = real_mkstemp(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGTERM)
    return made
tempfile.mkstemp = mkstemp
ot.save({"x": ot.ones(4)}, sys.argv[1])
"""


def test_sigterm_as_the_temporary_file_is_created_leaves_none(tmp_path):
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(SIGNAL_AFTER_CREATE),
                           str(tmp_path / "early.ot")], timeout=120)
    assert proc.returncode == -signal.SIGTERM
    assert _temps(tmp_path) == []


HELD_SAVE = r"""
import os, sys, time, omnitensor as ot
def fsync(fd):  # the temporary file is written, not yet renamed: the save stops here
    print("held", flush=True)
    time.sleep(3600)
os.fsync = fsync
ot.save({"x": ot.ones(1 << 16)}, sys.argv[1])
"""


def test_stale_temporary_file_of_a_killed_save_is_removed_next_save(tmp_path):
    # killed while it holds its temporary file (a kill at a random moment of a save loop
    # could land between one save's rename and the next one's mkstemp: no file to find)
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(HELD_SAVE),
                             str(tmp_path / "ckpt.ot")], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
    finally:
        proc.kill()
        proc.wait(60)
    stale = _temps(tmp_path)
    assert stale, "kill -9 mid-write should leave the temporary file"
    live = tmp_path / f".omnitensor-{os.getpid()}-keep.tmp"  # a live writer's: kept
    live.write_bytes(b"x")
    ot.save({"y": ot.ones(3)}, tmp_path / "other.ot")
    assert _temps(tmp_path) == [live.name]
    assert ot.load(tmp_path / "other.ot")["y"].tolist() == [1.0, 1.0, 1.0]


def test_failed_save_leaves_no_temporary_file(tmp_path):
    (tmp_path / "dir.ot").mkdir()  # the rename onto a directory fails after the write
    with pytest.raises(OSError):
        ot.save({"x": ot.ones(3)}, tmp_path / "dir.ot")
    assert _temps(tmp_path) == []
