"""Rank worker for failure handling: ``mpiexec -n 2 python failure.py MODE``.

* ``raise``: rank 1 raises while rank 0 waits in an all_reduce with a 10-minute timeout;
  the excepthook installed by init_process_group must abort the whole job at once.
* ``timeout``: rank 1 never joins the all_reduce; rank 0 must raise
  DistributedTimeoutError after the group's 3 s timeout (which then ends the job).
"""
from __future__ import annotations

import sys
import time

import omnitensor as ot
import omnitensor.distributed as dist

MODE = sys.argv[1]
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
