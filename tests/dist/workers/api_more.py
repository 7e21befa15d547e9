"""Rank worker: torch.distributed's names beyond the core collectives (batched and object
point-to-point, coalesced and *_single collectives, monitored_barrier, subgroups,
split/shrink, group queries, rendezvous), each checked against its definition.

    mpiexec -n N python api_more.py DEVICE REPORT.json [SECTIONS]
"""
from __future__ import annotations

import datetime
import sys
import time
from typing import Callable

import numpy as np

import omnitensor.distributed as dist
from omnitensor.distributed import ReduceOp

from _harness import run_sections
from collectives import DTYPES, N, R, T, close, data, raises, reduce_np

DEV = sys.argv[1]
REPORT = sys.argv[2]
ONLY = set(sys.argv[3].split(",")) if len(sys.argv) > 3 else None
#: a group of every rank for shrink_group, made before the sections
PARENT: list = [None]


def s_batch_p2p() -> None:
    # a ring: everyone sends to the next rank and receives from the previous, all posted
    # together (a blocking ring of sends would deadlock)
    for dt in DTYPES:
        send = T(data(R, (2, 3), dt, seed=7))
        recv = T(np.zeros((2, 3), dt))
        ops = [dist.P2POp(dist.isend, send, (R + 1) % N),
               dist.P2POp(dist.irecv, recv, (R - 1) % N)]
        works = dist.batch_isend_irecv(ops)
        assert len(works) == 2
        for w in works:
            w.wait()
        close(recv, data((R - 1) % N, (2, 3), dt, seed=7), f"ring {dt}")
    op = dist.P2POp(dist.isend, send, group_peer=(R + 1) % N)
    assert op.peer == (R + 1) % N and op.group_peer == (R + 1) % N
    raises(ValueError, lambda: dist.P2POp(dist.send, send, 0), "op", "Invalid ``op``")
    raises(ValueError, lambda: dist.batch_isend_irecv([send]), "list", "P2POp")


def s_object_p2p() -> None:
    if R == 0:
        for dst in range(1, N):
            dist.send_object_list([{"to": dst}, "x" * dst, None], dst=dst)
        got = [None]
        senders = {dist.recv_object_list(got) for _ in range(1, N)}  # any source
        assert senders == set(range(1, N)), senders
    else:
        objs = [None, None, None]
        assert dist.recv_object_list(objs, src=0) == 0
        assert objs == [{"to": R}, "x" * R, None], objs
        dist.send_object_list([R], dst=0)
    raises(ValueError, lambda: dist.send_object_list([1], dst=R), "self", "same as the rank")


def s_coalesced() -> None:
    for dt in DTYPES:
        shapes = [(2, 3), (4,), ()]
        mine = [data(R, s, dt, seed=i) for i, s in enumerate(shapes)]
        ts = [T(a) for a in mine]
        op = ReduceOp.SUM if np.dtype(dt).kind == "c" else ReduceOp.MAX
        dist.all_reduce_coalesced(ts, op)
        for i, (t, s) in enumerate(zip(ts, shapes)):
            close(t, reduce_np([data(r, s, dt, seed=i) for r in range(N)], op),
                  f"all_reduce_coalesced {dt}[{i}]")
        outs = [[T(np.zeros(s, dt)) for s in shapes] for _ in range(N)]
        w = dist.all_gather_coalesced(outs, [T(a) for a in mine], async_op=True)
        w.wait()
        for r in range(N):
            for i, s in enumerate(shapes):
                close(outs[r][i], data(r, s, dt, seed=i), f"all_gather_coalesced {dt}")
    x = T(np.ones(3, np.float32))
    raises(TypeError, lambda: dist.all_reduce_coalesced(x), "not a list", "list of tensors")
    raises(ValueError, lambda: dist.all_gather_coalesced([[x]], [x]), "rows", "group size")


def s_singles() -> None:
    dt = "float32"
    mine = data(R, (2,), dt)
    cat = T(np.zeros(2 * N, dt))
    stack = T(np.zeros((N, 2), dt))
    dist.all_gather_single(cat, T(mine))
    dist.all_gather_single(stack, T(mine))
    want = np.stack([data(r, (2,), dt) for r in range(N)])
    close(cat, want.reshape(-1), "all_gather_single cat")
    close(stack, want, "all_gather_single stack")
    out = T(np.zeros(2, dt))
    dist.reduce_scatter_single(out, T(data(R, (N, 2), dt, seed=3)))
    full = reduce_np([data(r, (N, 2), dt, seed=3) for r in range(N)], ReduceOp.SUM)
    close(out, full[R], "reduce_scatter_single")


