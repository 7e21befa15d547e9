"""Timing helpers shared by the benchmarks: medians of repeats, in one process."""
from __future__ import annotations

import statistics
import time
from typing import Any, Callable


def median_time(fn: Callable[[], Any], *, repeats: int = 7,
                sync: Callable[[], Any] | None = None, min_time: float = 0.05) -> float:
    """Median seconds per call of ``fn`` over ``repeats`` batches (each batch lasting about
    ``min_time``); ``sync`` waits for the device at the end of each batch."""
    return interleaved({"fn": fn}, repeats=repeats, syncs={"fn": sync} if sync else None,
                       min_time=min_time)["fn"]


def interleaved(fns: dict[str, Callable[[], Any]], *, repeats: int = 15,
                syncs: dict[str, Callable[[], Any]] | None = None,
                min_time: float = 0.02) -> dict[str, float]:
    """Median seconds per call for each function, measured in alternating rounds so that
    a noisy neighbour slows all contenders alike (ratios are what we report)."""
    syncs = syncs or {}
    numbers = {}
    for name, fn in fns.items():
        sync = syncs.get(name)
        fn()
        if sync:
            sync()
        n = 1
        while True:
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            if sync:
                sync()
            if time.perf_counter() - t0 >= min_time or n >= 1 << 20:
                break
            n *= 2
        numbers[name] = n
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            n, sync = numbers[name], syncs.get(name)
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            if sync:
                sync()
            samples[name].append((time.perf_counter() - t0) / n)
    return {k: statistics.median(v) for k, v in samples.items()}


def fmt_time(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:8.2f} us"
    if s < 1:
        return f"{s * 1e3:8.2f} ms"
    return f"{s:8.2f} s "


def try_import_torch() -> Any:
    try:
        import torch
        torch.set_num_threads(2)
        return torch
    except ImportError:
        return None
