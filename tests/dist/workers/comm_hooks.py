"""Rank sections for DDP communication hooks (run by suite.py, prefixed ``hooks.``).

Each section trains DDP models from one start on per-rank shares of the same batches and
compares: a hook against no hook (allreduce_hook equal, fp16/bf16 within their rounding),
custom hooks against what they compute from the local gradients, and, on cpu with 2 ranks,
omnitensor's DDP with a hook against torch's own DDP on gloo with the same hook.
"""
from __future__ import annotations

import socket
import sys
from typing import Any, Callable

import numpy as np

import omnitensor as ot
import omnitensor.distributed as dist
import omnitensor.nn.functional as F
import omnitensor.optim as optim
from omnitensor.distributed.algorithms.ddp_comm_hooks import default_hooks as H
from omnitensor.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as PS
from omnitensor.distributed.algorithms.ddp_comm_hooks.debugging_hooks import noop_hook
from omnitensor.futures import Future
from omnitensor.nn.parallel import DistributedDataParallel as DDP

from ddp import DEV, N, R, batch, mine, mlp

STEPS = 3


def train(hook: Callable | None, state: Any = None, bucket_cap_mb: Any = 0.0005,
          builtin: Any = None, accumulate: bool = False, steps: int = STEPS
          ) -> list[np.ndarray]:
    """Parameters after STEPS SGD steps of DDP (several buckets) with ``hook``;
    ``accumulate``: even steps run half the share under ``no_sync()`` first."""
    model = mlp(100 + R)
    ddp = DDP(model, bucket_cap_mb=bucket_cap_mb)
    if hook is not None:
        ddp.register_comm_hook(state, hook)
    if builtin is not None:
        ddp._register_builtin_comm_hook(builtin)
    opt = optim.SGD(ddp.parameters(), lr=0.1)
    for step in range(steps):
        x, y = batch(step)
        opt.zero_grad()
        xs, ys = mine(x), mine(y)
        if accumulate and step % 2 == 0:
            with ddp.no_sync():
                F.cross_entropy(ddp(xs[:4]), ys[:4]).backward()
            xs, ys = xs[4:], ys[4:]
        F.cross_entropy(ddp(xs), ys).backward()
        opt.step()
    ddp.remove_hooks()
    return [p.detach().cpu().numpy().copy() for p in model.parameters()]


def close(a: list, b: list, what: str, tol: float) -> None:
    for i, (p, q) in enumerate(zip(a, b)):
        err = float(np.max(np.abs(p - q)))
        assert err <= tol, f"{what}: parameter {i} differs by {err} (tolerance {tol})"


def s_allreduce_hook() -> None:
    plain = train(None)
    close(train(H.allreduce_hook, None), plain, "allreduce_hook vs no hook", 1e-6)
    close(train(None, builtin=dist.BuiltinCommHookType.ALLREDUCE), plain,
          "builtin ALLREDUCE vs no hook", 1e-6)
    # torch's idiom, spelled out: all_reduce(async_op=True).get_future().then(...)
    def idiom(group: Any, bucket: dist.GradBucket) -> Future:
        t = bucket.buffer().div_(dist.group.WORLD.size())
        return dist.all_reduce(t, async_op=True).get_future().then(lambda f: f.value()[0])
    close(train(idiom), plain, "get_future().then idiom vs no hook", 1e-6)


def s_fp16_compress_hook() -> None:
    plain = train(None)
    fp16 = train(H.fp16_compress_hook)
    # float16 keeps 11 bits of the averaged gradients: after 3 SGD steps of lr 0.1 the
    # parameters are within 1e-5 of float32's here (measured 9e-6 on cpu)
    close(fp16, plain, "fp16_compress_hook vs no hook", 5e-5)
    assert any(float(np.max(np.abs(p - q))) > 0 for p, q in zip(fp16, plain)), \
        "fp16_compress_hook gave exactly the float32 result: nothing was compressed"
    close(train(None, builtin=dist.BuiltinCommHookType.FP16_COMPRESS), fp16,
          "builtin FP16_COMPRESS vs fp16_compress_hook", 0)
    close(train(H.fp16_compress_wrapper(H.allreduce_hook)), fp16,
          "fp16_compress_wrapper(allreduce_hook) vs fp16_compress_hook", 0)
    bf16 = train(H.bf16_compress_hook)
    close(bf16, plain, "bf16_compress_hook vs no hook", 2e-4)  # 8 bits: measured 3e-5
    close(train(H.bf16_compress_wrapper(H.allreduce_hook)), bf16,
          "bf16_compress_wrapper(allreduce_hook) vs bf16_compress_hook", 0)