def s_monitored_barrier() -> None:
    dist.monitored_barrier()
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=30), wait_all_ranks=True)
    # the last rank stays away: rank 0 names it; the others are not released either
    if R == N - 1:
        time.sleep(2.0)
    else:
        t0 = time.monotonic()
        try:
            dist.monitored_barrier(timeout=datetime.timedelta(seconds=1),
                                   wait_all_ranks=True)
        except dist.DistBackendError as e:
            if R == 0:
                assert f"Rank {N - 1} failed to pass monitoredBarrier in 1000 ms" in str(e), e
        else:
            raise AssertionError("monitored_barrier passed with a rank missing")
        assert time.monotonic() - t0 < 10
    dist.barrier()
    dist.monitored_barrier()  # the group is usable again (the receives were withdrawn)
    dist.barrier(timeout=datetime.timedelta(seconds=60))


def s_subgroups() -> None:
    count = dist.get_pg_count()
    cur, groups = dist.new_subgroups(1)
    assert len(groups) == N and cur is groups[R] and cur.size() == 1
    assert dist.get_pg_count() == count + N
    cur, groups = dist.new_subgroups_by_enumeration([[0], list(range(1, N))],
                                                    group_desc="split")
    assert cur is groups[0 if R == 0 else 1] and cur.group_desc == "split"
    t = T(np.array([float(R)], np.float32))
    dist.all_reduce(t, group=cur)
    want = 0.0 if R == 0 else float(sum(range(1, N)))
    close(t, np.array([want], np.float32), "all_reduce on a subgroup")
    raises(ValueError, lambda: dist.new_subgroups_by_enumeration([[0, 1], [1]]), "overlap",
           "has appeared in both")
    raises(ValueError, lambda: dist.new_subgroups(N + 1), "too big", "must not exceed")
    rev = dist.new_group(list(reversed(range(N))), sort_ranks=False)
    assert dist.get_process_group_ranks(rev) == list(reversed(range(N)))
    assert dist.get_rank(rev) == N - 1 - R
    assert dist.get_backend_config() == ",".join(
        f"{d}:{n}" for d, n in dist.get_default_group().transports.items())


def s_split_shrink() -> None:
    g = dist.split_group(split_ranks=[[0], list(range(1, N))])
    assert g is not None and dist.get_process_group_ranks(g) == ([0] if R == 0 else
                                                              list(range(1, N)))
    t = T(np.array([1.0], np.float32))
    dist.all_reduce(t, group=g)
    close(t, np.array([g.size()], np.float32), "all_reduce on a split")
    only0 = dist.split_group(split_ranks=[[0]])
    assert (only0 is None) == (R != 0)
    if R != N - 1:  # only the ranks that stay call shrink_group
        small = dist.shrink_group([N - 1], group=PARENT[0])
        assert dist.get_process_group_ranks(small) == list(range(N - 1))
        t = T(np.array([1.0], np.float32))
        dist.all_reduce(t, group=small)
        close(t, np.array([N - 1], np.float32), "all_reduce on a shrunk group")
    raises(ValueError, lambda: dist.shrink_group([], group=PARENT[0]),
           "empty", "cannot be empty")
    if R == N - 1:
        raises(RuntimeError, lambda: dist.shrink_group([N - 1],
                                                       group=PARENT[0]),
               "excluded caller", "exclusion list")
    dist.barrier()


def s_rendezvous() -> None:
    port = [29700 + int(time.time()) % 200]
    dist.broadcast_object_list(port, src=0)
    it = dist.rendezvous(f"tcp://127.0.0.1:{port[0]}?rank={R}&world_size={N}")
    store, rank, world = next(it)
    assert (rank, world) == (R, N)
    store.set(f"k{R}", str(R))
    assert [store.get(f"k{r}") for r in range(N)] == [str(r).encode() for r in range(N)]
    raises(RuntimeError, lambda: dist.rendezvous("nope://x"), "scheme", "No rendezvous")
    raises(ValueError, lambda: next(dist.rendezvous("tcp://127.0.0.1:1?rank=0")), "size",
           "world size parameter missing")


