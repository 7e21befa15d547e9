"""Plain-dpnp reproducer for the host-memory growth behind the sycl:0 20k-step soak xfail
(not a test: run ``python tests/soak/sycl_leak_repro.py [calls] [wait_every]``).

Each case runs one dpnp call in a loop after a warm-up, waiting for the queue every
``wait_every`` calls (100 by default), and prints the growth of RSS and of glibc's
in-use heap bytes (``mallinfo2().uordblks``) per call. Measured with dpnp 0.20.0 and
dpctl 0.22.1 on Intel's OpenCL CPU runtime, 16,000 calls, a wait every 100 calls:

=====================================  ==================  ==========================
case                                   RSS late, B/call    note
=====================================  ==================  ==========================
``not_equal(x_int64, -100)``           113-139             grows linearly
``not_equal(x_int64, zero_d_int64)``   236-273             grows linearly
``not_equal(x_int64, full_like(x))``   <1                  omnitensor's workaround
``not_equal(x_float32, -100.0)``       <1
``not_equal(x_int64, -100)``, wait     ~1                  a wait after every call
every call
=====================================  ==================  ==========================

Python's own heap does not grow (tracemalloc: <1 B per training step after warm-up);
the growth is native (glibc's main heap), so it lies in dpnp/dpctl's C++ code or the
SYCL runtime, not in Python objects.
"""
from __future__ import annotations

import ctypes
import gc
import os
import sys


def main() -> None:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
    from omnitensor.backends.sycl import env
    env.prepare()  # finds Intel's OpenCL CPU runtime for dpctl
    import dpctl
    import dpnp

    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 16000
    every = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    libc = ctypes.CDLL("libc.so.6")

    class MallInfo2(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
            "uordblks", "fordblks", "keepcost")]
    libc.mallinfo2.restype = MallInfo2
    page = os.sysconf("SC_PAGE_SIZE")

    def rss() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * page

    q = dpctl.SyclQueue()
    xi = dpnp.zeros((64,), dtype="i8", sycl_queue=q)
    xf = dpnp.zeros((64,), dtype="f4", sycl_queue=q)
    zi = dpnp.asarray(-100, dtype="i8", sycl_queue=q)
    cases = {
        "not_equal(x_int64, -100)": lambda: dpnp.not_equal(xi, -100),
        "not_equal(x_int64, 0-d int64)": lambda: dpnp.not_equal(xi, zi),
        "not_equal(x_int64, full_like)": lambda: dpnp.not_equal(xi, dpnp.full_like(xi, -100)),
        "not_equal(x_float32, -100.0)": lambda: dpnp.not_equal(xf, -100.0),
    }
    for name, op in cases.items():
        for _ in range(500):
            op()
        q.wait()
        gc.collect()
        r0, m0 = rss(), libc.mallinfo2().uordblks
        for i in range(calls):
            op()
            if every and i % every == 0:
                q.wait()
        q.wait()
        gc.collect()
        r1, m1 = rss(), libc.mallinfo2().uordblks
        print(f"{name:32s} RSS {(r1 - r0) / calls:7.1f} B/call, heap in use "
              f"{(m1 - m0) / calls:7.1f} B/call ({calls} calls, wait every {every})")


if __name__ == "__main__":
    main()
