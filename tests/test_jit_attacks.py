"""Hostile ``omnitensor.jit`` files: a loaded program is checked like user code.

Each crafted file (``jit_crafted.py``: out-of-range constant and runtime indices for
``gather_nd``/``scatter_nd``, an out-of-range ``index`` and slice start, an incompatible
``broadcast_to``, a smaller ``assign`` source, a mismatched ``matmul``, a broadcast-then-sum
of 10^12 elements, uninitialised ``empty`` memory, mixed dtypes, lying shapes, a write
into a broadcast view) is loaded and called in a worker process on every device: each must
be refused with a clear error (at load, or where its indices are only known at run time,
at the call), never crash, hang or return memory it does not own. Files are also bounded:
a zip bomb, a FIFO, deep nesting and malformed fields give clear errors quickly.
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("safetensors")

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import omnitensor as ot  # noqa: E402
import jit_crafted as jc  # noqa: E402
from omnitensor.jit import ProgramError  # noqa: E402

#: cases refused while loading, and the words their error must contain
AT_LOAD = {
    "gather_nd_const_out_of_range": "out of range",
    "scatter_nd_const_out_of_range": "out of range",
    "index_int_out_of_range": "out of range",
    "index_slice_start_out_of_range": "reaches outside",
    "broadcast_to_oversized": "cannot broadcast",
    "assign_smaller_source": "does not broadcast",
    "matmul_mismatched": "cannot multiply",
    "broadcast_then_sum": "max_work",
    "dtype_mixed_operands": "one dtype",
    "undefined_value": "before it is defined",
    "declared_shape_lies": "declares",
    "write_into_broadcast_view": "broadcast view",
}
#: cases whose indices come from the call: refused by the inserted range check
AT_CALL = {"gather_nd_runtime_out_of_range", "gather_nd_runtime_negative"}


@pytest.fixture(scope="module")
def crafted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("crafted")
    sizes = {}
    for name, (meta, arrays, call) in jc.cases().items():
        path = folder / f"{name}.otj"
        sizes[name] = jc.write(str(path), meta, arrays)
        np.savez(str(path) + ".npz", **{f"a{i}": a for i, a in enumerate(call)})
    return folder, sizes


def _run_worker(device: str, folder: Path, timeout: float = 240) -> dict:
    """Every file's outcome in one worker process; a crash names the file it died in."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(HERE), str(HERE.parent), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(HERE / "jit_crafted.py"), device,
                           str(folder)], capture_output=True, text=True, env=env,
                          timeout=timeout)
    results, started = {}, None
    for line in proc.stdout.splitlines():
        msg = json.loads(line)
        if "start" in msg:
            started = msg["start"]
        else:
            results[msg["name"]] = msg
            started = None
    assert started is None and proc.returncode == 0, \
        f"the worker died (rc {proc.returncode}) in {started}: {proc.stderr[-3000:]}"
    return results


def test_crafted_files_are_small(crafted):
    _folder, sizes = crafted
    assert max(sizes.values()) < 1500, sizes


def test_crafted_programs_are_refused(device, crafted):
    folder, _ = crafted
    results = _run_worker(device, folder)
    assert len(results) == len(AT_LOAD) + len(AT_CALL) + 1
    for name, words in AT_LOAD.items():
        r = results[f"{name}.otj"]
        assert "loaded" not in r, f"{name} loaded: {r}"
        assert r.get("err") == "ProgramError" and words in r["msg"], (name, r)
    for name in AT_CALL:
        r = results[f"{name}.otj"]
        assert r.get("loaded") and r.get("err") == "RuntimeError" and \
            "index out of range" in r["msg"], (name, r)
    # ``empty`` replays as a zero fill: no call returns what memory held before
    r = results["empty_returned.otj"]
    assert r.get("ok") == [[0.0] * 8], r


def test_runtime_indices_in_range_still_run(device, tmp_path):
    meta, arrays, _ = jc.cases()["gather_nd_runtime_out_of_range"]
    path = tmp_path / "p.otj"
    jc.write(str(path), meta, arrays)
    m = ot.jit.load(str(path), map_location=device)
    x = ot.tensor(np.arange(4, dtype=np.float32) * 10, device=device)
    with ot.no_grad():
        y = m(x, ot.tensor(np.array([3, 1]), device=device))
    assert y.cpu().numpy().tolist() == [30.0, 10.0]


