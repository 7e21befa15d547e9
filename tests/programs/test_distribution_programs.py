"""The torch.distributions program (torch_scripts/flow_and_vi.py: a coupling-layer
normalizing flow trained by likelihood, variational logistic regression by the ELBO) gives
real torch's numbers step by step: the same initial weights and inputs, run once under
torch and once under --as-torch on each device, in float64 (where the device has it) and
in float32."""
import json
import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import omnitensor as ot

SCRIPT = Path(__file__).parent / "torch_scripts" / "flow_and_vi.py"
#: relative tolerance per (dtype, device is cpu): float32 runs differ from torch's by a few
#: ulps per step (2.5e-7 measured over 65 steps); devices sum in other orders
RTOL = {("float64", True): 1e-9, ("float64", False): 1e-6,
        ("float32", True): 1e-5, ("float32", False): 1e-4}


def _run(args, env, cwd):
    out = subprocess.run([sys.executable, *args, str(SCRIPT)], capture_output=True,
                         text=True, timeout=900, env=env, cwd=cwd)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
    lines = out.stdout.strip().splitlines()
    assert lines[-1] == "PASS", lines[-1]
    steps = [json.loads(line) for line in lines[:-1]]
    return {k: np.array([s[k] for s in steps if k in s]) for k in ("flow", "vi")}


def _env(dtype, **extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMNITENSOR_DEVICE", "OMNITENSOR_ACCELERATOR")}
    return dict(env, FLOW_VI_DTYPE=dtype, **extra)


@lru_cache(maxsize=None)
def _torch_numbers(dtype):
    return _run([], _env(dtype), SCRIPT.parent)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_flow_and_vi_match_torch(device, dtype, tmp_path):
    pytest.importorskip("torch")
    if dtype == "float64" and not ot.device(device).supports_dtype(ot.float64):
        pytest.skip(f"{device} has no float64")
    ours = _run(["-m", "omnitensor.as_torch"], _env(dtype, OMNITENSOR_DEVICE=device), tmp_path)
    theirs = _torch_numbers(dtype)
    rtol = RTOL[dtype, device == "cpu"]
    for key in ("flow", "vi"):
        assert len(ours[key]) == len(theirs[key]) > 20
        np.testing.assert_allclose(ours[key], theirs[key], rtol=rtol, err_msg=key)
