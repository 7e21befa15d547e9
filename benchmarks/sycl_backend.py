"""omnitensor ``sycl:0`` vs raw dpnp on the same device and queue, medians of interleaved
repeats in one run (ratios are what we report, both sides share the noise):

* tiny add (8 elements), per op: Python overhead of core + backend (target <= 1.1x dpnp);
* 16M float32 add: bandwidth, against dpnp writing into a preallocated ``out=``
  (target >= 0.9x);
* 2048x2048 float32 matmul: oneMKL through both (target >= 0.95x).

    python benchmarks/sycl_backend.py [--small] [--profile]

``--profile`` runs cProfile over the omnitensor tiny add and prints where the time goes.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _timing import fmt_time, interleaved  # noqa: E402


def _table(rows: list) -> None:
    for title, times, rates, unit in rows:
        base = times["dpnp"]
        print(f"\n{title}")
        for name, t in times.items():
            rate = f"  {rates[name]:8.1f} {unit}" if rates else ""
            print(f"  {name:22s} {fmt_time(t)}{rate}   {base / t:5.2f}x dpnp speed")


def _profile(fn, n: int = 20000) -> None:
    import cProfile
    import pstats
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(n):
        fn()
    pr.disable()
    print(f"\ncProfile of {n} omnitensor tiny adds (tottime, top 15):")
    pstats.Stats(pr).sort_stats("tottime").print_stats(15)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", action="store_true", help="smaller sizes (quick check)")
    ap.add_argument("--profile", action="store_true", help="cProfile the tiny add")
    args = ap.parse_args()
    import numpy as np

    import omnitensor as ot
    from omnitensor.backends import registry
    be, why = registry.try_backend("sycl")
    if be is None:
        print("no SYCL device:", why)
        return
    import dpnp
    q = be._queues[0]
    sync = q.wait
    info = be.device_info(0)
    print(f"sycl:0 = {info['name']} ({info['platform']}, driver {info['driver']}); "
          f"{be.version()}")
    rows = []

    # tiny add: per-op overhead (async enqueue, one wait per batch on both sides)
    x8 = dpnp.ones(8, dtype=np.float32, sycl_queue=q)
    t8 = ot.ones(8, device="sycl:0")
    r = interleaved({"dpnp": lambda: x8 + x8, "omnitensor": lambda: t8 + t8},
                    syncs={"dpnp": sync, "omnitensor": sync}, repeats=31)
    rows.append(("tiny add (8 float32), per op", r, None, ""))

    # bandwidth: dpnp with out= is the no-allocation ceiling
    n = (4 if args.small else 16) * 1024 * 1024
    xa = dpnp.ones(n, dtype=np.float32, sycl_queue=q)
    xb = dpnp.ones(n, dtype=np.float32, sycl_queue=q)
    xo = dpnp.empty(n, dtype=np.float32, sycl_queue=q)
    ta = ot.ones(n, device="sycl:0")
    tb = ot.ones(n, device="sycl:0")
    tc = ot.zeros(n, device="sycl:0")
    fns = {"dpnp": lambda: dpnp.add(xa, xb, out=xo),
           "dpnp (new array)": lambda: xa + xb,
           "omnitensor a + b": lambda: ta + tb,
           "omnitensor c += b": lambda: tc.add_(tb)}
    r = interleaved(fns, syncs={k: sync for k in fns}, repeats=9)
    rows.append((f"{n >> 20}M float32 add", r, {k: 3 * 4 * n / v / 1e9 for k, v in r.items()},
                 "GB/s"))

    # matmul through oneMKL
    m = 1024 if args.small else 2048
    host = np.random.default_rng(0).standard_normal((m, m), dtype=np.float32)
    xm = dpnp.asarray(host, sycl_queue=q)
    tm = ot.tensor(host, device="sycl:0")
    fns = {"dpnp": lambda: xm @ xm, "omnitensor": lambda: tm @ tm}
    r = interleaved(fns, syncs={k: sync for k in fns}, repeats=5, min_time=0.2)
    rows.append((f"{m}x{m} float32 matmul", r, {k: 2 * m ** 3 / v / 1e9 for k, v in r.items()},
                 "GFLOP/s"))

    _table(rows)
    tiny, bw, mm = rows[0][1], rows[1][1], rows[2][1]
    print("\ntargets:")
    print(f"  tiny add      omnitensor/dpnp time  {tiny['omnitensor'] / tiny['dpnp']:.2f}x "
          f"(target <= 1.10x)")
    print(f"  {n >> 20}M add       omnitensor/dpnp(out=) speed "
          f"{bw['dpnp'] / bw['omnitensor a + b']:.2f}x (target >= 0.90x)")
    print(f"  matmul        omnitensor/dpnp speed {mm['dpnp'] / mm['omnitensor']:.2f}x "
          f"(target >= 0.95x)")
    if args.profile:
        _profile(lambda: t8 + t8)
        sync()


if __name__ == "__main__":
    main()
