"""DataLoader throughput with worker processes: batches per second for num_workers 0 and 2
on a dataset whose ``__getitem__`` costs 1 ms.

The 1 ms is a ``time.sleep`` by default: it stands for the latency of reading and
decoding a sample from storage, which is what worker processes are for (overlapping
that wait with training). It is also the honest choice on a small shared machine: with
busy work, 2 workers can only be 2x faster if 2 otherwise idle cores exist, so the
figure would measure the machine's other load, not the loader. ``--busy`` spins the CPU
for 1 ms instead, to see the effect of the cores actually available.

The loader's own cost is small (collating a batch of 16 here: about 0.25 ms), so the
speedup is bounded by how much CPU the three processes get: on a loaded machine (load
average well above the core count) the workers wait for a core and the figure drops;
the load average is printed with the result.

Each measurement is one full epoch (worker start-up and shutdown included; with
``--persistent``, workers started once and timed over later epochs). Prints the median
of ``--repeats`` runs (the two settings interleaved) and the speedup of 2 workers over 0.

    python benchmarks/dataloader_workers.py [--batches 100] [--batch-size 16] [--repeats 7]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

import omnitensor as ot
from omnitensor.utils.data import DataLoader, Dataset


class SlowDataset(Dataset):
    """``n`` samples of a 3x32x32 float32 image and a label, each costing ``cost`` s."""

    def __init__(self, n: int, cost: float = 1e-3, busy: bool = False) -> None:
        self.n, self.cost, self.busy = n, cost, busy

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        if self.busy:
            end = time.perf_counter() + self.cost
            while time.perf_counter() < end:
                pass
        else:
            time.sleep(self.cost)
        return np.full((3, 32, 32), i, dtype=np.float32), i % 10


def batches_per_second(loader: DataLoader, epochs: int) -> float:
    n = 0
    start = time.perf_counter()
    for _ in range(epochs):
        for _batch in loader:
            n += 1
    return n / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=100, help="batches per epoch")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--busy", action="store_true", help="busy-wait instead of sleeping")
    ap.add_argument("--persistent", action="store_true",
                    help="persistent workers, timed after a warm-up epoch")
    args = ap.parse_args()
    ds = SlowDataset(args.batches * args.batch_size, busy=args.busy)
    runs: dict[int, list[float]] = {0: [], 2: []}
    # interleaved, so that both settings see the same (drifting) machine load
    for _ in range(args.repeats):
        for nw in (0, 2):
            kw = dict(num_workers=nw)
            if nw and args.persistent:
                kw["persistent_workers"] = True
            loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, **kw)
            if nw and args.persistent:
                batches_per_second(loader, 1)  # start the workers
            runs[nw].append(batches_per_second(loader, 1))
            del loader
    results = {}
    for nw in (0, 2):
        results[nw] = statistics.median(runs[nw])
        print(f"num_workers={nw}: {results[nw]:7.2f} batches/s (median of {args.repeats}; "
              f"runs {', '.join(f'{r:.1f}' for r in runs[nw])})")
    print(f"speedup 2 workers / 0 workers: {results[2] / results[0]:.2f}x "
          f"({'busy' if args.busy else 'sleep'} 1 ms per sample, batch {args.batch_size}, "
          f"{args.batches} batches per epoch, {os.cpu_count()} cpus, load average "
          f"{os.getloadavg()[0]:.1f}, omnitensor {getattr(ot, '__version__', '?')})")


if __name__ == "__main__":
    main()
