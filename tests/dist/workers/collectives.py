"""Rank worker: every collective on one device, checked against its NumPy definition.

    mpiexec -n N python collectives.py DEVICE REPORT.json [SECTIONS]

Every rank can compute every rank's input (seeded by rank), so each rank checks its own
result locally. Each section runs in try/except so one failure does not hide the others;
rank 0 gathers all ranks' outcomes and writes ``{section: "ok" | error text}`` to
REPORT.json. Exits 1 when any section failed on any rank.
"""
from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np

import omnitensor as ot
import omnitensor.distributed as dist
from omnitensor.distributed import ReduceOp

from _harness import run_sections

DEV = sys.argv[1]
REPORT = sys.argv[2]
ONLY = set(sys.argv[3].split(",")) if len(sys.argv) > 3 else None

if not dist.is_initialized():  # suite.py may have initialised it
    dist.init_process_group(timeout=90)
R, N = dist.get_rank(), dist.get_world_size()
DEVICE = ot.device(DEV)
ALL_DTYPES = ["float32", "float64", "float16", "int32", "int64", "int16", "uint8", "int8",
              "bool", "complex64", "complex128"]
DTYPES = [d for d in ALL_DTYPES if DEVICE.supports_dtype(d)]
TOL = {"float16": 2e-3, "float32": 2e-6, "complex64": 2e-6, "float64": 1e-12,
       "complex128": 1e-12}


# ----------------------------------------------------------------------- helpers
def data(rank: int, shape: tuple, dtype: str, seed: int = 0, small: bool = False) -> np.ndarray:
    """Rank ``rank``'s deterministic input (any rank can compute any rank's)."""
    rng = np.random.default_rng(1000 * seed + rank)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -3
        return rng.integers(lo, 4, size=shape).astype(dt)
    x = rng.uniform(0.5, 1.5, size=shape) if small else rng.standard_normal(shape)
    if dt.kind == "c":
        y = rng.uniform(0.5, 1.5, size=shape) if small else rng.standard_normal(shape)
        x = x + 1j * y
    return x.astype(dt)


def T(a: np.ndarray) -> ot.Tensor:
    return ot.tensor(np.array(a, order="C"), device=DEVICE)


def host(t: ot.Tensor) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy())


def close(got: Any, want: np.ndarray, what: str) -> None:
    got = host(got) if isinstance(got, ot.Tensor) else np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    tol = TOL.get(want.dtype.name)
    if tol is None:
        ok = np.array_equal(got, want)
    else:
        ok = np.allclose(got, want, rtol=tol, atol=tol)
    assert ok, f"{what}: got\n{got}\nwant\n{want}"


def reduce_np(arrays: list[np.ndarray], op: ReduceOp) -> np.ndarray:
    """The definition of a reduction over ranks (float16 accumulates in float32)."""
    dt = arrays[0].dtype
    acc_dt = np.float32 if dt == np.float16 else dt
    stack = np.stack([a.astype(acc_dt) for a in arrays])
    if dt.kind == "b":
        if op in (ReduceOp.SUM, ReduceOp.MAX):
            return stack.any(axis=0)
        return stack.all(axis=0)
    if op is ReduceOp.SUM:
        out = stack.sum(axis=0, dtype=acc_dt)
    elif op is ReduceOp.AVG:
        out = stack.sum(axis=0, dtype=acc_dt) / len(arrays)
    elif op is ReduceOp.PRODUCT:
        out = stack.prod(axis=0, dtype=acc_dt)
    elif op is ReduceOp.MIN:
        out = stack.min(axis=0)
    else:
        out = stack.max(axis=0)
    return out.astype(dt)


def ops_for(dtype: str) -> list[ReduceOp]:
    kind = np.dtype(dtype).kind
    if kind == "c":
        return [ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.AVG]
    if kind in "iub":
        return [ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX]
    return list(ReduceOp)


def raises(exc: type, fn: Callable[[], Any], what: str, text: str = "") -> None:
    try:
        fn()
    except exc as e:
        assert text in str(e), f"{what}: message {e!r} lacks {text!r}"
        return
    raise AssertionError(f"{what}: no {exc.__name__} raised")


