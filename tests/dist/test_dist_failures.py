"""Errors, not hangs: a rank that raises takes the job down at once (the excepthook of
init_process_group calls MPI_Abort), and a collective a peer never joins raises
DistributedTimeoutError after the group's timeout, naming the op, rank and timeout."""
from __future__ import annotations

import pytest

from dist_helpers import needs_mpi, run_ranks

pytestmark = [pytest.mark.mpi, needs_mpi]


def test_raising_rank_ends_the_job() -> None:
    # rank 0 waits in an all_reduce with a 600 s timeout: only the abort can end it early
    proc, secs = run_ranks(2, "failure.py", "raise", timeout=120)
    assert proc.returncode != 0, proc.stdout
    assert "boom: rank 1 failed on purpose" in proc.stderr, proc.stderr[-3000:]
    assert "aborting the job" in proc.stderr
    assert "unexpectedly finished" not in proc.stdout
    assert secs < 60, f"the job took {secs:.0f} s to end"


def test_collective_timeout_raises() -> None:
    # rank 1 never joins; rank 0 must give up after the 3 s group timeout
    proc, secs = run_ranks(2, "failure.py", "timeout", timeout=120)
    assert proc.returncode != 0
    assert "DistributedTimeoutError" in proc.stderr, proc.stderr[-3000:]
    assert "all_reduce timed out after 3 s on rank 0" in proc.stderr, proc.stderr[-3000:]
    assert "unexpectedly finished" not in proc.stdout
    assert secs < 45, f"the job took {secs:.0f} s to end"


def _gave_up_after(stdout: str, rank: int) -> float:
    line = next(ln for ln in stdout.splitlines() if ln.startswith(f"rank {rank} gave up after"))
    return float(line.split("after ")[1].split(" s")[0])


def test_a_rank_failing_its_init_checks_stops_the_others_too() -> None:
    # both ranks see RANK=0: rank 1's check fails, rank 0 must not wait for it forever
    proc, secs = run_ranks(2, "failure.py", "duplicate_rank", timeout=120)
    assert proc.returncode != 0
    assert "rank 1 gave up" in proc.stdout and "RANK=0 in the environment" in proc.stdout, \
        proc.stdout + proc.stderr[-2000:]
    assert "another rank failed its checks" in proc.stdout, proc.stdout
    assert _gave_up_after(proc.stdout, 0) < 20, proc.stdout  # not the 30 s timeout
    assert "unexpectedly finished" not in proc.stdout


def test_a_rank_that_never_calls_init_is_a_timeout() -> None:
    proc, secs = run_ranks(2, "failure.py", "late_init", timeout=120)
    assert "DistributedTimeoutError" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    assert "init_process_group timed out after 3 s on rank 0" in proc.stdout, proc.stdout
    assert 2.5 < _gave_up_after(proc.stdout, 0) < 10, proc.stdout
    assert "unexpectedly finished" not in proc.stdout
