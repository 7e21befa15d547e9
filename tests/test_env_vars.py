"""Numeric OMNITENSOR_* environment variables: a bad value fails at first use with an
EnvVarError (a ValueError) naming the variable, the value and what is accepted; never a raw
``float()`` error, and never a silently disabled timeout. Each case runs in a fresh
interpreter, because the variables are read once."""
from __future__ import annotations

import subprocess
import sys

import pytest

import omnitensor as ot

CHECK = """
import sys
import omnitensor as ot
try:
    {stmt}
except ot.errors.EnvVarError as e:
    print("EnvVarError:", e)
except ot.BackendUnavailableError as e:
    print("BackendUnavailableError:", e)
else:
    print("accepted")
"""


def _run(var: str, value: str, stmt: str) -> str:
    env = {k: v for k, v in __import__("os").environ.items()}
    env[var] = value
    r = subprocess.run([sys.executable, "-c", CHECK.format(stmt=stmt)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.strip()


TIMEOUT = "import omnitensor.distributed as dist; dist.init_process_group('mpi')"
THREADS = "ot.get_num_threads()"
POOL = "ot.ones(3, device='sycl:0')"


@pytest.mark.parametrize("value", ["nan", "-5", "0", "abc", "inf", "1e400"])
def test_dist_timeout_rejects(value):
    pytest.importorskip("mpi4py")
    out = _run("OMNITENSOR_DIST_TIMEOUT", value, TIMEOUT)
    assert out.startswith("EnvVarError:") and "OMNITENSOR_DIST_TIMEOUT" in out, out
    assert repr(value) in out and "seconds greater than 0" in out, out


@pytest.mark.parametrize("value", ["0", "-2", "1.5", "abc", "nan"])
def test_num_threads_rejects(value):
    out = _run("OMNITENSOR_NUM_THREADS", value, THREADS)
    assert out.startswith("EnvVarError:") and "OMNITENSOR_NUM_THREADS" in out, out
    assert "at least 1" in out


def test_num_threads_accepts():
    assert _run("OMNITENSOR_NUM_THREADS", " 3 ", "assert ot.get_num_threads() == 3") == \
        "accepted"


@pytest.mark.parametrize("value", ["-1", "abc", "nan", "inf", "5XB"])
def test_sycl_pool_limit_rejects(value):
    if "sycl:0" not in [str(d) for d in ot.devices()]:
        pytest.skip("no sycl:0")
    out = _run("OMNITENSOR_SYCL_POOL_LIMIT", value, POOL)
    assert "OMNITENSOR_SYCL_POOL_LIMIT" in out and "number of bytes" in out, out


@pytest.mark.parametrize("value,limit", [("0", 0), ("1e9", 10 ** 9), ("512MiB", 512 << 20)])
def test_sycl_pool_limit_accepts(value, limit):
    if "sycl:0" not in [str(d) for d in ot.devices()]:
        pytest.skip("no sycl:0")
    stmt = f"assert ot.device('sycl:0').backend.memory_stats(0)['pool_limit_bytes'] == {limit}"
    assert _run("OMNITENSOR_SYCL_POOL_LIMIT", value, stmt) == "accepted"


@pytest.mark.parametrize("timeout", [float("nan"), 0, -1, "abc"])
def test_explicit_timeout_rejects(timeout):
    from omnitensor.distributed import group
    with pytest.raises(ValueError, match="timeout must be a finite positive"):
        group._seconds(timeout)
