"""Rank worker for failure handling: ``mpiexec -n 2 python failure.py MODE``.

* ``raise``: rank 1 raises while rank 0 waits in an all_reduce with a 10-minute timeout;
  the excepthook installed by init_process_group must abort the whole job at once.
* ``timeout``: rank 1 never joins the all_reduce; rank 0 must raise
  DistributedTimeoutError after the group's 3 s timeout (which then ends the job).
* ``duplicate_rank``: both ranks see ``RANK=0``; rank 1's check fails, and rank 0 must
  raise too instead of waiting for it in init_process_group (its 30 s timeout).
* ``late_init``: rank 1 starts MPI but never calls init_process_group (stuck before it);
  rank 0 must give up after the 3 s timeout. (A rank that never starts MPI at all blocks
  its peers inside MPI_Init itself, before omnitensor runs.)
"""
from __future__ import annotations

import sys
import time

import omnitensor as ot
import omnitensor.distributed as dist

MODE = sys.argv[1]
if MODE in ("duplicate_rank", "late_init"):
    import os
    mpi_rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
    if MODE == "late_init" and mpi_rank == 1:
        from mpi4py import MPI  # noqa: F401  (importing mpi4py starts MPI)
        time.sleep(12)
        sys.exit(0)
    if MODE == "duplicate_rank":
        os.environ["RANK"] = "0"
    t0 = time.monotonic()
    try:
        dist.init_process_group(timeout=30 if MODE == "duplicate_rank" else 3)
    except dist.DistributedError as e:
        print(f"rank {mpi_rank} gave up after {time.monotonic() - t0:.1f} s: "
              f"{type(e).__name__}: {e}", flush=True)
        sys.exit(3)
    print(f"rank {mpi_rank}: unexpectedly finished", flush=True)
    sys.exit(0)
dist.init_process_group(timeout=600 if MODE == "raise" else 3)
rank = dist.get_rank()
t = ot.ones(4)
if MODE == "raise":
    if rank == 1:
        time.sleep(0.5)
        raise RuntimeError("boom: rank 1 failed on purpose")
    dist.all_reduce(t)  # never completes: rank 1 is gone
elif MODE == "timeout":
    if rank == 1:
        time.sleep(60)  # ends when rank 0's abort kills the job
    else:
        dist.all_reduce(t)
print(f"rank {rank}: unexpectedly finished", flush=True)