# ---------------------------------------------------------------------- sections
def s_all_reduce() -> None:
    shape = (3, 5)
    for dt in DTYPES:
        for k, op in enumerate(ops_for(dt)):
            small = op is ReduceOp.PRODUCT
            t = T(data(R, shape, dt, k, small))
            dist.all_reduce(t, op=op)
            want = reduce_np([data(r, shape, dt, k, small) for r in range(N)], op)
            close(t, want, f"all_reduce {dt} {op!r}")
    # async handle, 0-d and empty tensors
    t = T(data(R, (7,), "float32", 9))
    w = dist.all_reduce(t, async_op=True)
    assert w is not None and w.wait() is True and w.is_completed()
    close(t, reduce_np([data(r, (7,), "float32", 9) for r in range(N)], ReduceOp.SUM),
          "async all_reduce")
    z = T(np.array(float(R + 1), np.float32))
    dist.all_reduce(z, op=ReduceOp.MAX)
    close(z, np.array(float(N), np.float32), "0-d all_reduce")
    e = T(np.zeros((0, 3), np.float32))
    dist.all_reduce(e)
    assert e.shape == (0, 3)


def s_views() -> None:
    # the result reaches the base through a strided view, other elements untouched
    base = T(np.zeros((4, 6), np.float32) + R)
    view = base[:, ::2]
    assert not view.is_contiguous()
    dist.all_reduce(view)
    want = np.zeros((4, 6), np.float32) + R
    want[:, ::2] = sum(range(N))
    close(base, want, "all_reduce through a strided view")
    base = T(np.arange(12, dtype=np.float64).reshape(3, 4) * (R + 1))
    tv = base.T
    dist.broadcast(tv, src=N - 1)
    close(base, np.arange(12, dtype=np.float64).reshape(3, 4) * N, "broadcast into a .T view")
    alias = base.detach()
    dist.all_reduce(base, op=ReduceOp.MIN)
    close(alias, host(base), "alias sees the in-place result")


def s_broadcast() -> None:
    for src in range(N):
        for dt in DTYPES:
            t = T(data(R, (2, 3), dt, src))
            dist.broadcast(t, src=src)
            close(t, data(src, (2, 3), dt, src), f"broadcast {dt} from {src}")
    t = T(data(R, (5,), "float32", 3))
    dist.broadcast(t, group_src=N - 1, async_op=True).wait()
    close(t, data(N - 1, (5,), "float32", 3), "broadcast group_src async")


def s_reduce() -> None:
    dst = N - 1
    for dt in DTYPES:
        op = ReduceOp.SUM
        mine = data(R, (4,), dt, 5)
        t = T(mine)
        dist.reduce(t, dst=dst, op=op)
        if R == dst:
            close(t, reduce_np([data(r, (4,), dt, 5) for r in range(N)], op), f"reduce {dt}")
        else:
            close(t, mine, f"reduce leaves non-dst {dt} unchanged")
    t = T(data(R, (4,), "float64", 6))
    dist.reduce(t, dst=0, op=ReduceOp.AVG)
    if R == 0:
        close(t, reduce_np([data(r, (4,), "float64", 6) for r in range(N)], ReduceOp.AVG),
              "reduce AVG")


def s_all_gather() -> None:
    for dt in DTYPES:
        mine = data(R, (2, 3), dt, 7)
        outs = [T(np.zeros((2, 3), dt)) for _ in range(N)]
        dist.all_gather(outs, T(mine))
        for r in range(N):
            close(outs[r], data(r, (2, 3), dt, 7), f"all_gather {dt} [{r}]")
        flat = T(np.zeros((N * 2, 3), dt))
        dist.all_gather_into_tensor(flat, T(mine))
        close(flat, np.concatenate([data(r, (2, 3), dt, 7) for r in range(N)]),
              f"all_gather_into_tensor {dt}")
    stacked = T(np.zeros((N, 4), np.float32))
    w = dist.all_gather_into_tensor(stacked, T(data(R, (4,), "float32", 8)), async_op=True)
    w.wait()
    close(stacked, np.stack([data(r, (4,), "float32", 8) for r in range(N)]),
          "all_gather_into_tensor stacked, async")


def s_reduce_scatter() -> None:
    for dt in DTYPES:
        for op in ops_for(dt)[:2] + ([ReduceOp.AVG] if np.dtype(dt).kind in "fc" else []):
            small = op is ReduceOp.PRODUCT
            full = [data(r, (N, 3), dt, 11, small) for r in range(N)]
            out = T(np.zeros((3,), dt))
            dist.reduce_scatter(out, [T(full[R][j]) for j in range(N)], op=op)
            close(out, reduce_np(full, op)[R], f"reduce_scatter {dt} {op!r}")
            out2 = T(np.zeros((3,), dt))
            dist.reduce_scatter_tensor(out2, T(full[R].reshape(-1)), op=op)
            close(out2, reduce_np(full, op)[R], f"reduce_scatter_tensor {dt} {op!r}")


