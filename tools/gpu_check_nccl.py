"""NCCL check for a GPU machine: omnitensor.dist collectives on ``cuda`` tensors through
``cupy.cuda.nccl``, each compared with its NumPy definition.

    omnitensor-run -n 2 tools/gpu_check_nccl.py      # 2 ranks, one GPU each
    python tools/gpu_check_nccl.py                   # 1 GPU: one rank (MPI singleton)

NCCL needs one GPU per rank (two ranks on one GPU fail at communicator creation), so
the number of ranks is at most the number of GPUs; with one GPU the single-rank run still
exercises the whole path (unique-id bootstrap over MPI, communicator, stream handling,
every dtype and op). It also runs the MPI transport on cuda tensors (staged through the
host unless the MPI is CUDA-aware) for comparison. Prints ``NCCL CHECK PASSED`` and exits
0, or lists the failures and exits 1. Needs cupy-cuda12x (with NCCL) and mpi4py.
"""
from __future__ import annotations

import sys
import time
import traceback

import numpy as np


def main() -> int:
    import omnitensor as ot
    import omnitensor.distributed as dist
    from omnitensor.distributed import ReduceOp

    gpus = [d for d in ot.devices() if d.type == "cuda"]
    if not gpus:
        print("no cuda device: nothing to check (is CuPy installed and a GPU visible?)")
        return 2
    from mpi4py import MPI
    local = int(MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED).Get_rank())
    if local >= len(gpus):
        print(f"rank {MPI.COMM_WORLD.Get_rank()}: more ranks on this node than GPUs "
              f"({len(gpus)}); NCCL needs one GPU per rank")
        return 2
    dev = gpus[local % len(gpus)]
    dist.init_process_group(backend="nccl", device_id=dev, timeout=120)
    rank, n = dist.get_rank(), dist.get_world_size()
    assert dist.get_backend() == "nccl"
    failures: list[str] = []
    checks = 0

    def data(r: int, shape: tuple, dtype: str, seed: int) -> np.ndarray:
        rng = np.random.default_rng(1000 * seed + r)
        dt = np.dtype(dtype)
        if dt.kind == "b":
            return rng.random(shape) < 0.5
        if dt.kind in "iu":
            return rng.integers(0 if dt.kind == "u" else -3, 4, shape).astype(dt)
        x = rng.uniform(0.5, 1.5, shape)
        if dt.kind == "c":
            x = x + 1j * rng.uniform(0.5, 1.5, shape)
        return x.astype(dt)

    def check(name: str, got: "ot.Tensor", want: np.ndarray) -> None:
        nonlocal checks
        checks += 1
        g = got.cpu().numpy()
        tol = {"float16": 2e-3, "float32": 1e-5, "complex64": 1e-5}.get(want.dtype.name, 1e-12)
        ok = g.shape == want.shape and g.dtype == want.dtype and (
            np.array_equal(g, want) if want.dtype.kind in "iub" else
            np.allclose(g, want, rtol=tol, atol=tol))
        if not ok:
            failures.append(f"rank {rank}: {name}: got {g!r}, want {want!r}")

    def reduce_np(arrs: list[np.ndarray], op: ReduceOp) -> np.ndarray:
        dt = arrs[0].dtype
        acc = np.stack([a.astype(np.float32 if dt == np.float16 else dt) for a in arrs])
        if dt.kind == "b":
            return (acc.any(0) if op in (ReduceOp.SUM, ReduceOp.MAX) else acc.all(0))
        out = {ReduceOp.SUM: lambda: acc.sum(0), ReduceOp.AVG: lambda: acc.sum(0) / len(arrs),
               ReduceOp.PRODUCT: lambda: acc.prod(0), ReduceOp.MIN: lambda: acc.min(0),
               ReduceOp.MAX: lambda: acc.max(0)}[op]()
        return out.astype(dt)

    def on(a: np.ndarray) -> "ot.Tensor":
        return ot.tensor(np.array(a, order="C"), device=dev)

    dtypes = ["float32", "float16", "float64", "int32", "int64", "int8", "uint8", "int16",
              "bool", "complex64"]
    t0 = time.perf_counter()
    for dt in dtypes:
        kind = np.dtype(dt).kind
        ops = [ReduceOp.SUM, ReduceOp.AVG] if kind == "c" else (
            [ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX] if kind in "iub"
            else list(ReduceOp))
        for k, op in enumerate(ops):
            try:
                t = on(data(rank, (33,), dt, k))
                dist.all_reduce(t, op=op)
                check(f"all_reduce {dt} {op!r}", t, reduce_np([data(r, (33,), dt, k)
                                                              for r in range(n)], op))
            except Exception:
                failures.append(f"rank {rank}: all_reduce {dt} {op!r}:\n"
                                f"{traceback.format_exc()}")
        try:
            t = on(data(rank, (4, 3), dt, 20))
            dist.broadcast(t, src=n - 1)
            check(f"broadcast {dt}", t, data(n - 1, (4, 3), dt, 20))
            out = on(np.zeros((n * 4,), dt))
            dist.all_gather_into_tensor(out, on(data(rank, (4,), dt, 21)))
            check(f"all_gather {dt}", out, np.concatenate([data(r, (4,), dt, 21)
                                                           for r in range(n)]))
            full = [data(r, (n * 3,), dt, 22) for r in range(n)]
            out = on(np.zeros((3,), dt))
            dist.reduce_scatter_tensor(out, on(full[rank]))
            check(f"reduce_scatter {dt}", out, reduce_np(full, ReduceOp.SUM)[rank * 3:
                                                                             rank * 3 + 3])
            out = on(np.zeros((2 * n,), dt))
            dist.all_to_all_single(out, on(data(rank, (2 * n,), dt, 23)))
            check(f"all_to_all_single {dt}", out, np.concatenate(
                [data(r, (2 * n,), dt, 23)[2 * rank:2 * rank + 2] for r in range(n)]))
        except Exception:
            failures.append(f"rank {rank}: movement {dt}:\n{traceback.format_exc()}")
    try:
        # async handle + a strided view (written back in place)
        base = on(np.ones((4, 6), np.float32))
        w = dist.all_reduce(base[:, ::2], async_op=True)
        w.wait()
        want = np.ones((4, 6), np.float32)
        want[:, ::2] = n
        check("async all_reduce through a strided view", base, want)
        if n > 1:
            buf = on(np.zeros(5, np.float32))
            nxt, prv = (rank + 1) % n, (rank - 1) % n
            rw = dist.irecv(buf, src=prv)
            dist.isend(on(data(rank, (5,), "float32", 30)), dst=nxt).wait()
            rw.wait()
            check("isend/irecv ring", buf, data(prv, (5,), "float32", 30))
        # the MPI transport on cuda tensors (staged, or direct if MPI is CUDA-aware)
        mpi_group = dist.new_group(backend="mpi")
        t = on(data(rank, (9,), "float32", 31))
        dist.all_reduce(t, group=mpi_group)
        check("all_reduce over MPI on cuda tensors", t,
              reduce_np([data(r, (9,), "float32", 31) for r in range(n)], ReduceOp.SUM))
        # bandwidth sample: 64 MB float32 all_reduce
        big = ot.ones(16 << 20, device=dev)
        dist.all_reduce(big)
        ot.synchronize(dev)
        reps = 5
        t1 = time.perf_counter()
        for _ in range(reps):
            dist.all_reduce(big)
        ot.synchronize(dev)
        secs = (time.perf_counter() - t1) / reps
        bus = 2 * (n - 1) / n * big.nbytes / secs / 1e9 if n > 1 else float("nan")
        if rank == 0:
            print(f"64 MB all_reduce: {secs * 1e3:.2f} ms, bus bandwidth {bus:.1f} GB/s")
    except Exception:
        failures.append(f"rank {rank}: {traceback.format_exc()}")
    everyone: list = [None] * n
    dist.all_gather_object(everyone, failures)
    all_failures = [f for fs in everyone for f in fs]
    dist.destroy_process_group()
    if rank == 0:
        if all_failures:
            print("\n".join(all_failures))
            print(f"NCCL CHECK FAILED: {len(all_failures)} failure(s)")
        else:
            print(f"NCCL CHECK PASSED: {checks} checks x {n} rank(s) on {dev} "
                  f"({time.perf_counter() - t0:.1f} s)")
    return 1 if all_failures else 0


if __name__ == "__main__":
    sys.exit(main())
