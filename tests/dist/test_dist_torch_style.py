"""Distributed scripts as torch writes them: ``omnitensor.distributed`` (and its old name
``omnitensor.dist``), the torchrun environment ``omnitensor-run`` gives each rank,
``init_process_group(backend="gloo"/"nccl", init_method="env://")``, ``DDP(model,
device_ids=[i])`` on every device type, and a whole torch-style DDP program
(tests/programs/ddp_torch_style.py) on 2 real ranks per device."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from dist_helpers import DIST_DEVICES, REPO, needs_mpi, skip_absent

PROGRAM = REPO / "tests" / "programs" / "ddp_torch_style.py"


def _python(code: str, env: dict | None = None, args: tuple = (),
            timeout: float = 180) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "OMNITENSOR_DEVICE"):
        full_env.pop(var, None)
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.update(env or {})
    return subprocess.run([sys.executable, *args, "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=timeout, env=full_env,
                          cwd=str(REPO))


# ------------------------------------------------------------------- module names
def test_dist_is_an_alias_of_distributed() -> None:
    proc = _python("""
        import sys
        import omnitensor as ot
        d = ot.distributed                           # an attribute, as torch.distributed
        assert 'mpi4py' not in sys.modules and 'mpi4py.MPI' not in sys.modules
        import omnitensor.dist as old
        import omnitensor.dist.ddp, omnitensor.distributed.ddp
        from omnitensor.dist.run import main
        from omnitensor.dist import registry as r1
        from omnitensor.distributed import registry as r2
        import omnitensor.nn.parallel
        assert old is d is ot.dist is sys.modules['omnitensor.dist']
        assert omnitensor.dist.ddp is omnitensor.distributed.ddp    # one copy of each module
        assert r1 is r2 and main is omnitensor.distributed.run.main
        assert omnitensor.nn.parallel.DistributedDataParallel is d.DistributedDataParallel
        assert 'mpi4py.MPI' not in sys.modules
        print('alias ok')
    """)
    assert proc.returncode == 0 and "alias ok" in proc.stdout, proc.stdout + proc.stderr
    # the old module path of the launcher (the console script's entry point) still runs
    dry = subprocess.run([sys.executable, "-m", "omnitensor.dist.run", "-n", "2", "--dry-run",
                          "x.py"], capture_output=True, text=True, cwd=str(REPO))
    assert dry.returncode == 0 and "omnitensor.distributed.rank_env x.py" in dry.stdout, \
        dry.stdout + dry.stderr


# ------------------------------------------------------------------ torchrun's env
def test_torchrun_environment_from_the_launchers_variables() -> None:
    from omnitensor.distributed.rank_env import torchrun_env
    env = {"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4",
           "OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "2"}
    torchrun_env(env)
    assert (env["RANK"], env["WORLD_SIZE"], env["LOCAL_RANK"], env["LOCAL_WORLD_SIZE"],
            env["GROUP_RANK"]) == ("3", "4", "1", "2", "1")
    assert env["MASTER_ADDR"] == "127.0.0.1" and env["MASTER_PORT"] == "29500"
    hydra = {"PMI_RANK": "1", "PMI_SIZE": "2", "MPI_LOCALRANKID": "1", "MASTER_PORT": "1234"}
    torchrun_env(hydra)  # MPICH's launcher; the user's MASTER_PORT is kept
    assert (hydra["RANK"], hydra["WORLD_SIZE"], hydra["LOCAL_RANK"]) == ("1", "2", "1")
    assert hydra["MASTER_PORT"] == "1234"
    kept = {"RANK": "0", "OMPI_COMM_WORLD_RANK": "5"}
    torchrun_env(kept)  # a variable set already wins
    assert kept["RANK"] == "0"
    alone = {}
    torchrun_env(alone)  # plain python: one rank
    assert (alone["RANK"], alone["WORLD_SIZE"], alone["LOCAL_RANK"]) == ("0", "1", "0")


@needs_mpi
def test_env_init_method_checks_the_environment_against_mpi() -> None:
    """A torchrun-style script started with plain ``python`` while WORLD_SIZE says 2 gets
    a clear error naming the launcher (torch would wait for a rank that never comes)."""
    proc = _python("""
        import omnitensor.distributed as dist
        try:
            dist.init_process_group(backend='gloo', init_method='env://')
        except dist.DistributedError as e:
            assert 'WORLD_SIZE=2' in str(e) and 'omnitensor-run -n 2' in str(e), e
            print('refused')
        try:
            dist.init_process_group(init_method='nfs://x')
        except ValueError as e:
            assert 'env://' in str(e)
            print('bad url refused')
    """, env={"WORLD_SIZE": "2", "RANK": "0", "LOCAL_RANK": "0"})
    assert "refused" in proc.stdout and "bad url refused" in proc.stdout, \
        proc.stdout + proc.stderr


# ------------------------------------------------------------- DDP device_ids
@needs_mpi
@pytest.mark.parametrize("dist_device", DIST_DEVICES)
def test_ddp_device_ids_index_the_device_type(dist_device: str) -> None:
    """``device_ids=[i]`` names device i of the module's type (any index names the one
    cpu, as cpu:N does in torch); inputs move there in forward; a wrong entry is a clear
    ValueError."""
    skip_absent(dist_device)
    proc = _python(f"""
        import omnitensor as ot, omnitensor.nn as nn, omnitensor.distributed as dist
        from omnitensor.nn.parallel import DistributedDataParallel as DDP
        dev = ot.device({dist_device!r})
        dist.init_process_group(backend='gloo', init_method='env://')
        model = nn.Linear(3, 2).to(dev)
        index = 0 if dev.type != 'cpu' else 1           # cpu: every index is the cpu
        ddp = DDP(model, device_ids=[index])
        assert ddp.device == dev, ddp.device
        out = ddp(ot.ones(4, 3))                         # a cpu batch moves to the device
        assert out.device == dev
        out.sum().backward()
        assert model.weight.grad.device == dev
        def refused(match, **kw):
            try:
                DDP(nn.Linear(3, 2).to(dev), **kw)
            except ValueError as e:
                assert match in str(e), e
            else:
                raise AssertionError(f'accepted {{kw}}')
        refused('exactly one', device_ids=[0, 1])
        if dev.type != 'cpu':
            n = dev.backend.device_count()
            refused('local_rank %', device_ids=[n])
            refused('the module is on', device_ids=[ot.device('cpu')])
        dist.destroy_process_group()
        print('device_ids ok')
    """)
    assert proc.returncode == 0 and "device_ids ok" in proc.stdout, proc.stdout + proc.stderr


# ----------------------------------------------------------- a torch-style program
_LOSSES: dict[str, list] = {}


def _run_program(device: str, tmp_path) -> list[dict]:
    exe = os.path.join(os.path.dirname(sys.executable), "omnitensor-run")
    launcher = [exe] if os.path.exists(exe) else [sys.executable, "-m",
                                                   "omnitensor.distributed.run"]
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(var, None)
    if device == "cpu":
        env.pop("OMNITENSOR_DEVICE", None)
    else:
        env["OMNITENSOR_DEVICE"] = device
    report = tmp_path / "report.json"
    proc = subprocess.run(launcher + ["-n", "2", str(PROGRAM), str(report), "--epochs", "6"],
                          capture_output=True, text=True, timeout=600, env=env, cwd=str(REPO))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return [json.loads((tmp_path / f"report.json.rank{r}").read_text()) for r in (0, 1)]


@needs_mpi
@pytest.mark.parametrize("dist_device", DIST_DEVICES)
def test_torch_style_ddp_program_two_ranks(dist_device: str, tmp_path) -> None:
    skip_absent(dist_device)
    reports = _run_program(dist_device, tmp_path)
    for rank, rep in enumerate(reports):
        assert rep["rank"] == rank and rep["world_size"] == 2 and rep["backend"] == "gloo"
        assert rep["env"] == {"RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": "2",
                              "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}
        assert rep["device"] == rep["param_device"] == dist_device
        assert rep["ranks_agree"], "parameters differ across ranks after DDP training"
        assert rep["checkpoint_matches"], "rank 0's checkpoint differs from the model"
        assert rep["shard"] == 256  # DistributedSampler: half the 512 samples each
        assert rep["initialized_after_destroy"] is False
        losses = rep["losses"]
        assert losses[-1] < 0.35 * losses[0], losses  # it learns
    assert reports[0]["losses"] == reports[1]["losses"]  # the logged mean is all-reduced
    _LOSSES[dist_device] = reports[0]["losses"]
    if dist_device != "cpu" and "cpu" in _LOSSES:  # the same training on every device
        import numpy as np
        np.testing.assert_allclose(_LOSSES[dist_device], _LOSSES["cpu"], rtol=2e-4)
