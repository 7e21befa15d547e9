"""Helpers of the distributed tests (imported by conftest.py and the test modules):
start real ranks with ``mpiexec`` on worker scripts.

Each mpiexec start costs seconds, so a worker run checks many things at once and writes a
JSON report; tests of one (device, ranks) pair share one run (cached for the session).
Tests skip with a reason where mpi4py or mpiexec is missing.
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

WORKERS = Path(__file__).parent / "workers"
REPO = Path(__file__).resolve().parents[2]
#: the devices the distributed tests cover (cuda goes through tools/gpu_check_nccl.py)
DIST_DEVICES = ["cpu", "opencl:0", "sycl:0"]


def _why_no_mpi() -> str | None:
    if importlib.util.find_spec("mpi4py") is None:
        return "mpi4py is not installed (pip install 'omnitensor[mpi]')"
    try:
        from omnitensor.distributed.run import find_mpiexec
        find_mpiexec()
    except FileNotFoundError as e:
        return str(e)
    return None


NO_MPI = _why_no_mpi()
needs_mpi = pytest.mark.skipif(NO_MPI is not None, reason=NO_MPI or "")


def available_devices() -> list[str]:
    import omnitensor as ot
    found = [str(d) for d in ot.devices()]
    spec = os.environ.get("OMNITENSOR_TEST_DEVICES", "").strip()
    if spec:
        wanted = {s.strip() for s in spec.split(",")}
        found = [d for d in found if d in wanted]
    return found


def check_section(report: dict, key: str) -> None:
    """A worker report's section ``key`` (``"ddp.no_sync"``) ran and passed."""
    assert "_error" not in report, report["_error"]
    assert key in report, f"the worker did not run section {key!r}"
    assert report[key] == "ok", report[key]


def skip_absent(device: str) -> None:
    if device not in available_devices():
        pytest.skip(f"{device} is not available on this machine (omnitensor.devices())")


def run_ranks(n: int, script: str, *args: str, timeout: float = 300,
              env: dict | None = None) -> tuple[subprocess.CompletedProcess, float]:
    """Run ``script`` on ``n`` ranks through the launcher (``python -m
    omnitensor.distributed.run``, what the ``omnitensor-run`` script calls); (result, seconds)."""
    run_env = dict(os.environ)
    run_env["PYTHONPATH"] = str(REPO) + os.pathsep + run_env.get("PYTHONPATH", "")
    run_env.update(env or {})
    cmd = [sys.executable, "-m", "omnitensor.distributed.run", "-n", str(n), str(WORKERS / script),
           *args]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=run_env,
                          cwd=str(REPO))
    return proc, time.monotonic() - t0
