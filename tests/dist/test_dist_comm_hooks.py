"""DDP communication hooks on 2 real ranks (and 3 on cpu): ``register_comm_hook`` with
torch's default hooks, custom hooks and the GradBucket contract (tests/dist/workers/
comm_hooks.py, run inside workers/suite.py's mpiexec start); on cpu with 2 ranks the same
hooks under torch's own DDP on gloo are the oracle, and a torch program with hooks
(tests/programs/ddp_comm_hooks_torch.py) runs under torchrun and under ``omnitensor-run
--as-torch`` to the same parameters."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

from dist_helpers import DIST_DEVICES, REPO, check_section, needs_mpi, skip_absent

PROGRAM = REPO / "tests" / "programs" / "ddp_comm_hooks_torch.py"

#: the hook worker's sections (keep in sync with SECTIONS in workers/comm_hooks.py)
SECTIONS = ["allreduce_hook", "fp16_compress_hook", "custom_hooks", "hook_errors",
            "powerSGD", "matches_torch_gloo"]

pytestmark = [pytest.mark.mpi, needs_mpi]


@pytest.mark.parametrize("section", SECTIONS)
@pytest.mark.parametrize("dist_device", DIST_DEVICES)
def test_comm_hooks_two_ranks(suite_report, dist_device: str, section: str) -> None:
    skip_absent(dist_device)
    check_section(suite_report(dist_device, 2), f"hooks.{section}")


@pytest.mark.parametrize("section", SECTIONS[:5])
def test_comm_hooks_three_ranks_cpu(suite_report, section: str) -> None:
    check_section(suite_report("cpu", 3), f"hooks.{section}")


def test_comm_hook_sections_are_all_tested(suite_report) -> None:
    report = suite_report("cpu", 2)
    ran = {k[6:] for k in report if k.startswith("hooks.") and not k.endswith("@s")}
    assert ran == set(SECTIONS)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_torch_program_with_hooks_matches_torch(tmp_path) -> None:
    """tests/programs/ddp_comm_hooks_torch.py, a plain ``import torch`` program, under
    torchrun (torch, gloo) and under ``omnitensor-run --as-torch``: same parameters."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "OMNITENSOR_DEVICE", "MASTER_PORT"):
        env.pop(var, None)
    outs = {}
    for who, launcher in (("torch", ["-m", "torch.distributed.run", "--nproc-per-node", "2",
                                     "--master-port", str(_free_port())]),
                          ("ours", ["-m", "omnitensor.distributed.run", "-n", "2",
                                    "--as-torch"])):
        out = tmp_path / f"{who}.json"
        proc = subprocess.run([sys.executable, *launcher, str(PROGRAM), str(out)], env=env,
                              capture_output=True, text=True, timeout=300, cwd=str(REPO))
        assert proc.returncode == 0, f"{who}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        outs[who] = json.loads(out.read_text())
    theirs, ours = outs["torch"], outs["ours"]
    assert ours["calls"] == theirs["calls"]
    for run, params in theirs["runs"].items():
        for i, (a, b) in enumerate(zip(params, ours["runs"][run])):
            err = float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
            assert err <= 2e-6, f"{run}: parameter {i} differs from torch's by {err}"


@pytest.mark.parametrize("dist_device", DIST_DEVICES)
def test_powerSGD_hook_matches_torch(dist_device: str) -> None:
    """workers/powersgd_vs_torch.py: our powerSGD_hook and torch's on the same gradient
    buckets (one rank, several iterations, ranks 1/2/3, batched shapes)."""
    skip_absent(dist_device)
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_PORT"):
        env.pop(var, None)
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "dist" / "workers" /
                                               "powersgd_vs_torch.py"), dist_device],
                          env=env, capture_output=True, text=True, timeout=300, cwd=str(REPO))
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), \
        proc.stdout[-3000:] + proc.stderr[-3000:]