def s_pg_methods() -> None:
    pg = dist.get_default_group()
    dt = "float32"
    t = T(data(R, (3,), dt))
    opts = dist.AllreduceOptions()
    opts.reduceOp = ReduceOp.MAX
    pg.allreduce([t], opts).wait()
    close(t, reduce_np([data(r, (3,), dt) for r in range(N)], ReduceOp.MAX), "allreduce")
    t = T(data(R, (3,), dt))
    pg.allreduce(t, ReduceOp.SUM).wait()
    close(t, reduce_np([data(r, (3,), dt) for r in range(N)], ReduceOp.SUM), "allreduce op")
    t = T(data(R, (3,), dt))
    b = dist.BroadcastOptions()
    b.rootRank = N - 1
    pg.broadcast([t], b).wait()
    close(t, data(N - 1, (3,), dt), "broadcast rootRank")
    t = T(data(R, (3,), dt))
    ro = dist.ReduceOptions()
    ro.rootRank, ro.reduceOp = 1, ReduceOp.MIN
    pg.reduce([t], ro).wait()
    if R == 1:
        close(t, reduce_np([data(r, (3,), dt) for r in range(N)], ReduceOp.MIN), "reduce")
    outs = [T(np.zeros(3, dt)) for _ in range(N)]
    pg.allgather([outs], [T(data(R, (3,), dt))]).wait()
    for r in range(N):
        close(outs[r], data(r, (3,), dt), "allgather")
    outs = [T(np.zeros(3, dt)) for _ in range(N)]
    pg.gather([outs], [T(data(R, (3,), dt))], dist.GatherOptions()).wait()
    if R == 0:
        for r in range(N):
            close(outs[r], data(r, (3,), dt), "gather")
    got = T(np.zeros(3, dt))
    ins = [T(data(r, (3,), dt, seed=5)) for r in range(N)]
    pg.scatter([got], [ins], dist.ScatterOptions()).wait()
    close(got, data(R, (3,), dt, seed=5), "scatter from rank 0")
    got = T(np.zeros(3, dt))
    pg.reduce_scatter([got], [[T(data(R, (3,), dt, seed=r)) for r in range(N)]],
                      dist.ReduceScatterOptions()).wait()
    close(got, reduce_np([data(r, (3,), dt, seed=R) for r in range(N)], ReduceOp.SUM),
          "reduce_scatter")
    out = T(np.zeros(2 * N, dt))
    pg.alltoall_base(out, T(data(R, (2 * N,), dt)), [], [], dist.AllToAllOptions()).wait()
    want = np.concatenate([data(r, (2 * N,), dt)[2 * R:2 * R + 2] for r in range(N)])
    close(out, want, "alltoall_base")
    pg.barrier(dist.BarrierOptions()).wait()
    raises(ValueError, lambda: pg.allreduce([t, t]), "two tensors", "one tensor per process")
    assert dist.AllreduceOptions().timeout.total_seconds() < 0  # torch's "unset" value


def s_device_mesh() -> None:
    flat = dist.init_device_mesh(DEV.split(":")[0], (N,))
    assert flat.shape == (N,) and flat.ndim == 1 and flat.size() == N
    assert dist.get_process_group_ranks(flat.get_group()) == list(range(N))
    assert flat.get_local_rank() == R and flat.get_coordinate() == (R,)
    assert flat.mesh.tolist() == list(range(N))
    for shape in ((1, N), (N, 1)):
        mesh = dist.init_device_mesh("cpu", shape, mesh_dim_names=("dp", "tp"))
        coord = (0, R) if shape == (1, N) else (R, 0)
        assert mesh.get_coordinate() == coord and mesh.size() == N
        assert mesh.get_local_rank("tp") == coord[1] and mesh.get_local_rank(0) == coord[0]
        tp = mesh.get_group("tp")
        assert dist.get_process_group_ranks(tp) == (list(range(N)) if shape == (1, N)
                                                    else [R])
        t = T(np.array([1.0], np.float32))
        dist.all_reduce(t, group=tp)
        close(t, np.array([shape[1]], np.float32), f"all_reduce over tp of {shape}")
        sub = mesh["tp"]
        assert sub.shape == (shape[1],) and sub.get_group() is tp
        assert sub.mesh_dim_names == ("tp",)
        swapped = mesh["tp", "dp"]
        assert swapped.shape == (shape[1], shape[0]) and swapped.get_group("dp") is \
            mesh.get_group("dp")
        assert mesh.get_all_groups() == [mesh.get_group("dp"), tp]
        raises(RuntimeError, lambda m=mesh: m.get_group(), "2-D", "needs to be specified")
        raises(KeyError, lambda m=mesh: m["pp"], "name", "does not exist")
    raises(RuntimeError, lambda: dist.init_device_mesh("cpu", (N + 1,)), "size", "holds")
    raises(RuntimeError, lambda: dist.DeviceMesh("cpu", [0, 0]), "dup", "duplicate")


SECTIONS: dict[str, Callable[[], None]] = {
    "device_mesh": s_device_mesh,
    "pg_methods": s_pg_methods,
    "batch_p2p": s_batch_p2p, "object_p2p": s_object_p2p, "coalesced": s_coalesced,
    "singles": s_singles, "monitored_barrier": s_monitored_barrier,
    "subgroups": s_subgroups, "split_shrink": s_split_shrink, "rendezvous": s_rendezvous,
}


def main() -> int:
    # shrink_group needs a group every rank created: made once, before the sections
    PARENT[0] = dist.new_group()
    return run_sections(SECTIONS, REPORT, ONLY, {"device": DEV})


if __name__ == "__main__":
    sys.exit(main())
