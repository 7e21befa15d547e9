"""omnitensor.multiprocessing (torch.multiprocessing): spawn with arguments and failures
re-raised as torch raises them, tensors through queues, pools and process arguments
(shared memory for cpu, by value for devices), share_memory_ and Hogwild training, and the
as_torch alias reaching spawned children (mnist_hogwild and the DDP tutorial, in shape)."""
from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import time
from multiprocessing.reduction import ForkingPickler
from pathlib import Path

import numpy as np
import pytest

import mp_workers
import omnitensor as ot
import omnitensor.multiprocessing as mp
from omnitensor.core import shared_memory

HERE = Path(__file__).parent
SCRIPTS = HERE / "mp_scripts"
REPO = HERE.parents[1]
STRATEGIES = sorted(mp.get_all_sharing_strategies())


def _env() -> dict:
    env = dict(os.environ)
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "OMNITENSOR_DEVICE", "OMNITENSOR_AS_TORCH"):
        env.pop(var, None)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


# ------------------------------------------------------------------- in-process rules
def test_share_memory_moves_storage_in_place_and_keeps_values():
    t = ot.tensor(np.arange(12, dtype=np.float64).reshape(3, 4))
    view_before = t[0]
    assert not t.is_shared()
    assert t.share_memory_() is t and t.is_shared()
    np.testing.assert_array_equal(t.numpy(), np.arange(12).reshape(3, 4))
    assert t[1:].is_shared() and t.t().is_shared()  # views of shared storage are shared
    t.share_memory_()  # already shared: a no-op
    t[0, 0] = 5.0
    assert view_before[0].item() == 0.0  # a view taken before the move keeps old memory
    assert ot.zeros(0).share_memory_().is_shared()  # empty tensors share too


def test_module_share_memory_and_parameters_stay_the_same_objects():
    m = ot.nn.Linear(3, 2)
    w = m.weight
    before = w.detach().clone()
    m.share_memory()
    assert m.weight is w and all(p.is_shared() for p in m.parameters())
    assert (m.weight == before).all()


def test_plain_pickle_still_refuses_and_non_leaf_is_refused():
    t = ot.ones(2)
    with pytest.raises(TypeError, match="not pickled"):
        pickle.dumps(t)
    x = ot.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf"):
        ForkingPickler.dumps(x * 2)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_roundtrip_in_process_shares_memory(strategy):
    prev = mp.get_sharing_strategy()
    mp.set_sharing_strategy(strategy)
    try:
        p = ot.nn.Parameter(ot.tensor(np.linspace(0, 1, 6, dtype=np.float32)))
        b = ot.ones(4, dtype=ot.bfloat16)
        base = ot.arange(20.0).reshape(4, 5)
        for t in (p, b, base.t()):
            r = pickle.loads(ForkingPickler.dumps(t))
            assert type(r) is type(t) and r.dtype == t.dtype and r.shape == t.shape
            assert r.requires_grad == t.requires_grad
            np.testing.assert_array_equal(r.detach().float().numpy(), t.detach().float().numpy())
        assert p.is_shared() and b.is_shared()      # moved to shared memory, as torch does
        assert not base.is_shared()                 # a view of unshared storage: by value
        r = pickle.loads(ForkingPickler.dumps(p))
        with ot.no_grad():
            r.add_(1.0)
        np.testing.assert_allclose(p.detach().numpy(), np.linspace(0, 1, 6) + 1, rtol=1e-6)
    finally:
        mp.set_sharing_strategy(prev)


def test_sharing_strategy_names_and_bad_input():
    assert mp.get_sharing_strategy() in STRATEGIES
    assert "file_system" in mp.get_all_sharing_strategies()
    with pytest.raises(ValueError, match="unknown strategy.*file_system"):
        mp.set_sharing_strategy("bogus")
    for name in ("Process", "Queue", "SimpleQueue", "Pool", "Pipe", "Event", "Lock",
                 "get_context", "set_start_method", "get_start_method", "cpu_count",
                 "spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
                 "ProcessExitedException"):
        assert hasattr(mp, name), name
    assert mp.cpu_count() >= 1
    with pytest.raises(ValueError, match="cannot find context"):
        mp.get_context("bogus")
    with pytest.raises(TypeError, match="args must be a tuple"):
        mp.spawn(mp_workers.fail_one, args=1)


