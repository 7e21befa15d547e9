"""Hand-crafted ``omnitensor.jit`` program files (for ``test_jit_attacks.py``): small
graphs a hostile file could hold, each written in the format ``jit.save`` writes (one zip of
``program.json`` and ``tensors.safetensors``), and a runner that loads and calls each in a
worker process on one device, so that a crash is a reported outcome, not a dead test run.

    python jit_crafted.py DEVICE DIR    # runs every DIR/*.otj, one JSON line per file
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any

import numpy as np

from omnitensor.compiler.ir import DTypeName, Graph, Input, Node, Value
from omnitensor.jit import _program

F32 = "float32"


def V(i: int, shape: tuple, dtype: str = F32) -> Value:  # reads like the IR
    return Value(i, tuple(shape), dtype)


def key_of(*args: tuple) -> str:
    """The signature key of a call with tensors of ``(shape, dtype)``."""
    return json.dumps([{"tuple": [{"T": [list(s), d]} for s, d in args]}, {"dict": []},
                       False], sort_keys=True)


def program(inputs: list[tuple[Value, str, str]], nodes: list[Node], outputs: list[Value],
            consts: dict[int, np.ndarray] | None = None, weights: dict | None = None,
            args: tuple = (((4,), F32),), templates: list | None = None) -> tuple[dict, dict]:
    """``(meta, arrays)`` of a one-entry program."""
    consts = consts or {}
    g = Graph("cpu", [Input(v, k, n) for v, k, n in inputs], nodes, outputs, [], {})
    arrays = {f"__const__.0.{vid}": a for vid, a in consts.items()}
    arrays.update(weights or {})
    n_out = len(outputs)
    out_spec = {"tuple": [{"T": [list(v.shape), v.dtype]} for v in outputs]} if n_out > 1 \
        else {"T": [list(outputs[0].shape), outputs[0].dtype]}
    entry = {"key": key_of(*args), "graph": json.loads(g.to_json()), "out_spec": out_spec,
             "n_args": len(args), "consts": {str(v): f"__const__.0.{v}" for v in consts}}
    meta = {"kind": "module" if weights else "function", "training": False,
            "weights": {k: "param" for k in (weights or {})}, "entries": [entry],
            "templates": templates or []}
    return meta, arrays


def write(path: str, meta: dict, arrays: dict) -> int:
    _program.write(path, meta, arrays)
    return os.path.getsize(path)


def x_input() -> tuple[Value, str, str]:
    return (V(0, (4,)), "arg", "args[0]")


def cases() -> dict[str, tuple[dict, dict, Any]]:
    """name -> (meta, arrays, the argument arrays of the call)."""
    x = V(0, (4,))
    idx = V(1, (2,), "int64")
    big = np.array([0, 1 << 20], np.int64)
    x_arg = [np.arange(4, dtype=np.float32)]
    out: dict[str, tuple[dict, dict, Any]] = {}

    def add(name: str, nodes: list, outs: list, consts: dict | None = None,
            inputs: list | None = None, args: tuple = (((4,), F32),),
            call: Any = None, **kw: Any) -> None:
        ins = inputs if inputs is not None else [x_input()] + [
            (V(i, a.shape, a.dtype.name), "const", f"const[{i}]") for i, a in
            (consts or {}).items()]
        meta, arrays = program(ins, nodes, outs, consts, args=args, **kw)
        out[name] = (meta, arrays, x_arg if call is None else call)

    add("gather_nd_const_out_of_range",
        [Node("gather_nd", (x, (idx,)), {}, (V(2, (2,)),))], [V(2, (2,))], {1: big})
    c = V(2, (4,))
    add("scatter_nd_const_out_of_range",
        [Node("copy", (x,), {}, (c,)),
         Node("scatter_nd", (c, (idx,), 7.0, False), {}, (V(3, (4,)),), c)],
        [V(3, (4,))], {1: big})
    add("index_int_out_of_range",
        [Node("index", (x, (1 << 20,)), {}, (V(2, ()),))], [V(2, ())])
    add("index_slice_start_out_of_range",
        [Node("index", (x, (slice(1 << 20, (1 << 20) + 4, 1),)), {}, (V(2, (4,)),))],
        [V(2, (4,))])
    add("broadcast_to_oversized",
        [Node("broadcast_to", (x, (1 << 22,)), {}, (V(2, (1 << 22,)),)),
         Node("copy", (V(2, (1 << 22,)),), {}, (V(3, (1 << 22,)),))], [V(3, (1 << 22,))])
    d = V(2, (1 << 16,))
    add("assign_smaller_source",
        [Node("full", ((1 << 16,), 0.0, DTypeName(F32), 0), {}, (d,)),
         Node("assign", (d, x), {}, (V(3, (1 << 16,)),), d)], [V(3, (1 << 16,))])
    m = V(1, (3, 5))
    add("matmul_mismatched",
        [Node("matmul", (V(0, (2, 2)), m), {}, (V(2, (2, 5)),))], [V(2, (2, 5))],
        {1: np.zeros((3, 5), np.float32)},
        inputs=[(V(0, (2, 2)), "arg", "args[0]"), (m, "const", "const[1]")],
        args=(((2, 2), F32),), call=[np.ones((2, 2), np.float32)])
    s = V(2, (1,))
    huge = (1 << 20, 1 << 20)
    add("broadcast_then_sum",
        [Node("index", (x, (slice(0, 1, 1),)), {}, (s,)),
         Node("broadcast_to", (s, huge), {}, (V(3, huge),)),
         Node("sum", (V(3, huge), (0, 1), False), {}, (V(4, ()),))], [V(4, ())])
    add("empty_returned",
        [Node("empty", ((1 << 12,), DTypeName(F32), 0), {}, (V(2, (1 << 12,)),))],
        [V(2, (1 << 12,))])
    add("dtype_mixed_operands",
        [Node("add", (x, V(1, (4,), "float64")), {}, (V(2, (4,)),))], [V(2, (4,))],
        {1: np.zeros(4, np.float64)})
    add("undefined_value",
        [Node("negative", (V(9, (4,)),), {}, (V(2, (4,)),))],
        [V(2, (4,))])
    add("declared_shape_lies",
        [Node("negative", (x,), {}, (V(2, (1 << 16,)),))], [V(2, (1 << 16,))])
    add("write_into_broadcast_view",
        [Node("broadcast_to", (V(2, (1,)), (4,)), {}, (V(3, (4,)),)),
         Node("assign", (V(3, (4,)), x), {}, (V(4, (4,)),), V(3, (4,)))],
        [V(4, (4,))], {2: np.zeros(1, np.float32)},
        inputs=[x_input(), (V(2, (1,)), "const", "const[2]")])
    # runtime indices: from an int64 argument (no check node in the file)
    i_arg = V(1, (2,), "int64")
    add("gather_nd_runtime_out_of_range",
        [Node("gather_nd", (x, (i_arg,)), {}, (V(2, (2,)),))], [V(2, (2,))],
        inputs=[x_input(), (i_arg, "arg", "args[1]")], args=(((4,), F32), ((2,), "int64")),
        call=[np.arange(4, dtype=np.float32), np.array([1, 1 << 20], np.int64)])
    add("gather_nd_runtime_negative",
        [Node("gather_nd", (x, (i_arg,)), {}, (V(2, (2,)),))], [V(2, (2,))],
        inputs=[x_input(), (i_arg, "arg", "args[1]")], args=(((4,), F32), ((2,), "int64")),
        call=[np.arange(4, dtype=np.float32), np.array([-(1 << 20), 0], np.int64)])
    return out


def main() -> None:
    import omnitensor as ot
    dev, folder = sys.argv[1], sys.argv[2]
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        call = np.load(path + ".npz") if os.path.exists(path + ".npz") else None
        if not name.endswith(".otj"):
            continue
        print(json.dumps({"start": name}), flush=True)
        res: dict[str, Any] = {"name": name}
        try:
            m = ot.jit.load(path, map_location=dev)
            res["loaded"] = True
            args = [ot.tensor(call[k], device=dev) for k in sorted(call.files)] \
                if call is not None else []
            with ot.no_grad():
                y = m(*args)
            ys = y if isinstance(y, tuple) else (y,)
            res["ok"] = [t.cpu().numpy().ravel()[:8].astype(float).tolist() for t in ys]
        except Exception as e:  # the outcome is what we report
            res["err"], res["mod"], res["msg"] = type(e).__name__, type(e).__module__, \
                str(e)[:400]
        print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
