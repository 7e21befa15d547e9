"""Per-call cost of an elementwise op on sycl:0: dpnp's own kernel vs the OpenCL C kernel
omnitensor generates (``omnitensor.kernels``), built by dpctl and launched with
``SyclQueue.submit_async`` on USM pointers.

    python benchmarks/sycl_generated_kernels.py [--repeat 400]

Prints medians (us per call, asynchronous calls; the queue drained every 50 calls; the
variants timed in alternating blocks) for float32 add and exp at 8 and 1M elements: dpnp,
the generated kernel as a usable op (fresh result, ordered with dpnp's kernels, arguments
held until the kernel's event completes), the same keeping arguments alive by a host task
per kernel as dpnp does, and (add) the bare ``submit_async``; checks the generated results against NumPy first. Needs an
OpenCL-backed SYCL device (dpctl builds source only through OpenCL).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this tree


def _interleaved_us(fns, repeat: int, sync) -> list[float]:
    """Median us per call of each of ``fns``, timed in alternating blocks of 50 calls (a
    busy machine slows them alike)."""
    for fn in fns:
        for _ in range(20):
            fn()
    sync()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(max(1, repeat // 50)):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(50):
                fn()
            sync()
            times[i].append((time.perf_counter() - t0) / 50 * 1e6)
    return [statistics.median(t) for t in times]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=400)
    args = ap.parse_args()
    import omnitensor as ot
    ot.zeros(1, device="sycl:0")  # loads the backend (its ICD setup runs before dpctl)
    import dpnp

    from omnitensor.backends.registry import get_backend
    from omnitensor.backends.sycl import kernels as sk
    be = get_backend("sycl")
    q = be._queues[0]
    print(f"device: {q.sycl_device.name} ({q.sycl_device.backend})")
    launcher = sk.Launcher(q)
    launcher.keep_alive = "events"  # arguments held until the kernel's event completes
    bare = sk.Launcher(q)  # dpnp's way of keeping arguments alive: a host task per kernel
    bare.keep_alive = "host_task"
    raw = sk.Launcher(q)
    rows = []
    for n in (8, 1 << 20):
        a = dpnp.asarray(np.random.rand(n).astype(np.float32), sycl_queue=q)
        b = dpnp.asarray(np.random.rand(n).astype(np.float32), sycl_queue=q)
        ref_add = dpnp.asnumpy(a) + dpnp.asnumpy(b)
        np.testing.assert_array_equal(dpnp.asnumpy(launcher.binary("add", a, b)), ref_add)
        np.testing.assert_allclose(dpnp.asnumpy(launcher.unary("exp", a)),
                                   np.exp(dpnp.asnumpy(a)), rtol=2e-7)
        sync = q.wait
        t = sk.BY_NP[np.dtype(np.float32)]
        k_add = raw.kernel("add", t)
        out = dpnp.empty(n, dtype=np.float32, sycl_queue=q)
        usm = [out.get_array().usm_data, a.get_array().usm_data, b.get_array().usm_data]
        usm.append(usm[1])
        items, chunk = raw.split(n)
        params = sk.pack_params(0, (0, 0), n, chunk, 0, (bytes(16), bytes(16)))
        lsize = [1] if raw.is_cpu else [64]

        def submit_only(k=k_add, usm=usm, params=params, items=items, lsize=lsize):
            # the launch alone: no result allocation, no ordering, no keep-alive (not a
            # usable op: it shows what dpctl's submission itself costs)
            q.submit_async(k, [*usm, sk.dpctl.RawKernelArg(params)], [items], lsize)
        for name, fns in (
                ("add", (lambda a=a, b=b: dpnp.add(a, b),
                         lambda a=a, b=b: launcher.binary("add", a, b),
                         lambda a=a, b=b: bare.binary("add", a, b), submit_only)),
                ("exp", (lambda a=a: dpnp.exp(a), lambda a=a: launcher.unary("exp", a),
                         lambda a=a: bare.unary("exp", a)))):
            ts = _interleaved_us(fns, args.repeat, sync)
            rows.append((name, n, *ts))
            extra = f"   submit only {ts[3]:8.1f}" if len(ts) > 3 else ""
            print(f"{name:4s} n={n:>8d}: dpnp {ts[0]:8.1f} us   generated {ts[1]:8.1f} us "
                  f"(x{ts[0] / ts[1]:4.2f})   with a keep-alive host task {ts[2]:8.1f} us "
                  f"(x{ts[0] / ts[2]:4.2f}){extra}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