def test_device_tensor_share_memory_is_refused(device):
    if device == "cpu":
        pytest.skip("cpu tensors share")
    t = ot.ones(3, device=device)
    with pytest.raises(RuntimeError, match="shares host memory only.*cpu"):
        t.share_memory_()
    assert not t.is_shared()


# ------------------------------------------------------------------- real processes
def test_spawn_with_args_shares_the_tensor(tmp_path):
    t = ot.zeros(3, dtype=ot.float64).share_memory_()
    mp.spawn(mp_workers.add_index, args=(t, str(tmp_path)), nprocs=3)
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0, 3.0])
    reports = [json.loads((tmp_path / f"child{i}.json").read_text()) for i in range(3)]
    assert all(r["shared"] and r["dtype"] == "float64" for r in reports)
    assert len({r["pid"] for r in reports} | {os.getpid()}) == 4


def test_spawn_reraises_the_child_exception_with_its_traceback():
    t0 = time.monotonic()
    with pytest.raises(mp.ProcessRaisedException) as info:
        mp.spawn(mp_workers.fail_one, args=(1,), nprocs=2)
    e = info.value
    assert e.error_index == 1 and e.error_pid > 0
    msg = str(e)
    assert "-- Process 1 terminated with the following error:" in msg
    assert "Traceback (most recent call last)" in msg and "mp_workers.py" in msg
    assert "ValueError: boom from process 1" in msg
    assert time.monotonic() - t0 < 100  # the sleeping sibling was terminated
    assert pickle.loads(pickle.dumps(e)).error_index == 1


@pytest.mark.parametrize("how,match", [("exit", "exit code 3"), ("signal", "signal SIGKILL")])
def test_spawn_child_that_dies_without_exception(how, match):
    with pytest.raises(mp.ProcessExitedException, match=match) as info:
        mp.spawn(mp_workers.die, args=(how,), nprocs=1)
    assert info.value.exit_code == (3 if how == "exit" else -9)
    assert info.value.signal_name == (None if how == "exit" else "SIGKILL")


def test_start_processes_join_false_returns_the_context(tmp_path):
    t = ot.zeros(2, dtype=ot.float64).share_memory_()
    ctx = mp.start_processes(mp_workers.add_index, args=(t, str(tmp_path)), nprocs=2,
                             join=False, start_method="spawn")
    assert isinstance(ctx, mp.ProcessContext) and len(ctx.pids()) == 2
    while not ctx.join(timeout=60):
        pass
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_queue_of_tensors_both_ways(strategy):
    prev = mp.get_sharing_strategy()
    mp.set_sharing_strategy(strategy)
    ctx = mp.get_context("spawn")
    q_in, q_out, done = ctx.Queue(), ctx.Queue(), ctx.Event()
    p = ctx.Process(target=mp_workers.echo, args=(q_in, q_out, done, strategy))
    p.start()
    try:
        buf = ot.zeros(4, dtype=ot.int64)
        leaf = ot.nn.Parameter(ot.tensor([1.5, -2.0]))
        q_in.put(("fill", buf))
        q_in.put(("param", leaf))
        q_in.put(("half", ot.tensor([0.25, 4.0], dtype=ot.float16)))  # freed once sent
        q_in.put(None)
        got = {name: (info, t) for name, info, t in (q_out.get(timeout=120) for _ in range(3))}
    finally:
        done.set()
        p.join(60)
        mp.set_sharing_strategy(prev)
    assert p.exitcode == 0
    assert buf.tolist() == [7, 7, 7, 7]  # written by the child into shared memory
    info, t = got["param"]
    assert info == {"shared": True, "requires_grad": True, "cls": "Parameter",
                    "device": "cpu"}
    assert t.tolist() == [3.0, -4.0] and t.is_shared() and not t.requires_grad
    info, t = got["half"]
    assert t.dtype == ot.float16 and t.tolist() == [0.5, 8.0]


def test_pool_maps_tensors():
    with mp.Pool(2) as pool:
        out = pool.map(mp_workers.square, [ot.tensor([float(i), 2.0]) for i in range(4)])
    assert [o.tolist() for o in out] == [[float(i * i), 4.0] for i in range(4)]


