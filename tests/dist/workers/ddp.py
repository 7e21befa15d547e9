"""Rank worker for DistributedDataParallel: ``mpiexec -n 2 python ddp.py DEVICE REPORT``.

Each rank also trains a plain copy of the model on the *full* batch, locally: DDP on
per-rank shares of the batch must give the same parameters (to float tolerance), with
one bucket or many, with no_sync accumulation, and with find_unused_parameters.
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

import omnitensor as ot
import omnitensor.distributed as dist
import omnitensor.nn as nn
import omnitensor.nn.functional as F
import omnitensor.optim as optim
from omnitensor.nn.parallel import DistributedDataParallel as DDP

from _harness import run_sections

DEV = sys.argv[1]
REPORT = sys.argv[2]
ONLY = set(sys.argv[3].split(",")) if len(sys.argv) > 3 else None

if not dist.is_initialized():  # suite.py may have initialised it
    dist.init_process_group(timeout=90)
R, N = dist.get_rank(), dist.get_world_size()
DEVICE = ot.device(DEV)
B = 8 * N  # full batch; each rank gets 8 samples


def mlp(seed: int, extra: bool = False) -> nn.Module:
    ot.manual_seed(seed)
    layers = nn.Sequential(nn.Linear(12, 32), nn.Tanh(), nn.Linear(32, 32), nn.ReLU(),
                           nn.Linear(32, 5))
    return layers.to(DEVICE)


def batch(step: int) -> tuple[ot.Tensor, ot.Tensor]:
    rng = np.random.default_rng(step)
    x = rng.standard_normal((B, 12)).astype(np.float32)
    y = rng.integers(0, 5, B)
    return ot.tensor(x, device=DEVICE), ot.tensor(y, device=DEVICE)


def mine(t: ot.Tensor) -> ot.Tensor:
    return t[R * 8:(R + 1) * 8]


def params_close(a: nn.Module, b: nn.Module, what: str, tol: float = 2e-5) -> None:
    for (n, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        pa, qa = p.detach().cpu().numpy(), q.detach().cpu().numpy()
        err = float(np.max(np.abs(pa - qa)))
        assert np.allclose(pa, qa, rtol=tol, atol=tol), f"{what}: {n} differs by {err}"


def grads_close(a: nn.Module, b: nn.Module, what: str, tol: float = 2e-5) -> None:
    for (n, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        if p.grad is None or q.grad is None:
            assert p.grad is None and q.grad is None, f"{what}: {n} grad None mismatch"
            continue
        ga, gb = p.grad.cpu().numpy(), q.grad.cpu().numpy()
        assert np.allclose(ga, gb, rtol=tol, atol=tol), \
            f"{what}: {n} grad differs by {float(np.max(np.abs(ga - gb)))}"


def train_equivalence(bucket_cap_mb: Any) -> None:
    ref = mlp(100)                       # what rank 0 starts from
    model = mlp(100 + R)                 # other ranks start elsewhere: DDP broadcasts
    ddp = DDP(model, bucket_cap_mb=bucket_cap_mb)
    params_close(model, ref, "after the initial broadcast", 0)
    opt = optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    ref_opt = optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    for step in range(4):
        x, y = batch(step)
        opt.zero_grad()
        F.cross_entropy(ddp(mine(x)), mine(y)).backward()
        ref_opt.zero_grad()
        F.cross_entropy(ref(x), y).backward()
        grads_close(model, ref, f"step {step} gradients")
        opt.step()
        ref_opt.step()
    params_close(model, ref, f"after 4 steps (bucket_cap_mb={bucket_cap_mb})")
    ddp.remove_hooks()


def s_equivalence() -> None:
    train_equivalence(None)


def s_many_buckets() -> None:
    model = mlp(0)
    ddp = DDP(model, bucket_cap_mb=0.0005)  # ~0.5 KB: one bucket per layer
    assert len(ddp._buckets) == 3, len(ddp._buckets)
    ddp.remove_hooks()
    train_equivalence(0.0005)


def s_no_sync() -> None:
    ref, model = mlp(7), mlp(7)
    ddp = DDP(model)
    x, y = batch(11)
    halves = [(x[r * 8:r * 8 + 4], y[r * 8:r * 8 + 4], x[r * 8 + 4:r * 8 + 8],
               y[r * 8 + 4:r * 8 + 8]) for r in range(N)]
    x1, y1, x2, y2 = halves[R]
    with ddp.no_sync():
        F.cross_entropy(ddp(x1), y1).backward()
    local = [p.grad.cpu().numpy().copy() for p in model.parameters()]
    F.cross_entropy(ddp(x2), y2).backward()
    # reference: the average over ranks of both micro-batches' gradients
    loss = sum(F.cross_entropy(ref(a), b) + F.cross_entropy(ref(c), d)
               for a, b, c, d in halves) / N
    loss.backward()
    grads_close(model, ref, "no_sync accumulation")
    # inside no_sync the gradients stayed local (rank-dependent data)
    others: list = [None] * N
    dist.all_gather_object(others, [g.tolist() for g in local])
    assert others[0] != others[1], "no_sync gradients were synchronised"
    ddp.remove_hooks()


class Branchy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(6, 6)
        self.extra = nn.Linear(6, 6)   # used by rank 0 only
        self.never = nn.Linear(6, 6)   # used by no rank
        self.out = nn.Linear(6, 2)

    def forward(self, x: ot.Tensor, use_extra: bool) -> ot.Tensor:
        h = self.a(x).relu()
        if use_extra:
            h = h + self.extra(h)
        return self.out(h)


def _twins(cls: type, seed: int, step: int) -> tuple:
    """A local reference model, the same model under DDP with find_unused_parameters,
    and a 6-feature, 2-class batch."""
    ot.manual_seed(seed)
    ref = cls().to(DEVICE)
    ot.manual_seed(seed)
    model = cls().to(DEVICE)
    ddp = DDP(model, find_unused_parameters=True, bucket_cap_mb=0.001)
    x, y = batch(step)
    return ref, model, ddp, ot.tensor(x.cpu().numpy()[:, :6], device=DEVICE), y % 2


def s_find_unused() -> None:
    ref, model, ddp, xs, y = _twins(Branchy, 3, 5)
    for it in range(2):  # twice: the state resets between iterations
        for p in list(model.parameters()) + list(ref.parameters()):
            p.grad = None
        F.cross_entropy(ddp(mine(xs), R == 0), mine(y)).backward()
        loss = sum(F.cross_entropy(ref(xs[r * 8:(r + 1) * 8], r == 0), y[r * 8:(r + 1) * 8])
                   for r in range(N)) / N
        loss.backward()
        grads_close(model, ref, f"find_unused_parameters iteration {it}")
        assert model.never.weight.grad is None, "a parameter no rank used got a gradient"
        assert model.extra.weight.grad is not None


class _IgnoreGate(ot.autograd.Function):
    """Returns h; the gate is an input of the graph that gets no gradient (None)."""

    @staticmethod
    def forward(ctx, h, gate):
        return h * 1

    @staticmethod
    def backward(ctx, g):
        return g, None


class Gated(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(6, 6)
        self.gate = nn.Linear(6, 6)    # reached by the graph, never given a gradient
        self.out = nn.Linear(6, 2)

    def forward(self, x: ot.Tensor) -> ot.Tensor:
        h = self.a(x).relu()
        return self.out(_IgnoreGate.apply(h, self.gate(h)))


def s_find_unused_reached_without_grad() -> None:
    """A parameter the forward reaches but the backward gives no gradient: the end-of-
    backward callback marks it unused, so the reduction finishes in the same backward."""
    ref, model, ddp, xs, y = _twins(Gated, 4, 7)
    for it in range(3):
        for p in list(model.parameters()) + list(ref.parameters()):
            p.grad = None
        F.cross_entropy(ddp(mine(xs)), mine(y)).backward()
        assert ddp._finished, "the reduction did not finish at the end of backward"
        F.cross_entropy(ref(xs), y).backward()
        grads_close(model, ref, f"reached-without-gradient iteration {it}")
        assert model.gate.weight.grad is None and model.a.weight.grad is not None
    ddp.remove_hooks()


def s_unfinished_reduction_error() -> None:
    ot.manual_seed(3)
    model = Branchy().to(DEVICE)
    ddp = DDP(model)  # find_unused_parameters=False, but 'never' is never used
    x, y = batch(6)
    xs = ot.tensor(x.cpu().numpy()[:8, :6], device=DEVICE)
    F.cross_entropy(ddp(xs, True), y[:8] % 2).backward()
    try:
        ddp(xs, True)
    except RuntimeError as e:
        assert "find_unused_parameters=True" in str(e) and "never.weight" in str(e), e
    else:
        raise AssertionError("no error for an unfinished reduction")
    ddp.remove_hooks()


def s_mismatched_models() -> None:
    ot.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4 + R)).to(DEVICE)
    try:
        DDP(model)
    except RuntimeError as e:
        assert "ranks wrap different models" in str(e) and "0.weight" in str(e), e
    else:
        raise AssertionError("no error for different models on different ranks")


def s_buffers_broadcast() -> None:
    ot.manual_seed(R)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).to(DEVICE)
    with ot.no_grad():
        model[1].running_mean.fill_(float(R + 1))
    ddp = DDP(model)
    got = model[1].running_mean.cpu().numpy()
    assert np.all(got == 1.0), got  # rank 0's buffer everywhere
    ddp.remove_hooks()


SECTIONS = {"equivalence": s_equivalence, "many_buckets": s_many_buckets,
            "no_sync": s_no_sync, "find_unused": s_find_unused,
            "find_unused_reached_without_grad": s_find_unused_reached_without_grad,
            "unfinished_reduction_error": s_unfinished_reduction_error,
            "mismatched_models": s_mismatched_models, "buffers_broadcast": s_buffers_broadcast}

if __name__ == "__main__":
    sys.exit(run_sections(SECTIONS, REPORT, ONLY, {"device": DEV}))