def s_gather_scatter() -> None:
    root = 1 % N
    for dt in DTYPES:
        mine = data(R, (3,), dt, 13)
        lst = [T(np.zeros((3,), dt)) for _ in range(N)] if R == root else None
        dist.gather(T(mine), lst, dst=root)
        if R == root:
            for r in range(N):
                close(lst[r], data(r, (3,), dt, 13), f"gather {dt} [{r}]")
        out = T(np.zeros((2, 2), dt))
        src_list = [T(data(r, (2, 2), dt, 14)) for r in range(N)] if R == root else None
        dist.scatter(out, src_list, src=root)
        close(out, data(R, (2, 2), dt, 14), f"scatter {dt}")


def s_all_to_all() -> None:
    for dt in DTYPES:
        # uneven: rank i sends i + j + 1 elements to rank j
        def chunk(i: int, j: int) -> np.ndarray:
            return data(100 * i + j, (i + j + 1,), dt, 15)
        ins = [T(chunk(R, j)) for j in range(N)]
        outs = [T(np.zeros((i + R + 1,), dt)) for i in range(N)]
        dist.all_to_all(outs, ins)
        for i in range(N):
            close(outs[i], chunk(i, R), f"all_to_all {dt} from {i}")
        inp = T(data(R, (2 * N, 3), dt, 16))
        out = T(np.zeros((2 * N, 3), dt))
        dist.all_to_all_single(out, inp)
        want = np.concatenate([data(i, (2 * N, 3), dt, 16)[2 * R:2 * R + 2] for i in range(N)])
        close(out, want, f"all_to_all_single {dt}")
    # uneven splits: rank i sends (j + 1) rows to rank j
    send_sizes = [j + 1 for j in range(N)]
    recv_sizes = [R + 1] * N
    inp = T(data(R, (sum(send_sizes), 2), "float32", 17))
    out = T(np.zeros((sum(recv_sizes), 2), np.float32))
    dist.all_to_all_single(out, inp, recv_sizes, send_sizes)
    offs = np.concatenate(([0], np.cumsum(send_sizes)))
    want = np.concatenate([data(i, (sum(send_sizes), 2), "float32", 17)[offs[R]:offs[R + 1]]
                           for i in range(N)])
    close(out, want, "all_to_all_single with split sizes")


def s_p2p() -> None:
    nxt, prv = (R + 1) % N, (R - 1) % N
    for dt in DTYPES:
        mine = data(R, (3, 2), dt, 18)
        buf = T(np.zeros((3, 2), dt))
        if R % 2 == 0:
            dist.send(T(mine), dst=nxt)
            dist.recv(buf, src=prv)
        else:
            dist.recv(buf, src=prv)
            dist.send(T(mine), dst=nxt)
        close(buf, data(prv, (3, 2), dt, 18), f"send/recv ring {dt}")
    # nonblocking both ways, with tags
    buf = T(np.zeros(4, np.float32))
    rw = dist.irecv(buf, src=prv, tag=7)
    sw = dist.isend(T(data(R, (4,), "float32", 19)), dst=nxt, tag=7)
    sw.wait()
    rw.wait()
    close(buf, data(prv, (4,), "float32", 19), "isend/irecv")
    # recv from any source returns the sender's rank
    if R == 0:
        got = set()
        for _ in range(N - 1):
            b = T(np.zeros(2, np.int64))
            sender = dist.recv(b)
            assert int(host(b)[0]) == sender, (host(b), sender)
            got.add(sender)
        assert got == set(range(1, N)), got
    else:
        dist.send(T(np.array([R, R], np.int64)), dst=0)


