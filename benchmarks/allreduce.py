"""all_reduce bus bandwidth: omnitensor.dist vs raw mpi4py, in the same run.

    python benchmarks/allreduce.py                  # starts itself on 2 ranks
    omnitensor-run -n 2 benchmarks/allreduce.py --max-mb 64 --devices cpu,opencl:0

For each size (1 KB .. 256 MB of float32, x4 steps) both contenders run in alternating
rounds (a noisy neighbour slows both alike); the best round's time per call (timeit's
rule: interference only ever adds time), the slowest rank's, gives
``algbw = bytes / time`` and nccl-tests' ``busbw = algbw * 2 (n - 1) / n``. The raw
baseline is ``comm.Allreduce(MPI.IN_PLACE, numpy_buffer, MPI.SUM)``; omnitensor is
``dist.all_reduce(tensor)`` on a cpu tensor (its NumPy buffer goes to MPI in place) and,
with ``--devices``, on device tensors (staged through the host: these include the copies
between device and host memory, so they are not expected to match the raw numbers).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np


def _launched() -> bool:
    return any(v in os.environ for v in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=2, help="ranks when self-launching")
    ap.add_argument("--min-kb", type=float, default=1)
    ap.add_argument("--max-mb", type=float, default=256)
    ap.add_argument("--devices", default="cpu", help="comma list, e.g. cpu,opencl:0,sycl:0")
    ap.add_argument("--device-max-mb", type=float, default=16,
                    help="largest size for non-cpu devices (staging is slow)")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--json", default="", help="also write the results here (rank 0)")
    args = ap.parse_args()
    if not _launched():
        from omnitensor.distributed.run import main as run
        return run(["-n", str(args.n), __file__] + sys.argv[1:])

    import omnitensor as ot
    import omnitensor.distributed as dist

    dist.init_process_group()  # before mpi4py's import: it tunes Open MPI first
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    rank, n = comm.Get_rank(), comm.Get_size()
    devices = [d.strip() for d in args.devices.split(",") if d.strip()]
    sizes = []
    s = int(args.min_kb * 1024)
    while s <= args.max_mb * (1 << 20):
        sizes.append(s)
        s *= 4

    def timed(fn, reps: int, sync=None) -> float:
        comm.Barrier()
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        if sync:
            sync()
        return (time.perf_counter() - t0) / reps

    rows = []
    for nbytes in sizes:
        count = nbytes // 4
        raw_buf = np.ones(count, np.float32)
        contenders = {"mpi4py": (lambda b=raw_buf: comm.Allreduce(MPI.IN_PLACE, b, MPI.SUM),
                                 None)}
        for dev in devices:
            if dev != "cpu" and nbytes > args.device_max_mb * (1 << 20):
                continue
            t = ot.ones(count, device=dev)
            sync = None if dev == "cpu" else (lambda d=dev: ot.synchronize(d))
            contenders[f"omnitensor[{dev}]"] = (lambda t=t: dist.all_reduce(t), sync)
        # calls per timed batch: about 40 ms, agreed on by all ranks
        est = timed(contenders["mpi4py"][0], 1)
        reps = int(comm.allreduce(max(1, min(2000, int(0.04 / max(est, 1e-7)))), MPI.MAX))
        for fn, sync in contenders.values():  # warm up (kernel compiles, pools)
            timed(fn, 1, sync)
        samples: dict[str, list[float]] = {k: [] for k in contenders}
        rounds = args.rounds if nbytes < (64 << 20) else max(3, args.rounds // 2)
        for _ in range(rounds):
            for name, (fn, sync) in contenders.items():
                samples[name].append(timed(fn, reps, sync))
        # best round per rank; the slowest rank's is the collective's time
        med = {k: comm.allreduce(min(v), MPI.MAX) for k, v in samples.items()}
        rows.append((nbytes, med))
        if rank == 0:
            bus = {k: 2 * (n - 1) / n * nbytes / v / 1e9 for k, v in med.items()}
            cells = "  ".join(f"{k} {med[k] * 1e6:10.1f} us {bus[k]:7.2f} GB/s" for k in med)
            print(f"{_fmt(nbytes):>7}  {cells}  ratio {med['mpi4py'] / med['omnitensor[cpu]']:.2f}"
                  if "omnitensor[cpu]" in med else f"{_fmt(nbytes):>7}  {cells}", flush=True)
    if rank == 0:
        print(_table(rows, n))
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"ranks": n, "rows": [{"bytes": b, "seconds": m} for b, m in rows]},
                          f, indent=1)
    dist.destroy_process_group()
    return 0


def _fmt(nbytes: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if nbytes >= size:
            return f"{nbytes / size:g} {unit}"
    return f"{nbytes} B"


def _table(rows: list, n: int) -> str:
    """Markdown table: bus bandwidth per contender, ratio omnitensor[cpu] / mpi4py."""
    names = list(rows[0][1])
    head = "| size | " + " | ".join(f"{k} busbw GB/s" for k in names) + " | cpu ratio |"
    lines = [head, "|" + "---|" * (len(names) + 2)]
    for nbytes, med in rows:
        bus = [2 * (n - 1) / n * nbytes / med[k] / 1e9 if k in med else float("nan")
               for k in names]
        ratio = med["mpi4py"] / med["omnitensor[cpu]"] if "omnitensor[cpu]" in med else \
            float("nan")
        lines.append(f"| {_fmt(nbytes)} | " + " | ".join(f"{b:.3f}" for b in bus) +
                     f" | {ratio:.2f} |")
    first = rows[0][1]
    lat = "  ".join(f"{k} {v * 1e6:.1f} us" for k, v in first.items())
    lines.append(f"\nlatency at {_fmt(rows[0][0])}: {lat}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
