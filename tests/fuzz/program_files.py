"""Mutated program files for the fuzz suite: a jit program and an ONNX model of one small
model, each changed structurally (a number, a name, a shape, a list's length in the
program's JSON or the model's protobuf), as a hostile or corrupt file would be. The worker
loads each on the device under test and runs it; a clear error or a result is a pass, a
crash, a hang or an unclear internal error is a failure (``runner.judge``)."""
from __future__ import annotations

import io
import json
import random
import zipfile
from typing import Any

#: what a mutated number becomes: edges of every check (negative, zero, one past, huge)
_NUMBERS = (-(1 << 62), -2, -1, 0, 1, 2, 3, 7, 1 << 20, 1 << 40, 1e300, float("nan"), 0.5)
#: names a mutated string becomes: real primitives, kinds and dtypes, in the wrong place
_NAMES = ("matmul", "gather_nd", "scatter_nd", "broadcast_to", "reshape", "getitem", "sum",
          "assign", "empty", "arange", "float64", "int64", "bool", "param", "buffer",
          "arg", "const", "", "__import__", "os.system", "$v", "$t", "$d")


def _model_and_input() -> tuple[Any, Any]:
    import omnitensor as ot
    import omnitensor.nn as nn
    ot.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)), ot.randn(2, 4)


def _mutate_json(node: Any, rng: random.Random) -> Any:
    """``node`` with one leaf or list changed, chosen uniformly over the tree's nodes."""
    spots: list[tuple[Any, Any]] = []

    def walk(x: Any, parent: Any, key: Any) -> None:
        spots.append((parent, key))
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, x, k)
        elif isinstance(x, list):
            for i, v in enumerate(x):
                walk(v, x, i)

    root = [node]
    walk(node, root, 0)
    parent, key = rng.choice(spots)
    old = parent[key]
    if isinstance(old, list) and old and rng.random() < 0.5:
        i = rng.randrange(len(old))
        old.insert(i, old[i]) if rng.random() < 0.5 else old.pop(i)
    elif isinstance(old, str) and rng.random() < 0.7:
        parent[key] = rng.choice(_NAMES)
    elif isinstance(old, bool):
        parent[key] = not old
    elif isinstance(old, (int, float)):
        parent[key] = rng.choice(_NUMBERS) if rng.random() < 0.7 else old + rng.choice((-1, 1))
    else:
        parent[key] = rng.choice((None, [], {}, 0, "x", [[[[]]]]))
    return root[0]


def mutated_jit_programs(n: int, seed: int) -> list[dict]:
    """``n`` fuzz cases (op ``jit_load``): a saved jit program with one to three structural
    changes to its ``program.json``."""
    import omnitensor as ot
    model, x = _model_and_input()
    buf = io.BytesIO()
    ot.jit.save(ot.jit.trace(model, x), buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        graph, tensors = z.read("program.json"), z.read("tensors.safetensors")
    rng = random.Random(seed)
    cases = []
    for _ in range(n):
        doc = json.loads(graph)
        for _ in range(rng.randint(1, 3)):
            doc = _mutate_json(doc, rng)
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("program.json", json.dumps(doc))
            z.writestr("tensors.safetensors", tensors)
        cases.append({"op": "jit_load", "seed": 0, "args": [out.getvalue().hex()]})
    return cases


def mutated_onnx_models(n: int, seed: int) -> list[dict]:
    """``n`` fuzz cases (op ``onnx_load``): an exported ONNX model with one to three of its
    protobuf fields changed (node types, attributes, dims, initializer data, names)."""
    import omnitensor as ot
    from google.protobuf.json_format import MessageToDict, ParseDict
    import onnx
    model, x = _model_and_input()
    buf = io.BytesIO()
    ot.onnx.export(model, (x,), buf)
    good = MessageToDict(onnx.load_from_string(buf.getvalue()))
    rng = random.Random(seed)
    cases = []
    for _ in range(n):
        doc = json.loads(json.dumps(good))
        for _ in range(rng.randint(1, 3)):
            doc = _mutate_json(doc, rng)
        try:
            data = ParseDict(doc, onnx.ModelProto()).SerializeToString()
        except Exception:  # a change protobuf cannot encode: try raw bytes
            raw = bytearray(buf.getvalue())
            raw[rng.randrange(len(raw))] = rng.randrange(256)
            data = bytes(raw)
        cases.append({"op": "onnx_load", "seed": 0, "args": [data.hex()]})
    return cases


def load_and_run(kind: str, dev: str, hexdata: str) -> Any:
    """Load a mutated file on ``dev`` and run it on the model's input (the worker's case;
    on a device it is judged against the same file on cpu, so a value read from memory the
    program never wrote differs)."""
    import numpy as np

    import omnitensor as ot
    data = bytes.fromhex(hexdata)
    x = ot.tensor(np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32),
                  device=dev)
    if kind == "jit_load":
        return ot.jit.load(io.BytesIO(data), map_location=dev)(x)
    model = ot.onnx.load(data, device=dev)
    return model(x)
