"""Real third-party libraries written for torch, run unmodified under `as_torch` on every
device and compared with the same quickstart under real torch.

Each `quickstarts/qs_*.py` is our own short program using a PyPI library the way its README
does (the libraries are test dependencies, never vendored). It draws inputs and weights from
NumPy (`_harness.py`), picks its device with the `cuda` line, and prints one JSON line of
results. Here it runs twice: under real torch (the oracle) and under `python -m
omnitensor.as_torch` with `OMNITENSOR_ACCELERATOR` naming the device under test.
"""
import json
import math
import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "quickstarts"
QUICKSTARTS = sorted(p.stem for p in HERE.glob("qs_*.py"))
#: float32 programs: results agree to this relative tolerance (a few ulps over short runs);
#: accelerators sum in other orders
RTOL = {"cpu": 2e-4}
RTOL_DEVICE = 2e-3


def _run(name: str, as_torch: bool, device: str = "cpu") -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMNITENSOR_DEVICE", "OMNITENSOR_ACCELERATOR", "OMNITENSOR_AS_TORCH")}
    env["PYTHONPATH"] = str(HERE)
    cmd = [sys.executable]
    if as_torch:
        cmd += ["-m", "omnitensor.as_torch"]
        if device != "cpu":
            env["OMNITENSOR_ACCELERATOR"] = device
    proc = subprocess.run(cmd + [str(HERE / f"{name}.py")], capture_output=True, text=True,
                          timeout=900, env=env, cwd=HERE)
    who = f"as_torch on {device}" if as_torch else "real torch"
    assert proc.returncode == 0, f"{name} failed under {who}:\n{proc.stderr[-4000:]}"
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


@lru_cache(maxsize=None)
def _oracle(name: str) -> str:
    return json.dumps(_run(name, as_torch=False))


def _close(a, b, rtol: float, path: str = "") -> list[str]:
    """Where two JSON results differ beyond ``rtol`` (relative to the largest value in
    the same list, so values near zero are judged on the list's scale)."""
    if isinstance(a, dict):
        if set(a) != set(b):
            return [f"{path}: keys {sorted(a)} != {sorted(b)}"]
        return [m for k in a for m in _close(a[k], b[k], rtol, f"{path}.{k}")]
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}: length {len(a)} != {len(b)}"]
        scale = max([abs(v) for v in a if isinstance(v, (int, float))] + [1e-6])
        return [m for i, (x, y) in enumerate(zip(a, b))
                for m in _close(x, y, rtol, f"{path}[{i}]") if not (
                    isinstance(x, (int, float)) and abs(x - y) <= rtol * scale)]
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        ok = math.isclose(a, b, rel_tol=rtol, abs_tol=rtol * 1e-2)
        return [] if ok else [f"{path}: torch {a} vs omnitensor {b}"]
    return [] if a == b else [f"{path}: torch {a!r} vs omnitensor {b!r}"]


@pytest.mark.device_sampled  # every library on cpu; a third per other device, -m slow all
@pytest.mark.parametrize("name", QUICKSTARTS)
def test_library_quickstart_matches_torch(name, device):
    expected = json.loads(_oracle(name))
    got = _run(name, as_torch=True, device=device)
    diffs = _close(expected, got, RTOL.get(device, RTOL_DEVICE))
    assert not diffs, f"{name} on {device}:\n" + "\n".join(diffs[:20])