def _local_grads(model: Any, x: ot.Tensor, y: ot.Tensor) -> list[np.ndarray]:
    for p in model.parameters():
        p.grad = None
    F.cross_entropy(model(x), y).backward()
    return [p.grad.cpu().numpy().copy() for p in model.parameters()]


def s_custom_hooks() -> None:
    """A hook that doubles the local bucket (no communication) leaves 2 x the local
    gradients in .grad, as torch does; the GradBucket it gets follows torch's contract."""
    ref = mlp(5)
    model = mlp(5)
    ddp = DDP(model, bucket_cap_mb=0.0005)
    seen: list[tuple] = []

    def doubling(state: dict, bucket: dist.GradBucket) -> Future:
        grads = bucket.gradients()
        params = bucket.parameters()
        assert [tuple(g.shape) for g in grads] == [tuple(p.shape) for p in params]
        assert bucket.buffer().numel() == sum(p.numel() for p in params)
        seen.append((bucket.index(), bucket.is_last(), [id(p) for p in params]))
        state["calls"] += 1
        fut: Future = Future()
        fut.set_result(bucket.buffer() * 2)
        return fut

    state = {"calls": 0}
    ddp.register_comm_hook(state, doubling)
    x, y = batch(3)
    F.cross_entropy(ddp(mine(x)), mine(y)).backward()
    got = [p.grad.cpu().numpy() for p in model.parameters()]
    want = _local_grads(ref, mine(x), mine(y))
    for i, (g, w) in enumerate(zip(got, want)):
        assert np.allclose(g, 2 * w, rtol=1e-5, atol=1e-6), f"doubling hook: grad {i}"
    nb = len(ddp._buckets)
    assert nb == 3 and state["calls"] == nb, (nb, state)
    assert [s[0] for s in seen] == list(range(nb)), seen
    assert [s[1] for s in seen] == [False] * (nb - 1) + [True], seen
    ids = [i for s in seen for i in s[2]]
    assert sorted(ids) == sorted(id(p) for p in model.parameters()), "bucket parameters"
    # torch's noop_hook: every rank keeps its own (undivided) local gradients
    ref2, model2 = mlp(8), mlp(8)
    ddp2 = DDP(model2, bucket_cap_mb=0.0005)
    ddp2.register_comm_hook(None, noop_hook)
    F.cross_entropy(ddp2(mine(x)), mine(y)).backward()
    for i, (g, w) in enumerate(zip([p.grad.cpu().numpy() for p in model2.parameters()],
                                   _local_grads(ref2, mine(x), mine(y)))):
        assert np.allclose(g, w, rtol=1e-5, atol=1e-6), f"noop_hook: grad {i}"
    ddp2.remove_hooks()
    try:
        ddp.register_comm_hook(None, H.allreduce_hook)
    except RuntimeError as e:
        assert "can only be called once" in str(e), e
    else:
        raise AssertionError("a second register_comm_hook was accepted")
    ddp.remove_hooks()


def s_hook_errors() -> None:
    model = mlp(6)
    ddp = DDP(model)
    try:
        ddp.register_comm_hook(None, 3)
    except TypeError as e:
        assert "must be callable" in str(e), e
    else:
        raise AssertionError("a non-callable hook was accepted")

    def annotated(state, bucket):  # type: ignore[no-untyped-def]
        raise AssertionError("never called")
    annotated.__annotations__["bucket"] = int  # an object, not a postponed string
    try:
        ddp.register_comm_hook(None, annotated)
    except ValueError as e:
        assert "GradBucket" in str(e), e
    else:
        raise AssertionError("a hook whose bucket is annotated int was accepted")
    ddp.register_comm_hook(None, lambda state, bucket: bucket.buffer())  # not a Future
    x, y = batch(1)
    try:
        F.cross_entropy(ddp(mine(x)), mine(y)).backward()
    except TypeError as e:
        assert "must return a torch.futures.Future" in str(e), e
    else:
        raise AssertionError("a hook returning a Tensor was accepted")
    ddp.remove_hooks()


