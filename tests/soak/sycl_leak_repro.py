"""Plain-dpctl/dpnp reproducer for the host-memory growth behind the sycl:0 20k-step soak
xfail (not a test: run ``python tests/soak/sycl_leak_repro.py [calls] [wait_every]``).

Root cause (found with heaptrack and a perf uprobe in Intel's OpenCL CPU runtime,
``intel-opencl-rt`` 2026.2.0; the same code is in 2025.3.3): every USM free
(``clMemBlockingFreeINTEL``, which ``sycl::free`` reaches through the Unified Runtime's
``urUSMFree``) runs ``Intel::OpenCL::Framework::Context::USMFree(void*)``, which looks the
pointer up in a per-context ``std::map<void*, std::vector<void*>>`` (the buffers associated
with a USM pointer, filled by ``clSetKernelExecInfo``) with ``operator[]`` and never erases
the entry. So the first free of every *distinct* USM address leaves a 64-byte map node
(80 B of glibc heap) behind for the life of the context; freeing an address seen before
costs nothing.

Why addresses keep being new: USM device memory on this runtime is glibc heap
(``posix_memalign``, 128-byte aligned). glibc 2.36's ``memalign`` never takes chunks from
the per-thread tcache, while a freed USM chunk of up to 1 KiB goes into the tcache of the
thread that frees it (the main thread, or a SYCL host-task worker: dpnp frees its
temporaries, and the last reference of many arrays, there) and is then reused by ordinary
``malloc`` calls; the next USM allocation is carved from other heap. dpnp's strided kernels
(any broadcast or non-contiguous operand) allocate two tiny USM temporaries (the packed
shape and strides, on the host and the device), and 0-d results and Python-scalar operands
are tiny USM arrays too. In the soak's MLP + cross_entropy step (~126 USM frees a step,
counted with a uprobe) ~16.5 frees a step hit a new address: ~1.3 KB a step of heap in use,
~2 KB a step of RSS with the fragmentation, all of it glibc's main heap.
``GLIBC_TUNABLES=glibc.malloc.tcache_count=0`` (set before the process starts) lets freed
USM chunks coalesce and be carved again at the same addresses: 0.56 new addresses a step,
~85 B a step of heap. No call omnitensor could make instead avoids USM temporaries inside
dpnp, so this stays a known gap of the runtime.

Cases (each after a warm-up; RSS and glibc's in-use heap bytes, ``mallinfo2().uordblks``;
the numbers depend on the heap's state, so they move between runs and with the order):

* ``alloc + free`` (run first): allocate and free one 64-byte USM block per call. Measured
  10,000 frees, 9,974 of them at a new address, +76.5 B of heap a free (with 160-byte
  blocks in another run, 0.2 B a call: there the address repeated).
* ``distinct addresses``: allocate 20,000 64-byte USM blocks at once, free them all, four
  rounds: 80 B of heap left per new address once glibc's own bookkeeping has settled
  (~133 B in the first rounds), and most addresses are new again in every round (the map's
  nodes take the freed space, so the blocks land elsewhere).
* ``equal(broadcast)``: ``dpnp.equal`` of a ``(64, 1)`` and a ``(10,)`` int64 array (dpnp's
  strided kernel): 30-110 B a call; two contiguous ``(64, 10)`` arrays: 2-27 B a call.
* the scalar cases of the first reproducer: ``not_equal(x_int64, -100)`` 80-140 B a call,
  ``not_equal(x_float32, -100.0)`` <1 to 120 B a call, ``not_equal(x_int64,
  full_like(x))`` <1 to 20 B a call (the ``int_scalar_as_array`` workaround in
  ``omnitensor/backends/sycl/ops.py``: fewer tiny USM temporaries, hence fewer new addresses).
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
    import dpctl.memory as dm
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

    def heap() -> int:
        return int(libc.mallinfo2().uordblks)

    q = dpctl.SyclQueue()

    # the runtime defect itself: each free at a new address leaves a map node ...
    seen: set[int] = set()
    for _ in range(500):
        seen.add(dm.MemoryUSMDevice(64, queue=q)._pointer)
    gc.collect()
    h0, n0 = heap(), len(seen)
    for _ in range(calls):
        seen.add(dm.MemoryUSMDevice(64, queue=q)._pointer)
    gc.collect()
    print(f"alloc + free (64 B): heap in use {(heap() - h0) / calls:+6.1f} B/free, "
          f"{len(seen) - n0} new addresses in {calls} frees")
    # ... and a free at an address freed before leaves nothing new
    for r in range(4):
        gc.collect()
        h0 = heap()
        blocks = [dm.MemoryUSMDevice(64, queue=q) for _ in range(20000)]
        ptrs = {b._pointer for b in blocks}
        new = len(ptrs - seen)
        seen |= ptrs
        del blocks
        gc.collect()
        grown = heap() - h0
        print(f"distinct addresses, round {r}: heap in use +{grown / 20000:6.1f} B/free, "
              f"{new} of 20000 addresses new, {grown / max(new, 1):6.1f} B per new address")

    xi = dpnp.zeros((64,), dtype="i8", sycl_queue=q)
    xf = dpnp.zeros((64,), dtype="f4", sycl_queue=q)
    zi = dpnp.asarray(-100, dtype="i8", sycl_queue=q)
    col = dpnp.zeros((64, 1), dtype="i8", sycl_queue=q)
    row = dpnp.arange(10, dtype="i8", sycl_queue=q)
    mat = dpnp.zeros((64, 10), dtype="i8", sycl_queue=q)
    cases = {
        "equal(broadcast (64,1), (10,))": lambda: dpnp.equal(col, row),
        "equal(contiguous (64,10) x2)": lambda: dpnp.equal(mat, mat),
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
        r0, m0 = rss(), heap()
        for i in range(calls):
            op()
            if every and i % every == 0:
                q.wait()
        q.wait()
        gc.collect()
        r1, m1 = rss(), heap()
        print(f"{name:34s} RSS {(r1 - r0) / calls:7.1f} B/call, heap in use "
              f"{(m1 - m0) / calls:7.1f} B/call ({calls} calls, wait every {every})")


if __name__ == "__main__":
    main()
