"""Per-call cost of an elementwise op on sycl:0: dpnp's own kernel vs the OpenCL C kernel
omnitensor generates (``omnitensor.kernels``), built by dpctl and launched with
``SyclQueue.submit_async`` on USM pointers.

    python benchmarks/sycl_generated_kernels.py [--repeat 400]

Prints medians (us per call, asynchronous calls; the queue drained every 50 calls) for
float32 add and exp at 8 and 1M elements, and checks both give NumPy's values. Needs an
OpenCL-backed SYCL device (dpctl builds source only through OpenCL).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np


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
    rows = []
    for n in (8, 1 << 20):
        a = dpnp.asarray(np.random.rand(n).astype(np.float32), sycl_queue=q)
        b = dpnp.asarray(np.random.rand(n).astype(np.float32), sycl_queue=q)
        ref_add = dpnp.asnumpy(a) + dpnp.asnumpy(b)
        np.testing.assert_array_equal(dpnp.asnumpy(launcher.binary("add", a, b)), ref_add)
        np.testing.assert_allclose(dpnp.asnumpy(launcher.unary("exp", a)),
                                   np.exp(dpnp.asnumpy(a)), rtol=2e-7)
        sync = q.wait
        for name, dp, gen in (
                ("add", lambda a=a, b=b: dpnp.add(a, b),
                 lambda a=a, b=b: launcher.binary("add", a, b)),
                ("exp", lambda a=a: dpnp.exp(a), lambda a=a: launcher.unary("exp", a))):
            t_dp, t_gen = _interleaved_us((dp, gen), args.repeat, sync)
            rows.append((name, n, t_dp, t_gen))
            print(f"{name:4s} n={n:>8d}: dpnp {t_dp:8.1f} us   generated {t_gen:8.1f} us   "
                  f"x{t_dp / t_gen:5.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
