"""What needs no mpiexec: lazy imports, backend selection, the NCCL dtype/op plan, the safe
object encoding, DistributedSampler's index arithmetic, the launcher's command line, and a
single-process (MPI singleton) group. The CLI and NCCL tests start real processes."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import omnitensor as ot
from omnitensor.data.distributed import DistributedSampler
from omnitensor.distributed import objects
from omnitensor.distributed.nccl_backend import NCCL_DTYPES, nccl_plan
from omnitensor.distributed.registry import DEFAULT_DEVICE_MAP, resolve_backend
from omnitensor.distributed.types import DistributedError, ReduceOp

from dist_helpers import NO_MPI, REPO, WORKERS, needs_mpi, run_ranks


def _python(code: str, env: dict | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, env=full_env, cwd=str(REPO))


# --------------------------------------------------------------------- lazy imports
def test_import_does_not_load_mpi_or_cupy() -> None:
    proc = _python("""
        import sys
        import omnitensor, omnitensor.distributed, omnitensor.nn.parallel
        import omnitensor.data.distributed
        from omnitensor.distributed import run, registry, collectives, objects
        loaded = [m for m in sys.modules if m.split('.')[0] in ('mpi4py', 'cupy')]
        assert not loaded, loaded
        print('clean')
    """)
    assert proc.returncode == 0 and "clean" in proc.stdout, proc.stderr


# ----------------------------------------------------------------- backend choice
def test_default_backend_follows_device_type(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMNITENSOR_DIST_BACKEND", raising=False)
    assert DEFAULT_DEVICE_MAP == {"cpu": "mpi", "opencl": "mpi", "sycl": "mpi",
                                  "cuda": "nccl"}
    from omnitensor.distributed import registry
    monkeypatch.setattr(registry, "_nccl_usable", lambda: False)  # no CuPy/NCCL
    for dev in ("cpu", "opencl", "sycl"):
        name, mapping = resolve_backend(None, dev)
        assert name == "mpi" and set(mapping.values()) == {"mpi"}
    name, mapping = resolve_backend(None, "cuda")
    assert name == "nccl" and mapping["cuda"] == "nccl" and mapping["cpu"] == "mpi"
    # with CuPy's NCCL installed, a cpu default still sends cuda tensors through NCCL
    # (torch's "cpu:gloo,cuda:nccl"); MPI keeps every other device type
    monkeypatch.setattr(registry, "_nccl_usable", lambda: True)
    name, mapping = resolve_backend(None, "cpu")
    assert name == "cpu:mpi,opencl:mpi,sycl:mpi,cuda:nccl"
    assert mapping == {"cpu": "mpi", "opencl": "mpi", "sycl": "mpi", "cuda": "nccl"}
    assert resolve_backend("mpi", "cpu")[1]["cuda"] == "mpi"  # explicit still wins
    monkeypatch.undo()
    if importlib.util.find_spec("cupy") is None:
        assert registry._nccl_usable() is False  # and CuPy was not imported for it


def test_explicit_backend_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMNITENSOR_DIST_BACKEND", "nccl")
    name, mapping = resolve_backend(None, "cpu")
    assert name == "nccl" and mapping["cuda"] == "nccl" and mapping["sycl"] == "mpi"
    name, mapping = resolve_backend("mpi", "cuda")  # an explicit argument wins
    assert name == "mpi" and mapping["cuda"] == "mpi"
    name, mapping = resolve_backend("cpu:mpi,cuda:nccl", "cpu")
    assert mapping == {"cpu": "mpi", "opencl": "mpi", "sycl": "mpi", "cuda": "nccl"}
    # torch's names: gloo is carried by MPI, alone and in a per-device map
    assert resolve_backend("gloo", "cpu") == ("gloo", {t: "mpi" for t in mapping})
    name, mapping = resolve_backend("cpu:gloo,cuda:nccl", "cpu")
    assert mapping == {"cpu": "mpi", "opencl": "mpi", "sycl": "mpi", "cuda": "nccl"}
    assert resolve_backend("undefined", "cpu")[1]["cpu"] == "mpi"
    with pytest.raises(ValueError, match="unknown backend 'tcp'"):
        resolve_backend("tcp", "cpu")
    with pytest.raises(ValueError, match="bad entry"):
        resolve_backend("tpu:mpi", "cpu")


# ------------------------------------------------------------------------ NCCL plan
def test_nccl_dtype_map() -> None:
    assert NCCL_DTYPES["float32"] == ("NCCL_FLOAT32", "float32")
    assert NCCL_DTYPES["float16"] == ("NCCL_FLOAT16", "float16")
    assert NCCL_DTYPES["bool"] == ("NCCL_UINT8", "uint8")
    assert set(NCCL_DTYPES) >= {"int8", "uint8", "int16", "int32", "int64", "uint64",
                                "float64", "complex64", "complex128"}
    assert "bfloat16" not in NCCL_DTYPES  # cuda holds bfloat16 widened to float32
    assert nccl_plan("float32", ReduceOp.AVG) == ("NCCL_FLOAT32", "NCCL_AVG", "float32",
                                                  False, False)
    # NCCL < 2.10: AVG is SUM and a division
    assert nccl_plan("float32", ReduceOp.AVG, has_avg=False)[1:] == ("NCCL_SUM", "float32",
                                                                     False, True)
    assert nccl_plan("int16", ReduceOp.MAX) == ("NCCL_INT32", "NCCL_MAX", "int32", True,
                                                False)
    assert nccl_plan("complex64", ReduceOp.SUM)[:3] == ("NCCL_FLOAT32", "NCCL_SUM",
                                                        "float32")
    with pytest.raises(DistributedError, match="complex"):
        nccl_plan("complex128", ReduceOp.PRODUCT)
    with pytest.raises(DistributedError, match="cannot reduce"):
        nccl_plan("bfloat16", ReduceOp.SUM)


def test_nccl_backend_without_cupy_is_a_clear_error() -> None:
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy is installed here")
    except ImportError:
        pass
    from omnitensor.distributed.registry import create_backend
    with pytest.raises(DistributedError, match="needs CuPy built with NCCL.*backend='mpi'"):
        create_backend("nccl", None)  # fails before it touches the group


def test_nccl_on_gpus() -> None:
    """The real NCCL check runs where CUDA GPUs are (tools/gpu_check_nccl.py)."""
    cuda = [d for d in ot.devices() if d.type == "cuda"]
    if not cuda:
        pytest.skip("no CUDA device here: NCCL is verified by tools/gpu_check_nccl.py on a "
                    "GPU machine")
    if NO_MPI:
        pytest.skip(NO_MPI)
    n = min(2, len(cuda))  # NCCL needs one GPU per rank
    proc, _ = run_ranks(n, str(REPO / "tools" / "gpu_check_nccl.py"), timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "NCCL CHECK PASSED" in proc.stdout


# ------------------------------------------------------------------ object coding
def test_object_encoding_round_trip() -> None:
    obj = {"a": [1, 2.5, None, True, "s"], 3: (1, (2, b"\x00\xff")), "c": 1 - 2j,
           "set": {1, 2}, "fs": frozenset({"x"}), "__ot__": "not a tag",
           "arr": np.arange(6, dtype=np.int16).reshape(2, 3), "np": np.float32(1.5),
           "nan": float("inf")}
    back = objects.decode(objects.encode(obj))
    arr = back.pop("arr")
    assert np.array_equal(arr, obj.pop("arr")) and arr.dtype == np.int16
    obj["np"] = 1.5
    assert back == obj
    t = ot.tensor([[1.0, 2.0]], dtype=ot.float64)
    tb = objects.decode(objects.encode(t))
    assert tb.dtype == ot.float64 and tb.tolist() == [[1.0, 2.0]]
    assert objects.decode(objects.encode(ot.float16)) is ot.float16


def test_object_encoding_refuses_arbitrary_objects() -> None:
    class Evil:
        def __reduce__(self):  # what pickle would run
            return (os.system, ("echo pwned",))
    with pytest.raises(TypeError, match="never pickles"):
        objects.encode(Evil())
    with pytest.raises(TypeError):
        objects.encode(np.array([Evil()], dtype=object))
    with pytest.raises(ValueError, match="unknown tag"):
        objects.decode(b'{"__ot__": "pickle", "v": "..."}')


# ---------------------------------------------------------------------- sampler
def test_sampler_pads_like_torch() -> None:
    data = list(range(10))
    shards = [list(DistributedSampler(data, 4, r, shuffle=False)) for r in range(4)]
    # 10 -> 12 indices: the first two repeat at the end; rank r takes r, r+4, r+8
    assert shards == [[0, 4, 8], [1, 5, 9], [2, 6, 0], [3, 7, 1]]
    assert all(len(DistributedSampler(data, 4, r)) == 3 for r in range(4))
    tiny = [list(DistributedSampler([0, 1], 5, r, shuffle=False)) for r in range(5)]
    assert tiny == [[0], [1], [0], [1], [0]]  # padding longer than the dataset


def test_sampler_drop_last_and_epochs() -> None:
    data = list(range(10))
    shards = [list(DistributedSampler(data, 4, r, shuffle=False, drop_last=True))
              for r in range(4)]
    assert shards == [[0, 4], [1, 5], [2, 6], [3, 7]]
    s = [DistributedSampler(data, 3, r, shuffle=True, seed=5) for r in range(3)]
    e0 = [list(x) for x in s]
    assert set(i for sh in e0 for i in sh) == set(range(10))
    assert [list(x) for x in s] == e0  # same epoch, same order
    for x in s:
        x.set_epoch(1)
    e1 = [list(x) for x in s]
    assert e1 != e0 and set(i for sh in e1 for i in sh) == set(range(10))
    with pytest.raises(ValueError, match="Invalid rank"):
        DistributedSampler(data, 2, 2)


def test_sampler_needs_a_group_or_explicit_ranks() -> None:
    import omnitensor.distributed as dist
    if dist.is_initialized():
        pytest.skip("a process group is initialised in this process")
    with pytest.raises(RuntimeError, match="init_process_group"):
        DistributedSampler(list(range(4)))


# ----------------------------------------------------------------------- launcher
@needs_mpi
def test_launcher_command_line() -> None:
    from omnitensor.distributed.run import build_command, find_mpiexec
    exe = find_mpiexec()
    assert os.path.basename(exe) in ("mpiexec", "mpirun")
    cmd, env = build_command(["-n", "3", "--map-by", "slot", "train.py", "--lr", "0.1"])
    assert cmd[:3] == [exe, "-n", "3"]
    # every rank starts in rank_env (torchrun's variables), which then runs the program
    rank_env = [sys.executable, "-m", "omnitensor.distributed.rank_env"]
    assert cmd[-6:] == rank_env + ["train.py", "--lr", "0.1"]
    assert cmd[cmd.index("--map-by") + 1] == "slot"  # mpiexec options pass through
    assert env["PYTHONUNBUFFERED"] == "1"
    assert env["MASTER_ADDR"] and env["MASTER_PORT"]
    cmd, env = build_command(["-n", "2", "--hosts", "a,b", "-m", "pkg.train", "x"])
    assert cmd[-6:] == rank_env + ["-m", "pkg.train", "x"]
    assert ("--host" in cmd or "-hosts" in cmd) and "a,b" in cmd
    assert env["MASTER_ADDR"] == "a" or os.environ.get("MASTER_ADDR")
    cmd, _ = build_command(["-n", "2", "--hostfile", "hf", "--", "./prog", "1"])
    assert cmd[-3:] == ["--exec", "./prog", "1"] and cmd[cmd.index("--hostfile") + 1] == "hf"
    cmd, _ = build_command(["--standalone", "--nproc-per-node", "2", "train.py"])  # torchrun
    assert cmd[:3] == [exe, "-n", "2"] and cmd[-1] == "train.py"
    with pytest.raises(SystemExit):
        build_command(["train.py"])
    with pytest.raises(SystemExit):
        build_command(["-n", "2"])


@needs_mpi
def test_omnitensor_run_script() -> None:
    """The console script parses and prints the mpiexec command (every real rank in these
    tests starts through the same launcher: ``python -m omnitensor.distributed.run``)."""
    script = WORKERS / "suite.py"
    exe = os.path.join(os.path.dirname(sys.executable), "omnitensor-run")
    cmd = [exe] if os.path.exists(exe) else [sys.executable, "-m", "omnitensor.distributed.run"]
    dry = subprocess.run(cmd + ["-n", "2", "--dry-run", str(script)], capture_output=True,
                         text=True)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.split()[1:3] == ["-n", "2"]
    python, m, rank_env, target = dry.stdout.split()[-4:]
    assert os.path.realpath(python) == os.path.realpath(sys.executable)  # the same python
    assert (m, rank_env, target) == ("-m", "omnitensor.distributed.rank_env", str(script))


# ------------------------------------------------------------ single-process group
@needs_mpi
def test_singleton_group() -> None:
    """Without mpiexec, MPI runs one rank: the API works on a group of one; init, destroy
    and init again; explicit backends and OMNITENSOR_DIST_BACKEND."""
    proc = _python("""
        import omnitensor as ot, omnitensor.distributed as dist
        assert not dist.is_initialized()
        try:
            dist.get_rank()
        except dist.DistributedError as e:
            assert 'init_process_group' in str(e)
        else:
            raise AssertionError('no error before init')
        dist.init_process_group(timeout=30)
        assert dist.is_initialized() and dist.get_rank() == 0
        assert dist.get_world_size() == 1 and dist.get_backend() == 'mpi'
        try:
            dist.init_process_group()
        except RuntimeError as e:
            assert 'twice' in str(e)
        t = ot.tensor([1.0, 2.0])
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        assert t.tolist() == [1.0, 2.0]
        out = ot.zeros(2, 2)
        dist.all_gather_into_tensor(out, ot.ones(2, 2))
        assert out.tolist() == [[1.0, 1.0], [1.0, 1.0]]
        from omnitensor.distributed.mpi_backend import cuda_aware
        print('cuda_aware', cuda_aware())
        dist.destroy_process_group()
        assert not dist.is_initialized()
        from omnitensor.distributed.registry import nccl_unavailable_reason
        if nccl_unavailable_reason():             # no NCCL here: say so, name the fix
            try:
                dist.init_process_group(backend='nccl')
            except dist.DistributedError as e:
                assert 'NCCL is not available' in str(e) and "'gloo'" in str(e), e
            else:
                raise AssertionError('nccl without NCCL was accepted')
            assert not dist.is_initialized()
        else:
            dist.init_process_group(backend='nccl')   # nccl carries cuda tensors only
            assert dist.get_backend() == 'nccl'
            t = ot.ones(3)
            dist.all_reduce(t)                       # cpu tensors still go through MPI
            assert t.tolist() == [1.0, 1.0, 1.0]
            dist.destroy_process_group()
        dist.init_process_group(backend='gloo', init_method='env://')  # torch's names
        assert dist.get_backend() == 'gloo' and dist.get_world_size() == 1
        t = ot.ones(3)
        dist.all_reduce(t)                           # gloo is MPI here
        assert t.tolist() == [1.0, 1.0, 1.0]
        dist.destroy_process_group()
        import os
        os.environ['OMNITENSOR_DIST_BACKEND'] = 'cpu:mpi,cuda:nccl'
        dist.init_process_group()
        assert dist.get_backend() == 'cpu:mpi,cuda:nccl', dist.get_backend()
        dist.destroy_process_group()
        print('singleton ok')
    """)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "singleton ok" in proc.stdout
