"""torch.distributed's names beyond the core collectives on real ranks (2 per device, 3
on cpu): batch_isend_irecv, object send/recv, coalesced and *_single collectives,
monitored_barrier, subgroups, split/shrink, rendezvous (tests/dist/workers/api_more.py);
and the queries that need no ranks, against torch's answers."""
from __future__ import annotations

import json
import os

import pytest

import omnitensor.distributed as odist
from dist_helpers import DIST_DEVICES, needs_mpi, run_ranks, skip_absent

tdist = pytest.importorskip("torch.distributed")

SECTIONS = ["batch_p2p", "object_p2p", "coalesced", "singles", "monitored_barrier",
            "subgroups", "split_shrink", "rendezvous", "pg_methods", "device_mesh"]
_reports: dict = {}


def _report(device: str, n: int, tmp_path_factory) -> dict:
    key = (device, n)
    if key not in _reports:
        path = tmp_path_factory.mktemp("api_more") / "report.json"
        proc, _ = run_ranks(n, "api_more.py", device, str(path))
        _reports[key] = (json.loads(path.read_text())["results"] if path.exists() else
                         {"_error": f"rc={proc.returncode}\n{proc.stdout[-3000:]}\n"
                                    f"{proc.stderr[-3000:]}"})
    return _reports[key]


@needs_mpi
@pytest.mark.mpi
@pytest.mark.parametrize("section", SECTIONS)
@pytest.mark.parametrize("dist_device,n", [(d, 2) for d in DIST_DEVICES] + [("cpu", 3)])
def test_ranks(tmp_path_factory, dist_device: str, n: int, section: str) -> None:
    skip_absent(dist_device)
    report = _report(dist_device, n, tmp_path_factory)
    assert "_error" not in report, report["_error"]
    assert report.get(section) == "ok", report.get(section)


# ------------------------------------------------------------- no ranks needed
def test_queries_answer_as_torch(monkeypatch) -> None:
    for dev in ("cpu", "cuda"):
        assert odist.get_default_backend_for_device(dev) == \
            tdist.get_default_backend_for_device(dev)
    with pytest.raises(ValueError, match="Default backend not registered"):
        odist.get_default_backend_for_device("meta")
    for op in ("SUM", "PRODUCT", "MIN", "MAX", "AVG"):
        assert odist.supports_complex(getattr(odist.ReduceOp, op)) == \
            tdist.supports_complex(getattr(tdist.ReduceOp, op)), op
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    for dist in (odist, tdist):
        assert dist.get_node_local_rank(fallback_rank=3) == 3
        with pytest.raises(RuntimeError, match="LOCAL_RANK is not in the environment"):
            dist.get_node_local_rank()
        assert dist.is_torchelastic_launched() is False
    monkeypatch.setenv("LOCAL_RANK", "2")
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "x")
    for dist in (odist, tdist):
        assert dist.get_node_local_rank(fallback_rank=3) == 2
        assert dist.is_torchelastic_launched() is True
    assert odist.is_ucc_available() is False and odist.is_xccl_available() is False
    import importlib.util
    has_mpi = importlib.util.find_spec("mpi4py") is not None
    assert odist.is_mpi_available() == odist.is_gloo_available() == has_mpi
    assert odist.is_backend_available("gloo") == has_mpi
    assert odist.is_backend_available("cpu:gloo,cuda:nccl") == (
        has_mpi and odist.is_nccl_available())
    assert odist.is_backend_available("foo") is tdist.is_backend_available("foo") is False
    with pytest.warns(FutureWarning, match="reduce_op` is deprecated"):
        assert odist.reduce_op.SUM is odist.ReduceOp.SUM
    assert odist.GroupName("g") == tdist.GroupName("g") == "g"


def test_debug_level(monkeypatch) -> None:
    assert [m.name for m in odist.DebugLevel] == list(tdist.DebugLevel.__members__)
    assert [m.value for m in odist.DebugLevel] == [int(m) for m in
                                                   tdist.DebugLevel.__members__.values()]
    before = odist.get_debug_level()
    try:
        odist.set_debug_level(odist.DebugLevel.DETAIL)
        assert odist.get_debug_level() is odist.DebugLevel.DETAIL
        monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "info")
        odist.set_debug_level_from_env()
        assert odist.get_debug_level() is odist.DebugLevel.INFO
        monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "loud")
        with pytest.raises(ValueError, match="OFF, INFO or DETAIL"):
            odist.set_debug_level_from_env()
        with pytest.raises(TypeError, match="DebugLevel"):
            odist.set_debug_level("DETAIL")
    finally:
        odist.set_debug_level(before)


def test_options_have_torchs_fields() -> None:
    for name in ("AllreduceOptions", "AllreduceCoalescedOptions", "BroadcastOptions",
                 "ReduceOptions", "GatherOptions", "ScatterOptions", "ReduceScatterOptions",
                 "AllToAllOptions", "BarrierOptions"):
        ours, theirs = getattr(odist, name)(), getattr(tdist, name)()
        fields = {a for a in dir(theirs) if not a.startswith("_")}
        assert fields == {a for a in dir(ours) if not a.startswith("_")}, name
        for f in fields - {"reduceOp"}:
            assert getattr(ours, f) == getattr(theirs, f), (name, f)
        if "reduceOp" in fields:
            assert ours.reduceOp is odist.ReduceOp.SUM


def test_backend_config() -> None:
    cfg = odist.BackendConfig("cpu:gloo,cuda:nccl")
    assert cfg.get_device_backend_map()["cpu"] == "mpi"  # MPI carries gloo's role
    assert cfg.get_device_backend_map()["cuda"] == "nccl"
    assert str(cfg).startswith("cpu:mpi,")
    with pytest.raises(ValueError, match="unknown backend 'foo'"):
        odist.BackendConfig("foo")


@needs_mpi
def test_breakpoint_stops_on_its_rank() -> None:
    """A single-process (MPI singleton) job: pdb reads the commands from stdin; skip=1
    passes the first hit of the call site."""
    import subprocess
    import sys
    from dist_helpers import REPO
    code = ("import omnitensor.distributed as dist\n"
            "dist.init_process_group()\n"
            "for i in range(2):\n"
            "    value = 6 * 7 + i\n"
            "    dist.breakpoint(skip=1)\n"
            "print('after', value)\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        env.pop(var, None)
    proc = subprocess.run([sys.executable, "-c", code], input="p value\nc\n",
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "ATTENTION" in proc.stdout and "43" in proc.stdout, proc.stdout
    assert "after 43" in proc.stdout
