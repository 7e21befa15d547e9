"""A torch DDP program with communication hooks, as torch's docs write them: a stateful
custom hook built on ``all_reduce(async_op=True).get_future().then(...)``, torch's
``fp16_compress_hook`` and the built-in ``FP16_COMPRESS``. The same file runs under
torch (``torchrun --nproc-per-node 2 ddp_comm_hooks_torch.py OUT.json``, gloo) and under
omnitensor (``omnitensor-run -n 2 --as-torch ddp_comm_hooks_torch.py OUT.json``); rank 0
writes the parameters each run ends with, so the two can be compared.
"""
import json
import sys

import numpy as np
import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP


class CountingState:
    """Hook state: the group, and how many buckets the hook reduced."""

    def __init__(self, process_group):
        self.process_group = process_group
        self.calls = 0


def averaging_hook(state, bucket):
    """All-reduce the bucket and average it (the hook torch's docs start from)."""
    state.calls += 1
    group = state.process_group if state.process_group is not None else dist.group.WORLD
    world = group.size()
    fut = dist.all_reduce(bucket.buffer(), group=group, async_op=True).get_future()
    return fut.then(lambda f: f.value()[0].div_(world))


def make_model(rng):
    model = torch.nn.Sequential(torch.nn.Linear(10, 24), torch.nn.Tanh(),
                                torch.nn.Linear(24, 3))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32)
                                     * 0.3))
    return model


def train(register, rank, world):
    rng = np.random.default_rng(0)
    model = DDP(make_model(rng), bucket_cap_mb=0.001)
    register(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for _ in range(5):
        x = rng.standard_normal((8 * world, 10)).astype(np.float32)
        y = rng.integers(0, 3, 8 * world)
        xs = torch.from_numpy(x[rank * 8:(rank + 1) * 8])
        ys = torch.from_numpy(y[rank * 8:(rank + 1) * 8]).long()
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(xs), ys).backward()
        opt.step()
    return [p.detach().numpy().tolist() for p in model.module.parameters()]


def main(out):
    dist.init_process_group(backend="gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    state = CountingState(None)
    runs = {
        "no_hook": train(lambda m: None, rank, world),
        "custom": train(lambda m: m.register_comm_hook(state, averaging_hook), rank, world),
        "fp16": train(lambda m: m.register_comm_hook(None, default_hooks.fp16_compress_hook),
                      rank, world),
        "builtin_fp16": train(lambda m: m._register_builtin_comm_hook(
            dist.BuiltinCommHookType.FP16_COMPRESS), rank, world),
    }
    if rank == 0:
        with open(out, "w") as f:
            json.dump({"runs": runs, "calls": state.calls}, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