def test_device_tensors_travel_by_value(device):
    ctx = mp.get_context("spawn")
    q_in, q_out, done = ctx.Queue(), ctx.Queue(), ctx.Event()
    p = ctx.Process(target=mp_workers.device_roundtrip, args=(q_in, q_out, done))
    p.start()
    try:
        t = ot.tensor([1.0, 2.0, 3.0], dtype=ot.float32, device=device)
        q_in.put(t)
        where, back = q_out.get(timeout=180)
    finally:
        done.set()
        p.join(60)
    assert p.exitcode == 0
    assert where == str(ot.device(device)) and str(back.device) == where
    np.testing.assert_array_equal(back.cpu().numpy(), [2.0, 3.0, 4.0])


# ------------------------------------------------------------------- torch-style scripts
def _as_torch(script: str, *args: str, launcher: list | None = None, cwd: Path
              ) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "omnitensor.as_torch", str(SCRIPTS / script), *args]
    if launcher is not None:
        cmd = [sys.executable, "-m", "omnitensor.distributed.run", *launcher, "--as-torch",
               str(SCRIPTS / script), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=_env(),
                          cwd=str(cwd))


def test_mnist_hogwild_shape_under_as_torch(tmp_path):
    out = _as_torch("hogwild.py", "--out", str(tmp_path), cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
    lines = out.stdout.strip().splitlines()
    assert lines[-1] == "PASS", out.stdout[-2000:] + out.stderr[-2000:]
    report = json.loads(lines[-2])
    assert report["exitcodes"] == [0, 0] and report["torch_is"].startswith("omnitensor")
    assert report["changed"] > 0 and report["acc"] > 0.9 > report["start_acc"] + 0.3
    children = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    assert all(c["shared"] for c in children)  # the children's torch was omnitensor


def test_ddp_tutorial_spawn_without_launcher_says_why(tmp_path):
    out = _as_torch("ddp_spawn.py", cwd=tmp_path)
    assert out.returncode != 0
    assert "ProcessRaisedException" in out.stderr
    assert "in a process started by multiprocessing.spawn" in out.stderr
    assert "omnitensor-run -n 2" in out.stderr and "PRRTE" in out.stderr


def _has_mpi() -> bool:
    try:
        import mpi4py  # noqa: F401
        from omnitensor.distributed.run import find_mpiexec
        find_mpiexec()
    except (ImportError, FileNotFoundError):
        return False
    return True


@pytest.mark.skipif(not _has_mpi(), reason="needs mpi4py and mpiexec")
def test_ddp_tutorial_spawn_under_the_launcher(tmp_path):
    out = _as_torch("ddp_spawn.py", launcher=["-n", "2"], cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
    rows = [json.loads(ln) for ln in out.stdout.splitlines() if ln.startswith("{")]
    assert sorted(r["rank"] for r in rows) == [0, 1]
    assert all(r["world"] == 2 for r in rows)
    # DDP broadcast rank 0's weights and averaged the gradients: one model on both ranks
    assert rows[0]["param_sum"] == pytest.approx(rows[1]["param_sum"], rel=1e-12)


def test_shared_memory_strategy_state_is_core_state():
    assert mp.get_sharing_strategy is shared_memory.get_sharing_strategy


def test_stdlib_processes_carry_the_alias_once_hooked(tmp_path):
    script = tmp_path / "stdlib_spawn.py"
    script.write_text(
        "import multiprocessing, sys\n"
        "import torch\n"
        "from omnitensor.multiprocessing.context import carry_alias_in_stdlib_processes\n"
        "def child(q):\n"
        "    import torch.nn\n"
        "    q.put((torch.__name__, torch.nn.__name__))\n"
        "if __name__ == '__main__':\n"
        "    carry_alias_in_stdlib_processes()\n"
        "    carry_alias_in_stdlib_processes()  # idempotent\n"
        "    ctx = multiprocessing.get_context('spawn')\n"
        "    q = ctx.Queue()\n"
        "    p = ctx.Process(target=child, args=(q,))\n"
        "    p.start(); print(*q.get(timeout=120)); p.join()\n"
        "    sys.exit(p.exitcode)\n")
    out = subprocess.run([sys.executable, "-m", "omnitensor.as_torch", str(script)],
                         capture_output=True, text=True, timeout=300, env=_env(),
                         cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["torch", "omnitensor.nn"]  # the face is named torch
