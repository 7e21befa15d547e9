"""Hostile ONNX files: ``omnitensor.onnx.load`` treats a model as data.

Each crafted model (``onnx_crafted.py``: Expand to 10^12 x 4 then a sum, ConstantOfShape,
Tile, Pad and Range of 10^12 elements, a MatMul of 2^16 x 2^16 expanded from a scalar) is a
few hundred bytes; loaded and run in a worker process on every device, each must be refused
before the work starts (the per-run work limit), quickly, never hang or crash. A FIFO, a
malformed file and external data outside the model's folder give clear errors.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import omnitensor as ot  # noqa: E402
import onnx_crafted as oc  # noqa: E402

ROOT = HERE.parent.parent


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(HERE), str(ROOT), os.environ.get("PYTHONPATH", "")]))


@pytest.fixture(scope="module")
def crafted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("onnx_crafted")
    for name, model in oc.cases().items():
        onnx.save(model, str(folder / f"{name}.onnx"))
    return folder


def test_crafted_models_are_small(crafted):
    assert max(p.stat().st_size for p in crafted.glob("*.onnx")) < 400


def test_crafted_models_are_refused_before_the_work(device, crafted):
    proc = subprocess.run([sys.executable, str(HERE / "onnx_crafted.py"), device,
                           str(crafted)], capture_output=True, text=True, env=_env(),
                          timeout=300)
    results, started = {}, None
    for line in proc.stdout.splitlines():
        msg = json.loads(line)
        if "start" in msg:
            started = msg["start"]
        else:
            results[msg["name"]], started = msg, None
    assert started is None and proc.returncode == 0, \
        f"the worker died (rc {proc.returncode}) in {started}: {proc.stderr[-3000:]}"
    assert len(results) == len(oc.cases())
    for name, r in results.items():
        assert r.get("err") == "WorkLimitError", (name, r)
        assert "max_work=" in r["msg"] and "node" in r["msg"], (name, r)
        assert r["seconds"] < 30, (name, r)


def _expand_sum(n: int) -> bytes:
    from onnx import helper
    m = oc._model([helper.make_node("Expand", ["x", "shape"], ["e"]),
                   helper.make_node("ReduceSum", ["e"], ["y"], keepdims=0)],
                  [oc._ints("shape", [n, 4])], [])
    return m.SerializeToString()


def test_max_work_raises_and_lowers_the_limit(device):
    data = _expand_sum(1 << 20)                       # 4M elements: inside the default
    x = ot.tensor(np.arange(4, dtype=np.float32), device=device)
    assert ot.onnx.load(data, device=device)(x).item() == 6.0 * (1 << 20)
    small = ot.onnx.load(data, device=device, max_work=1000)
    with pytest.raises(RuntimeError, match="max_work"):
        small(x)
    with pytest.raises(TypeError, match="max_work"):
        ot.onnx.load(data, device=device, max_work="a lot")


def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "model.onnx"
    os.mkfifo(fifo)
    code = f"""
        import omnitensor as ot
        try:
            ot.onnx.load({str(fifo)!r})
        except ValueError as e:
            print("refused:", e)
    """
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=_env(), timeout=60)
    assert "refused:" in proc.stdout and "FIFO" in proc.stdout, proc.stdout + proc.stderr


def test_malformed_file_is_a_clear_error(tmp_path):
    path = tmp_path / "bad.onnx"
    path.write_bytes(b"\x08\x07\x12\xff\xff\xff\xff\x0f" + b"junk" * 10)
    with pytest.raises(ValueError, match="omnitensor.onnx.load"):
        ot.onnx.load(str(path))


def test_what_onnx_checker_refuses_is_a_clear_error(tmp_path):
    # the checker's own exception type (and the UnicodeDecodeError a corrupt name raises
    # inside it) become omnitensor's ValueError naming the fault
    from onnx import TensorProto, helper
    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(
        "z", TensorProto.FLOAT, [2])], [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                                      [2])])
    data = helper.make_model(graph).SerializeToString()
    with pytest.raises(ValueError, match="fails onnx's checker: .*topologically sorted"):
        ot.onnx.load(data)
    bad = data.replace(b"Relu", b"R\xffl\xfe")
    with pytest.raises(ValueError, match="fails onnx's checker: a name or string is not "
                                         "valid UTF-8"):
        ot.onnx.load(bad)


def test_a_corrupt_initializer_is_a_clear_error():
    from onnx import TensorProto, helper
    init = helper.make_tensor("w", TensorProto.FLOAT, [2, 3], [0.0] * 6)
    del init.float_data[3:]  # 3 values for 6 elements
    node = helper.make_node("Add", ["x", "w"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [2, 3])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, [2, 3])], [init])
    with pytest.raises(ValueError, match="initializer 'w' is corrupt"):
        ot.onnx.load(helper.make_model(graph).SerializeToString(), check=False)


def test_external_data_outside_the_folder_is_refused(tmp_path):
    from onnx import TensorProto, helper
    secret = tmp_path / "secret.bin"
    secret.write_bytes(np.arange(4, dtype=np.float32).tobytes())
    folder = tmp_path / "model"
    folder.mkdir()
    for location in ("../secret.bin", str(secret)):
        w = helper.make_tensor("w", TensorProto.FLOAT, [4], [0, 0, 0, 0])
        w.ClearField("float_data")
        w.data_location = TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", "0"), ("length", "16")):
            e = w.external_data.add()
            e.key, e.value = k, v
        m = oc._model([helper.make_node("Add", ["x", "w"], ["y"])], [w], [4])
        path = folder / "m.onnx"
        path.write_bytes(m.SerializeToString())
        with pytest.raises(ValueError, match="not a regular file in the model's folder"):
            ot.onnx.load(str(path))
    # inside the folder it loads
    (folder / "w.bin").write_bytes(np.full(4, 2, np.float32).tobytes())
    w = helper.make_tensor("w", TensorProto.FLOAT, [4], [0, 0, 0, 0])
    w.ClearField("float_data")
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "w.bin"), ("offset", "0"), ("length", "16")):
        e = w.external_data.add()
        e.key, e.value = k, v
    m = oc._model([helper.make_node("Add", ["x", "w"], ["y"])], [w], [4])
    (folder / "ok.onnx").write_bytes(m.SerializeToString())
    y = ot.onnx.load(str(folder / "ok.onnx"))(ot.tensor(np.arange(4, dtype=np.float32)))
    assert y.tolist() == [2.0, 3.0, 4.0, 5.0]
