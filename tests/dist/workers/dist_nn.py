"""Rank worker: torch.distributed.nn.functional's differentiable collectives, forward
values and gradients against the closed forms (world size W, rank r, x_r = (r+1) * ones)."""
import sys

import omnitensor as ot
import omnitensor.distributed as dist
from omnitensor.distributed.nn import functional as F

from _harness import run_sections

device, report = sys.argv[1], sys.argv[2]
dist.init_process_group("mpi")
r, W = dist.get_rank(), dist.get_world_size()


def _x():
    return ot.full((3,), float(r + 1), device=device, requires_grad=True)


def close(a, b):
    assert ot.allclose(a.cpu(), ot.tensor(b, dtype=a.dtype)), (a, b)


def all_reduce():
    x = _x()
    y = F.all_reduce(x)
    close(y, [W * (W + 1) / 2] * 3)
    (y * (r + 1)).sum().backward()          # d/dx_r sum_s (s+1) * y = sum_s (s+1)
    close(x.grad, [W * (W + 1) / 2] * 3)


def all_gather():
    x = _x()
    ys = F.all_gather(x)
    assert len(ys) == W
    sum((k + 1) * (r + 1) * y.sum() for k, y in enumerate(ys)).backward()
    close(x.grad, [(r + 1) * W * (W + 1) / 2] * 3)  # every rank s weights x_r by (r+1)(s+1)


def broadcast():
    x = _x()
    y = F.broadcast(x, src=0)
    close(y, [1.0] * 3)
    (y * (r + 1)).sum().backward()
    close(x.grad, [W * (W + 1) / 2 if r == 0 else 0.0] * 3)


def reduce_scatter():
    parts = [ot.full((2,), float((r + 1) * (k + 1)), device=device, requires_grad=True)
             for k in range(W)]
    out = F.reduce_scatter(ot.empty(2, device=device), parts)
    close(out, [(r + 1) * W * (W + 1) / 2] * 2)
    (out * (r + 1)).sum().backward()
    for k, p in enumerate(parts):
        close(p.grad, [k + 1.0] * 2)        # rank k's output, scaled by (k+1), used part k


def all_to_all_single():
    x = ot.arange(W * 2, dtype=ot.float32, device=device) + 100 * r
    x.requires_grad_()
    y = F.all_to_all_single(ot.empty(W * 2, device=device), x)
    expect = [100 * s + 2 * r + j for s in range(W) for j in range(2)]
    close(y, expect)
    (y * (r + 1)).sum().backward()
    close(x.grad, [k // 2 + 1.0 for k in range(W * 2)])   # chunk k went to rank k


sys.exit(run_sections({"all_reduce": all_reduce, "all_gather": all_gather,
                       "broadcast": broadcast, "reduce_scatter": reduce_scatter,
                       "all_to_all_single": all_to_all_single}, report, None))
