"""Hand-crafted hostile ONNX models (for ``test_onnx_attacks.py``): each a few hundred
bytes whose graph asks for far more work or memory than the file holds, and a runner that
loads and runs each in a worker process on one device (a hang or crash is then a reported
outcome, not a stuck test run).

    python onnx_crafted.py DEVICE DIR    # runs every DIR/*.onnx, one JSON line per file
"""
from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import numpy as np

BIG = 10 ** 12


def _model(nodes: list, inits: list, out_shape: Any = None, out_type: int = 1) -> Any:
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", out_type, out_shape)
    g = helper.make_graph(nodes, "attack", [x], [y], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _ints(name: str, values: list[int]) -> Any:
    from onnx import numpy_helper
    return numpy_helper.from_array(np.array(values, np.int64), name)


def cases() -> dict[str, Any]:
    """name -> ModelProto."""
    from onnx import TensorProto, helper
    mk = helper.make_node
    return {
        # Expand to 10^12 x 4 then a sum: the view is free, the sum would spin
        "expand_then_sum": _model(
            [mk("Expand", ["x", "shape"], ["e"]),
             mk("ReduceSum", ["e"], ["y"], keepdims=0)], [_ints("shape", [BIG, 4])], []),
        "constant_of_shape": _model(
            [mk("ConstantOfShape", ["shape"], ["y"])], [_ints("shape", [BIG])], [BIG]),
        "tile": _model([mk("Tile", ["x", "reps"], ["y"])], [_ints("reps", [BIG])], [4 * BIG]),
        "pad": _model([mk("Pad", ["x", "pads"], ["y"])], [_ints("pads", [0, BIG])], [BIG]),
        "range": _model(
            [mk("Range", ["a", "b", "c"], ["y"])],
            [helper.make_tensor("a", TensorProto.INT64, [], [0]),
             helper.make_tensor("b", TensorProto.INT64, [], [BIG]),
             helper.make_tensor("c", TensorProto.INT64, [], [1])], [BIG], TensorProto.INT64),
        # a square of 2^16 x 2^16 expanded from sum(x): 2.8e14 multiply-adds
        "matmul_of_expanded": _model(
            [mk("ReduceSum", ["x"], ["s"], keepdims=0), mk("Expand", ["s", "shape"], ["e"]),
             mk("MatMul", ["e", "e"], ["y"])],
            [_ints("shape", [1 << 16, 1 << 16])], [1 << 16, 1 << 16]),
    }


def main() -> None:
    import omnitensor as ot
    dev, folder = sys.argv[1], sys.argv[2]
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".onnx"):
            continue
        print(json.dumps({"start": name}), flush=True)
        res: dict[str, Any] = {"name": name}
        t0 = time.perf_counter()
        try:
            m = ot.onnx.load(os.path.join(folder, name), device=dev)
            res["loaded"] = True
            y = m(ot.tensor(np.arange(4, dtype=np.float32), device=dev))
            res["ok"] = list(y.shape)
        except Exception as e:  # the outcome is what we report
            res["err"], res["msg"] = type(e).__name__, str(e)[:400]
        res["seconds"] = time.perf_counter() - t0
        print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