def s_objects() -> None:
    objs = [None, None, None]
    if R == 0:
        objs = [{"lr": 0.1, 3: (1, 2)}, b"\x00bytes", ot.arange(3.0)]
    dist.broadcast_object_list(objs, src=0)
    assert objs[0] == {"lr": 0.1, 3: (1, 2)} and objs[1] == b"\x00bytes", objs
    assert isinstance(objs[2], ot.Tensor) and host(objs[2]).tolist() == [0.0, 1.0, 2.0]
    gathered: list = [None] * N
    dist.all_gather_object(gathered, {"rank": R, "t": (R, "x"), "c": 1j * R, "s": {R}})
    assert gathered == [{"rank": r, "t": (r, "x"), "c": 1j * r, "s": {r}} for r in range(N)]
    out: list = [None] * N if R == 0 else None
    dist.gather_object(("g", R), out, dst=0)
    if R == 0:
        assert out == [("g", r) for r in range(N)], out
    got: list = [None]
    dist.scatter_object_list(got, [f"item{r}" for r in range(N)] if R == N - 1 else None,
                             src=N - 1)
    assert got == [f"item{R}"], got

    class Custom:
        pass
    raises(TypeError, lambda: dist.all_gather_object([None] * N, Custom()),
           "arbitrary objects are refused", "never pickles")


def s_groups() -> None:
    members = [0, N - 1]
    g = dist.new_group(members)
    t = T(np.array([float(R + 1)], np.float32))
    r = dist.all_reduce(t, group=g)
    assert r is None
    if R in members:
        assert dist.get_rank(g) == members.index(R) and dist.get_world_size(g) == 2
        close(t, np.array([1.0 + N], np.float32), "all_reduce in a subgroup")
        b = T(np.array([float(R)], np.float32))
        dist.broadcast(b, src=N - 1, group=g)  # src is a global rank
        close(b, np.array([float(N - 1)], np.float32), "broadcast in a subgroup")
    else:
        assert dist.get_rank(g) == -1 and dist.get_world_size(g) == -1
        close(t, np.array([float(R + 1)], np.float32), "non-members are untouched")
    assert dist.get_process_group_ranks(g) == members
    dist.barrier(group=g)
    dist.barrier()
    assert dist.barrier(async_op=True).wait()
    dist.destroy_process_group(g)


def s_errors() -> None:
    i = T(np.zeros(3, np.int32))
    raises(TypeError, lambda: dist.all_reduce(i, op=ReduceOp.AVG), "int AVG", "AVG")
    if "complex64" in DTYPES:
        c = T(np.zeros(3, np.complex64))
        raises(TypeError, lambda: dist.all_reduce(c, op=ReduceOp.MAX), "complex MAX")
    raises(ValueError, lambda: dist.all_gather([T(np.zeros(3, np.float32))],
                                               T(np.zeros(3, np.float32))),
           "short tensor_list", "one tensor per rank")
    raises(ValueError, lambda: dist.broadcast(T(np.zeros(1, np.float32)), src=N),
           "src outside the group")
    # the cross-rank metadata check (opt-in): same arguments pass, different ones raise
    g = dist.new_group()
    g.check_collectives = True
    ok = T(np.ones(4, np.float32))
    dist.all_reduce(ok, group=g)
    close(ok, np.full(4, float(N), np.float32), "checked all_reduce")
    bad = T(np.ones(3 + R, np.float32))
    raises(dist.CollectiveMismatchError, lambda: dist.all_reduce(bad, group=g),
           "mismatched shapes", "float32[4]" if R == 1 else "float32[3]")
    dist.destroy_process_group(g)


def s_sampler() -> None:
    from omnitensor.data.distributed import DistributedSampler
    data_len = 10
    s = DistributedSampler(list(range(data_len)), shuffle=True, seed=3)
    s.set_epoch(1)
    mine = list(s)
    everyone: list = [None] * N
    dist.all_gather_object(everyone, mine)
    assert all(len(x) == len(mine) == s.num_samples for x in everyone)
    covered = sorted(i for x in everyone for i in x)
    assert set(covered) == set(range(data_len)), covered
    assert len(covered) == -(-data_len // N) * N


SECTIONS: dict[str, Callable[[], None]] = {
    "all_reduce": s_all_reduce, "views": s_views, "broadcast": s_broadcast,
    "reduce": s_reduce, "all_gather": s_all_gather, "reduce_scatter": s_reduce_scatter,
    "gather_scatter": s_gather_scatter, "all_to_all": s_all_to_all, "p2p": s_p2p,
    "objects": s_objects, "groups": s_groups, "errors": s_errors, "sampler": s_sampler,
}


def main() -> int:
    return run_sections(SECTIONS, REPORT, ONLY, {"device": DEV, "dtypes": DTYPES})


if __name__ == "__main__":
    sys.exit(main())