def test_limits_follow_explicit_arguments(tmp_path):
    x = jc.V(0, (4,))
    s, shape = jc.V(2, (1,)), (1 << 12, 1 << 10)
    meta, arrays = jc.program(
        [jc.x_input()],
        [jc.Node("index", (x, (slice(0, 1, 1),)), {}, (s,)),
         jc.Node("broadcast_to", (s, shape), {}, (jc.V(3, shape),)),
         jc.Node("sum", (jc.V(3, shape), (0, 1), False), {}, (jc.V(4, ()),))], [jc.V(4, ())])
    path = tmp_path / "sum.otj"
    jc.write(str(path), meta, arrays)
    with pytest.raises(ProgramError, match="max_work"):
        ot.jit.load(str(path), max_work=1e6)
    m = ot.jit.load(str(path))                    # 4M elements: inside the default
    with ot.no_grad():
        assert m(ot.full((4,), 2.0)).item() == 2.0 * (1 << 22)
    with pytest.raises(TypeError, match="max_work"):
        ot.jit.load(str(path), max_work=-1)


def test_replaced_weight_of_another_shape_is_refused(tmp_path):
    lin = ot.nn.Linear(3, 2).eval()
    t = ot.jit.trace(lin, (ot.randn(4, 3),))
    buf = io.BytesIO()
    ot.jit.save(t, buf)
    buf.seek(0)
    m = ot.jit.load(buf)
    m.weight = ot.nn.Parameter(ot.randn(1, 1), requires_grad=False)
    with ot.no_grad(), pytest.raises(RuntimeError, match="traced for float32"):
        m(ot.randn(4, 3))


# ---------------------------------------------------------------------- files
def _good_meta() -> tuple[dict, dict]:
    x = jc.V(0, (4,))
    return jc.program([jc.x_input()], [jc.Node("negative", (x,), {}, (jc.V(1, (4,)),))],
                      [jc.V(1, (4,))])


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for k, v in members.items():
            z.writestr(k, v)
    return buf.getvalue()


def _program_bytes(meta: dict, arrays: dict) -> bytes:
    buf = io.BytesIO()
    jc._program.write(buf, meta, arrays)
    return buf.getvalue()


def _with_graph_json(text: str) -> bytes:
    meta, arrays = _good_meta()
    z = zipfile.ZipFile(io.BytesIO(_program_bytes(meta, arrays)))
    return _zip({"program.json": text.encode(), "tensors.safetensors":
                 z.read("tensors.safetensors")})


def _malformed() -> dict[str, bytes]:
    meta, arrays = _good_meta()
    out = {}
    for field in ("entries", "weights"):
        m = json.loads(json.dumps(meta))
        m.pop(field)
        out[f"no {field}"] = _program_bytes(m, arrays)
    m = json.loads(json.dumps(meta))
    m["entries"][0].pop("out_spec")
    out["no out_spec"] = _program_bytes(m, arrays)
    m = json.loads(json.dumps(meta))
    m["entries"][0]["graph"]["nodes"][0][3] = {"$t": []}
    out["node without outputs"] = _program_bytes(m, arrays)
    m = json.loads(json.dumps(meta))
    m["entries"][0]["key"] = "[[[" + "]]]"
    out["bad key"] = _program_bytes(m, arrays)
    m = json.loads(json.dumps(meta))
    m["entries"][0]["n_args"] = 7
    out["wrong n_args"] = _program_bytes(m, arrays)
    doc = dict(json.loads(json.dumps(meta)), format="omnitensor.jit.program", version=1)
    deep = json.dumps(doc).replace('"training": false',
                                   '"training": ' + "[" * 100000 + "]" * 100000)
    out["deep nesting"] = _with_graph_json(deep)
    spec = {"$t": [{"T": [[4], "float32"]}] * 1}
    m = json.loads(json.dumps(meta))
    m["entries"][0]["out_spec"] = {"tuple": [spec] * 3}
    out["result structure"] = _program_bytes(m, arrays)
    for name, sym in (("template zero slope", [0, 0]), ("template huge slope", [0, 1 << 50]),
                      ("template float slope", [0, 0.5])):
        m = json.loads(json.dumps(meta))
        e = m["entries"][0]
        key = json.loads(e["key"])
        key[0]["tuple"][0]["T"][0][0] = {"$sym": sym}
        m["templates"] = [{"key": key, "graph": e["graph"], "out_spec": e["out_spec"],
                           "n_args": 1, "consts": {}}]
        out[name] = _program_bytes(m, arrays)
    out["not a zip"] = b"PK\x03\x04" + b"\x00" * 40
    out["declared size too small"] = _declare_size(_program_bytes(meta, arrays),
                                                 b"program.json", 100)
    out["truncated"] = _program_bytes(meta, arrays)[:-30]
    return out