def s_powerSGD() -> None:
    """PowerSGD with the full rank of every gradient matrix (min_compression_rate 0: all
    compressed) reconstructs the average exactly, whatever its random start: DDP with it
    follows DDP without a hook. Rank 1 compresses (differs) and keeps an error. (torch's
    own powerSGD_hook hangs on gloo with 2 ranks, a nested wait in a gloo callback, so
    tests/dist/workers/powersgd_vs_torch.py compares the two hooks on one rank.)"""
    plain = train(None, steps=5)
    full = PS.PowerSGDState(None, matrix_approximation_rank=64, start_powerSGD_iter=2,
                            min_compression_rate=0)
    close(train(PS.powerSGD_hook, full, steps=5), plain, "full-rank PowerSGD vs no hook",
          2e-5)
    assert full.iter == 5 and full.error_dict and full.compression_stats()[2] > 0, \
        (full.iter, full.compression_stats())
    low = PS.PowerSGDState(None, start_powerSGD_iter=2)
    ranked = train(PS.powerSGD_hook, low, steps=5)
    assert max(float(np.max(np.abs(a - b))) for a, b in zip(ranked, plain)) > 1e-4
    assert low.compression_stats()[0] > 2, low.compression_stats()
    try:
        PS.PowerSGDState(None, start_powerSGD_iter=1)
    except ValueError as e:
        assert "start_powerSGD_iter" in str(e), e
    else:
        raise AssertionError("start_powerSGD_iter=1 with warm_start was accepted")


# ------------------------------------------------------------- torch's DDP on gloo
def _scaled_sum_hook(D: Any) -> Callable:
    """One hook for both libraries: the bucket's SUM over ranks times ``state``."""
    def hook(state, bucket):  # type: ignore[no-untyped-def]  # torch checks annotations
        fut = D.all_reduce(bucket.buffer(), async_op=True).get_future()
        return fut.then(lambda f: f.value()[0] * state)
    return hook


def _recording_hook(allreduce_hook: Callable) -> Callable:
    """A hook recording what each GradBucket shows, then ``allreduce_hook``'s result."""
    def hook(state, bucket):  # type: ignore[no-untyped-def]  # torch checks annotations
        state.append(((bucket.index(), bucket.is_last(),
                       [tuple(p.shape) for p in bucket.parameters()],
                       [tuple(g.shape) for g in bucket.gradients()]),
                      np.array(bucket.buffer().detach().cpu().numpy(), np.float32)))
        return allreduce_hook(None, bucket)
    return hook


def _iterations(records: list) -> list[list]:
    """Hook records split into iterations (each ends with the is_last bucket)."""
    out: list[list] = [[]]
    for rec in records:
        out[-1].append(rec)
        if rec[0][1]:
            out.append([])
    return out[:-1]


def _same_buckets(ours: list, theirs: list) -> None:
    """The GradBuckets of iterations 2.. are torch's. In iteration 1 torch's DDP hands out
    one bucket of every parameter in registration order and rebuilds its buckets from
    the order gradients arrived; omnitensor's buckets are that rebuilt layout from the
    start (reverse registration order), a documented difference."""
    ours_it, theirs_it = _iterations(ours), _iterations(theirs)
    assert len(ours_it) == len(theirs_it) == STEPS, (len(ours_it), len(theirs_it))
    assert len(theirs_it[0]) == 1, "torch's first iteration no longer uses one bucket"
    ours, theirs = sum(ours_it[1:], []), sum(theirs_it[1:], [])
    assert [a for a, _ in ours] == [b for b, _ in theirs], \
        f"GradBuckets differ from torch's:\n{[a for a, _ in ours]}\n{[b for b, _ in theirs]}"
    for (what, a), (_, b) in zip(ours, theirs):
        err = float(np.max(np.abs(a - b)))
        assert err <= 1e-6, f"bucket {what[0]}: local gradients differ from torch's by {err}"


