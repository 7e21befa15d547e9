"""All rank checks for one device in one mpiexec start (each start costs seconds, and
each device backend compiles its kernels once per process):

    mpiexec -n N python suite.py DEVICE REPORT.json [SECTIONS]

Runs the sections of collectives.py, then those of ddp.py (prefixed ``ddp.``) and of
comm_hooks.py (``hooks.``).
"""
from __future__ import annotations

import sys

import omnitensor.distributed as dist

dist.init_process_group(timeout=90)

import collectives  # noqa: E402  (reads DEVICE/REPORT from sys.argv too)
import ddp  # noqa: E402
import comm_hooks  # noqa: E402

from _harness import run_sections  # noqa: E402

SECTIONS = dict(collectives.SECTIONS)
SECTIONS.update({"ddp." + k: v for k, v in ddp.SECTIONS.items()})
SECTIONS.update({"hooks." + k: v for k, v in comm_hooks.SECTIONS.items()})

if __name__ == "__main__":
    sys.exit(run_sections(SECTIONS, collectives.REPORT, collectives.ONLY,
                          {"device": collectives.DEV, "dtypes": collectives.DTYPES}))
