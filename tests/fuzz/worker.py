"""Fuzz worker: runs cases on omnitensor (one device) and on torch (cpu), one JSON line per
case on stdout: ``{"i": index, "ot": outcome, "torch": outcome}``, preceded by a
``{"start": index}`` line, so the parent can name the case a crash or hang happened in.

usage: python worker.py DEVICE CASES.json FIRST
"""
from __future__ import annotations

import json
import math
import sys
import warnings
from typing import Any

import numpy as np

import omnitensor.torch_face as ot  # torch's meanings (the oracle is torch)
import omnitensor.nn.functional as OF

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # no oracle: only the error-class checks apply
    torch = TF = None

from ops import CREATION, OPS, SHAPE_ONLY
from program_files import load_and_run

warnings.simplefilter("ignore")


def build(spec: Any, lib: Any, dev: str, rng_seed: int, counter: list) -> Any:
    """The value a JSON argument stands for, on library ``lib``."""
    if isinstance(spec, dict):
        if "T" in spec:
            counter[0] += 1
            rng = np.random.default_rng(rng_seed + counter[0])
            shape = tuple(spec["T"])
            g = spec["g"]
            if g == "i":
                arr = rng.integers(-1, 5, shape)
            elif g == "b":
                arr = rng.random(shape) > 0.5
            elif g == "p":
                arr = rng.random(shape)
            else:
                arr = rng.standard_normal(shape)
            arr = np.asarray(arr).astype(spec["dt"])
            if lib is ot:
                return ot.tensor(arr, device=dev)
            return torch.tensor(arr)
        if "L" in spec:
            return [build(s, lib, dev, rng_seed, counter) for s in spec["L"]]
        if "TU" in spec:
            return tuple(build(s, lib, dev, rng_seed, counter) for s in spec["TU"])
        if "S" in spec:
            return slice(*spec["S"])
    return spec


def _to_np(v: Any) -> Any:
    if hasattr(v, "detach"):
        v = v.detach()
    if hasattr(v, "cpu") and hasattr(v, "numpy"):
        return np.asarray(v.cpu().numpy())
    return v


def outcome(fn: Any, lib: Any, F: Any, dev: str, case: dict) -> dict:
    counter = [0]
    try:
        args = [build(a, lib, dev, case["seed"], counter) for a in case["args"]]
        if case["op"] in CREATION:
            r = fn(lib, F, dev if lib is ot else "cpu", *args)
        else:
            r = fn(lib, F, *args)
        if isinstance(r, tuple) and hasattr(r, "values") and not isinstance(r, list):
            r = (r[0], r[1])  # (values, indices) named tuples
        parts = list(r) if isinstance(r, (tuple, list)) else [r]
        out = []
        for p in parts:
            a = _to_np(p)
            if isinstance(a, np.ndarray):
                out.append({"shape": list(a.shape), "dtype": str(a.dtype),
                            "v": None if case["op"] in SHAPE_ONLY else
                            a.astype(np.float64).ravel()[:64].tolist()
                            if a.dtype.kind in "biuf" else None})
            else:
                out.append({"py": repr(a)[:80],
                            "v": [float(a)] if isinstance(a, (int, float)) else None})
        return {"ok": out}
    except BaseException as e:  # the outcome is what we record
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return {"err": type(e).__name__, "mod": type(e).__module__,
                "msg": str(e)[:300]}


def _load_bytes(lib: Any, F: Any, hexdata: str) -> Any:
    import os
    import tempfile
    fd, path = tempfile.mkstemp(suffix=".ot")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(bytes.fromhex(hexdata))
        return lib.load(path, map_location="cpu")
    finally:
        os.unlink(path)


def _run_file(kind: str, dev: str) -> Any:
    return lambda lib, F, data: load_and_run(kind, dev, data)


def main() -> None:
    dev, path, first = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(path) as f:
        cases = json.load(f)
    for i in range(first, len(cases)):
        case = cases[i]
        print(json.dumps({"start": i}), flush=True)
        if case["op"] == "ckpt_load":  # a mutated checkpoint: no torch oracle
            res = {"i": i, "ot": outcome(_load_bytes, ot, OF, dev, case)}
        elif case["op"] in ("jit_load", "onnx_load"):  # a mutated program file: on a
            # device, the same file on cpu is the oracle (same refusals, same values)
            res = {"i": i, "ot": outcome(_run_file(case["op"], dev), ot, OF, dev, case)}
            if dev != "cpu":
                res["torch"] = outcome(_run_file(case["op"], "cpu"), ot, OF, "cpu", case)
        else:
            fn = OPS[case["op"]]
            res = {"i": i, "ot": outcome(fn, ot, OF, dev, case)}
            if torch is not None:
                res["torch"] = outcome(fn, torch, TF, "cpu", case)
        print(json.dumps(res, default=lambda o: None if isinstance(o, float) and
                         math.isnan(o) else str(o)), flush=True)


if __name__ == "__main__":
    main()