def test_malformed_files_give_clear_errors(tmp_path):
    for name, data in _malformed().items():
        path = tmp_path / "m.otj"
        path.write_bytes(data)
        with pytest.raises(ProgramError) as info:
            ot.jit.load(str(path))
        assert "omnitensor.jit.load" in str(info.value), (name, info.value)


def test_a_malformed_graph_row_is_named(tmp_path):
    # a node row of the wrong length: the error names the row, not Python's unpacking
    meta, arrays = _good_meta()
    m = json.loads(json.dumps(meta))
    m["entries"][0]["graph"]["nodes"][0] = m["entries"][0]["graph"]["nodes"][0][:6]
    path = tmp_path / "m.otj"
    path.write_bytes(_program_bytes(m, arrays))
    with pytest.raises(ProgramError, match=r"invalid program: graph nodes\[0\] is malformed"):
        ot.jit.load(str(path))


def _in_subprocess(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(HERE), str(HERE.parent), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=env, timeout=timeout)


def _declare_size(data: bytes, member: bytes, size: int) -> bytes:
    """``data`` (a zip) with ``member``'s uncompressed size declared as ``size`` in its
    local header and the central directory (what a zip bomb declares: its true size)."""
    buf = bytearray(data)
    # (signature, offsets of: the uncompressed size, the name's length, the name)
    for sig, at, len_at, name_at in ((b"PK\x03\x04", 22, 26, 30),
                                     (b"PK\x01\x02", 24, 28, 46)):
        k = buf.find(sig)
        while k >= 0:
            n = int.from_bytes(buf[k + len_at:k + len_at + 2], "little")
            if bytes(buf[k + name_at:k + name_at + n]) == member:
                buf[k + at:k + at + 4] = size.to_bytes(4, "little")
            k = buf.find(sig, k + 4)
    return bytes(buf)


def test_zip_bomb_is_refused_before_inflating(tmp_path):
    # program.json declares 1.2 GB (over the 1 GiB floor, far over the file's share)
    path = tmp_path / "bomb.otj"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("program.json", b" " * (1 << 20))
        z.writestr("tensors.safetensors", b"")
    path.write_bytes(_declare_size(buf.getvalue(), b"program.json", 1_200_000_000))
    assert zipfile.ZipFile(path).getinfo("program.json").file_size == 1_200_000_000
    proc = _in_subprocess(f"""
        import omnitensor as ot
        from omnitensor.jit import ProgramError
        try:
            ot.jit.load({str(path)!r})
        except ProgramError as e:
            print("refused:", e)
        # VmHWM: this process's own peak (ru_maxrss carries the parent's across fork+exec)
        hwm = [ln for ln in open("/proc/self/status") if ln.startswith("VmHWM")][0]
        print("maxrss_mb", int(hwm.split()[1]) // 1024)
    """)
    assert "refused:" in proc.stdout and "decompress" in proc.stdout, proc.stdout + \
        proc.stderr
    rss = int(proc.stdout.split("maxrss_mb")[1])
    assert rss < 600, f"the refused bomb took {rss} MB"


def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "program.otj"
    os.mkfifo(fifo)
    proc = _in_subprocess(f"""
        import omnitensor as ot
        from omnitensor.jit import ProgramError
        try:
            ot.jit.load({str(fifo)!r})
        except ProgramError as e:
            print("refused:", e)
    """, timeout=60)
    assert "refused:" in proc.stdout and "FIFO" in proc.stdout, proc.stdout + proc.stderr