def _torch_train(torch: Any, init: list[np.ndarray], hook: Any, state: Any,
                 accumulate: bool = False, steps: int = STEPS) -> list[np.ndarray]:
    from torch.nn.parallel import DistributedDataParallel as TDDP
    net = torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.Tanh(), torch.nn.Linear(32, 32),
                              torch.nn.ReLU(), torch.nn.Linear(32, 5))
    with torch.no_grad():
        for p, a in zip(net.parameters(), init):
            p.copy_(torch.from_numpy(a))
    ddp = TDDP(net, bucket_cap_mb=0.0005)
    if hook is not None:
        ddp.register_comm_hook(state, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for step in range(steps):
        x, y = batch(step)
        xs = torch.from_numpy(mine(x).cpu().numpy())
        ys = torch.from_numpy(mine(y).cpu().numpy()).long()
        opt.zero_grad()
        if accumulate and step % 2 == 0:
            with ddp.no_sync():
                torch.nn.functional.cross_entropy(ddp(xs[:4]), ys[:4]).backward()
            xs, ys = xs[4:], ys[4:]
        torch.nn.functional.cross_entropy(ddp(xs), ys).backward()
        opt.step()
    return [p.detach().numpy().copy() for p in net.parameters()]


def s_matches_torch_gloo() -> None:
    """omnitensor's DDP with hooks against torch's DDP on gloo (cpu, 2 ranks): same start,
    same batches, same hooks written against each library's API; a recording hook sees
    the same GradBuckets (index, is_last, parameters, gradients, buffer) in both."""
    if DEV != "cpu" or N != 2:
        return  # the oracle runs once; the device runs compare against cpu DDP above
    import torch
    import torch.distributed as tdist
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks as TH
    port = [0]
    if R == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port[0] = s.getsockname()[1]
    dist.broadcast_object_list(port, src=0)
    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port[0]}", rank=R,
                             world_size=N)
    try:
        init = [p.detach().cpu().numpy() for p in mlp(100).parameters()]
        cases = [("no hook", None, None, None, None, 2e-6),
                 ("allreduce_hook", H.allreduce_hook, None, TH.allreduce_hook, None, 2e-6),
                 ("fp16_compress_hook", H.fp16_compress_hook, None, TH.fp16_compress_hook,
                  None, 2e-6),
                 ("scaled sum hook", _scaled_sum_hook(dist), 0.25, _scaled_sum_hook(tdist),
                  0.25, 2e-6)]
        for what, hook, state, thook, tstate, tol in cases:
            close(train(hook, state), _torch_train(torch, init, thook, tstate),
                  f"{what}: omnitensor vs torch DDP on gloo", tol)
        ours: list = []
        theirs: list = []
        close(train(_recording_hook(H.allreduce_hook), ours),
              _torch_train(torch, init, _recording_hook(TH.allreduce_hook), theirs),
              "recording hook: omnitensor vs torch DDP on gloo", 2e-6)
        _same_buckets(ours, theirs)  # same buckets, order, is_last, local gradients
        hook, thook = _scaled_sum_hook(dist), _scaled_sum_hook(tdist)
        close(train(hook, 0.25, accumulate=True),
              _torch_train(torch, init, thook, 0.25, accumulate=True),
              "scaled sum hook after no_sync accumulation: omnitensor vs torch", 2e-6)
    finally:
        tdist.destroy_process_group()


SECTIONS = {"allreduce_hook": s_allreduce_hook, "fp16_compress_hook": s_fp16_compress_hook,
            "custom_hooks": s_custom_hooks, "hook_errors": s_hook_errors,
            "powerSGD": s_powerSGD, "matches_torch_gloo": s_matches_torch_gloo}

if __name__ == "__main__":
    sys.exit(1)  # run through suite.py (it initialises the process group)
