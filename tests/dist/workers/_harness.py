"""Shared by the rank workers: run named sections, each in try/except, and have rank 0
write ``{section: "ok" | error text, section@s: seconds}`` for all ranks to a JSON file."""
from __future__ import annotations

import json
import time
import traceback
from typing import Callable

import omnitensor.distributed as dist


def run_sections(sections: dict[str, Callable[[], None]], report: str, only: set | None,
                 extra: dict | None = None) -> int:
    """Run the sections on this rank; return the exit code (1 if any rank failed)."""
    rank, world = dist.get_rank(), dist.get_world_size()
    results: dict[str, str] = {}
    for name, fn in sections.items():
        if only and name not in only:
            continue
        t0 = time.perf_counter()
        try:
            fn()
            results[name] = "ok"
        except Exception:  # noqa: BLE001 - reported per section
            results[name] = f"rank {rank}: {traceback.format_exc()}"
        results[name + "@s"] = f"{time.perf_counter() - t0:.2f}"
    everyone: list = [None] * world
    dist.all_gather_object(everyone, results)
    merged: dict[str, str] = {}
    for res in everyone:
        for k, v in res.items():
            if k.endswith("@s"):
                merged[k] = max(merged.get(k, "0"), v, key=float)
            elif merged.get(k, "ok") == "ok":
                merged[k] = v
    if rank == 0:
        with open(report, "w") as f:
            json.dump({"world": world, "results": merged, **(extra or {})}, f, indent=1)
    failed = [k for k, v in merged.items() if not k.endswith("@s") and v != "ok"]
    dist.destroy_process_group()
    return 1 if failed else 0
