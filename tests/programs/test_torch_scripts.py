"""Torch-style scripts (tests/programs/torch_scripts/) run unmodified through the --as-torch
finder (`import torch` is omnitensor) on every device; each prints PASS when it reaches its
target (accuracy, loss, gradient checks)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = sorted(p.name for p in (Path(__file__).parent / "torch_scripts").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_runs_as_torch(script, device, tmp_path):
    env = dict(os.environ, OMNITENSOR_DEVICE=device)
    path = Path(__file__).parent / "torch_scripts" / script
    out = subprocess.run([sys.executable, "-m", "omnitensor.as_torch", str(path)],
                         capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
    assert out.stdout.strip().splitlines()[-1] == "PASS", out.stdout[-2000:]
