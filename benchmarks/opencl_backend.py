"""OpenCL backend benchmark: omnitensor on ``opencl:0`` (public API) vs raw PyOpenCL kernels,
``pyopencl.array`` and NumPy, in one run. Prints medians of repeats.

Rows (the targets of the OpenCL backend's issue):

1. tiny add (8 float32 elements), per op, asynchronous (enqueue only, one sync at the end);
2. 16M float32 add, GB/s counting 12 bytes per element (two reads, one write);
3. 1024x1024 float32 matmul, GFLOP/s;
4. 16M float32 sum, GB/s counting 4 bytes per element.

Usage: ``python benchmarks/opencl_backend.py [--repeats 7]``. The numbers are only
meaningful relative to the baselines of the same run (shared CI machines are noisy).
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

_RAW_SRC = """
__kernel void add(__global float *o, __global const float *a, __global const float *b) {
  size_t i = get_global_id(0); o[i] = a[i] + b[i];
}
typedef float8 __attribute__((aligned(4))) uf8;
__kernel void chunk_sum(__global float *part, __global const float *a, long chunk) {
  /* the memory-bound upper bound: 8-wide loads into 4 accumulators, one partial sum per
     work-item (no blocking or compensation: less accurate than omnitensor's) */
  long g = get_global_id(0); __global const float *p = a + g * chunk;
  float8 b0 = 0, b1 = 0, b2 = 0, b3 = 0;
  for (long j = 0; j < chunk; j += 32) {
    b0 += *(__global const uf8 *)(p + j); b1 += *(__global const uf8 *)(p + j + 8);
    b2 += *(__global const uf8 *)(p + j + 16); b3 += *(__global const uf8 *)(p + j + 24);
  }
  float8 s = b0 + b1 + b2 + b3;
  part[g] = s.s0 + s.s1 + s.s2 + s.s3 + s.s4 + s.s5 + s.s6 + s.s7;
}
#define T 16
__kernel void mm16(__global float *C, __global const float *A, __global const float *B,
                   int N) {
  __local float As[T][T], Bs[T][T];
  int r = get_local_id(1), c = get_local_id(0);
  int row = get_group_id(1) * T + r, col = get_group_id(0) * T + c;
  float acc = 0.0f;
  for (int t = 0; t < N; t += T) {
    As[r][c] = A[row * N + t + c];
    Bs[r][c] = B[(t + r) * N + col];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < T; k++) acc += As[r][k] * Bs[k][c];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  C[row * N + col] = acc;
}
"""


def _median_time(fn, sync, repeats: int, inner: int = 1) -> float:
    """Median seconds per call of ``fn`` (``inner`` calls per timed sample)."""
    fn()
    sync()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        samples.append((time.perf_counter() - t0) / inner)
    return statistics.median(samples)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args()
    reps = args.repeats

    import pyopencl as cl
    import pyopencl.array as cla

    import omnitensor as ot

    dev = ot.device("opencl:0")
    be = dev.backend
    st = be.state(0)
    ctx, q = st.ctx, st.queue  # the same context and queue omnitensor uses
    prg = cl.Program(ctx, _RAW_SRC).build()
    kadd, kmm, ksum = cl.Kernel(prg, "add"), cl.Kernel(prg, "mm16"), cl.Kernel(prg, "chunk_sum")
    sync = dev.synchronize
    rows = []

    def row(name, unit, ours, raw=None, pa=None, npy=None, note=""):
        rows.append((name, unit, ours, raw, pa, npy, note))

    # 1. tiny add, async per-op cost ------------------------------------------------
    n, inner = 8, 2000
    x, y = ot.ones(n, device=dev), ot.ones(n, device=dev)
    t_ours = _median_time(lambda: x + y, sync, reps, inner)
    a8 = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n)
    kadd.set_args(a8, a8, a8)
    t_raw = _median_time(lambda: cl.enqueue_nd_range_kernel(q, kadd, (n,), None), q.finish,
                         reps, inner)
    px, py = cla.to_device(q, np.ones(n, np.float32)), cla.to_device(q, np.ones(n, np.float32))
    t_pa = _median_time(lambda: px + py, q.finish, reps, inner)
    h = np.ones(n, np.float32)
    t_np = _median_time(lambda: h + h, lambda: None, reps, inner)
    row("tiny add (8 el.), per op", "us", t_ours * 1e6, t_raw * 1e6, t_pa * 1e6, t_np * 1e6,
        "lower is better; target <= 10 us")

    # 2. 16M float32 add ---------------------------------------------------------------
    n = 1 << 24
    ha, hb = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    x, y = ot.from_numpy(ha).to(dev), ot.from_numpy(hb).to(dev)
    gb = 12 * n / 1e9
    t_ours = _median_time(lambda: x + y, sync, reps)
    ba = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=ha)
    bb = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=hb)
    bo = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n)
    kadd.set_args(bo, ba, bb)
    t_raw = _median_time(lambda: cl.enqueue_nd_range_kernel(q, kadd, (n,), None), q.finish,
                         reps)
    px, py = cla.to_device(q, ha), cla.to_device(q, hb)
    t_pa = _median_time(lambda: px + py, q.finish, reps)
    t_np = _median_time(lambda: ha + hb, lambda: None, reps)
    row("16M float32 add", "GB/s", gb / t_ours, gb / t_raw, gb / t_pa, gb / t_np,
        "target >= 0.8x raw")

    # 3. 1024^2 float32 matmul -----------------------------------------------------------
    n = 1024
    ha, hb = np.random.rand(n, n).astype(np.float32), np.random.rand(n, n).astype(np.float32)
    x, y = ot.from_numpy(ha).to(dev), ot.from_numpy(hb).to(dev)
    gf = 2 * n ** 3 / 1e9
    t_ours = _median_time(lambda: x @ y, sync, reps)
    ma = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=ha)
    mb = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=hb)
    mc = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n * n)
    kmm.set_args(mc, ma, mb, np.int32(n))
    t_raw = _median_time(lambda: cl.enqueue_nd_range_kernel(q, kmm, (n, n), (16, 16)),
                         q.finish, reps)
    t_np = _median_time(lambda: ha @ hb, lambda: None, reps)
    err = float(np.abs((x @ y).numpy() - ha @ hb).max())
    row("1024^2 float32 matmul", "GFLOP/s", gf / t_ours, gf / t_raw, None, gf / t_np,
        f"raw = 16x16 local-memory tiles; target >= 50; max err {err:.1e}")

    # 4. 16M float32 sum -----------------------------------------------------------------
    n = 1 << 24
    ha = np.random.rand(n).astype(np.float32)
    x = ot.from_numpy(ha).to(dev)
    gb = 4 * n / 1e9
    t_ours = _median_time(lambda: x.sum(), sync, reps)
    sa = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=ha)
    parts = 64
    sp = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * parts)
    ksum.set_args(sp, sa, np.int64(n // parts))
    hp = np.empty(parts, np.float32)

    def raw_sum():
        cl.enqueue_nd_range_kernel(q, ksum, (parts,), (1,))
        cl.enqueue_copy(q, hp, sp)
        return hp.sum()
    t_raw = _median_time(raw_sum, q.finish, reps)
    px = cla.to_device(q, ha)
    t_pa = _median_time(lambda: cla.sum(px), q.finish, reps)
    t_np = _median_time(lambda: ha.sum(), lambda: None, reps)
    rel = abs(float(x.sum().item()) - float(ha.astype(np.float64).sum())) / float(ha.sum())
    row("16M float32 sum", "GB/s", gb / t_ours, gb / t_raw, gb / t_pa, gb / t_np,
        f"raw = 8-wide read kernel, 64 partials; target >= 20; rel err {rel:.1e}")

    info = be.device_info(0)
    print(f"device opencl:0 = {info['name']} ({info['platform']}, {info['compute_units']} "
          f"CUs); {be.version()}; median of {reps}")
    hdr = f"{'benchmark':28s} {'unit':8s} {'omnitensor':>11s} {'raw kernel':>11s} " \
          f"{'cl.array':>10s} {'numpy':>9s}  note"
    print(hdr)
    print("-" * len(hdr))

    def f(v):
        return f"{v:11.1f}" if v is not None else f"{'-':>11s}"
    for name, unit, ours, raw, pa, npy, note in rows:
        print(f"{name:28s} {unit:8s} {f(ours)} {f(raw)} {f(pa)[1:]:>10s} {f(npy)[2:]:>9s}  "
              f"{note}")


if __name__ == "__main__":
    main()
