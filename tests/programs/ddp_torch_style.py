"""Multi-process data-parallel training written the way torch's DDP tutorials write it
(``torchrun --nproc-per-node 2 train.py``), run here as ``omnitensor-run -n 2 train.py``.

The torchrun environment (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) names the
rank; ``init_process_group(backend, init_method="env://")`` with torch's backend names;
the model goes to this rank's device and is wrapped with ``DDP(model,
device_ids=[...])``; a ``DistributedSampler`` shards the data, ``set_epoch`` reshuffles;
losses are averaged with ``all_reduce`` for the log; rank 0 writes a checkpoint between
barriers; the process group is destroyed at the end.

Usage: ``omnitensor-run -n 2 ddp_torch_style.py REPORT.json [--epochs N]``; the device is
``OMNITENSOR_DEVICE`` (cpu when unset), as ``torch.accelerator`` would pick it. Each rank
writes ``REPORT.json.rank<R>``.
"""
import argparse
import json
import os
import tempfile

import omnitensor as torch
import omnitensor.distributed as dist
import omnitensor.nn as nn
import omnitensor.nn.functional as F
from omnitensor.nn.parallel import DistributedDataParallel as DDP
from omnitensor.utils.data import DataLoader, TensorDataset
from omnitensor.utils.data.distributed import DistributedSampler


def ddp_setup() -> torch.device:
    """One process per device, as the tutorials do it; ranks share a device when there
    are more ranks than devices."""
    local_rank = int(os.environ["LOCAL_RANK"])
    if torch.accelerator.is_available():
        acc = torch.accelerator.current_accelerator()
        index = local_rank % torch.accelerator.device_count()
        torch.accelerator.set_device_index(index)
        device = torch.device(f"{acc.type}:{index}")
    else:
        device = torch.device("cpu")
    backend = "nccl" if device.type == "cuda" else "gloo"
    dist.init_process_group(backend=backend, init_method="env://")
    return device


class Net(nn.Module):
    def __init__(self, d_in: int, hidden: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, 1)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def make_dataset(n: int = 512, d: int = 8) -> TensorDataset:
    g = torch.Generator().manual_seed(1234)  # the same data on every rank
    x = torch.randn(n, d, generator=g)
    w = torch.randn(d, 1, generator=g)
    y = (x @ w).tanh() + 0.05 * torch.randn(n, 1, generator=g)
    return TensorDataset(x, y)


class Trainer:
    def __init__(self, model: nn.Module, train_data: DataLoader, optimizer, device) -> None:
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.global_rank = int(os.environ["RANK"])
        self.device = device
        self.model = model.to(device)
        self.train_data = train_data
        self.optimizer = optimizer
        ids = [self.local_rank] if device.type == "cpu" else [device.index]
        self.model = DDP(self.model, device_ids=ids)

    def _run_batch(self, source, targets) -> float:
        self.optimizer.zero_grad()
        output = self.model(source)  # DDP moves the batch to device_ids[0]
        loss = F.mse_loss(output, targets.to(self.device))
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def _run_epoch(self, epoch: int) -> float:
        self.train_data.sampler.set_epoch(epoch)
        total = torch.zeros(1, device=self.device)
        for source, targets in self.train_data:
            total += self._run_batch(source, targets)
        total /= len(self.train_data)
        dist.all_reduce(total, op=dist.ReduceOp.SUM)
        return total.item() / dist.get_world_size()

    def train(self, max_epochs: int, checkpoint: str) -> list[float]:
        losses = []
        for epoch in range(max_epochs):
            losses.append(self._run_epoch(epoch))
            if self.global_rank == 0:
                print(f"epoch {epoch} | loss {losses[-1]:.5f}", flush=True)
        dist.barrier()
        if self.global_rank == 0:
            torch.save(self.model.module.state_dict(), checkpoint)
        dist.barrier()  # the checkpoint is complete before anyone reads it
        return losses


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("--epochs", type=int, default=8)
    args = ap.parse_args()
    env = {k: os.environ.get(k) for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE",
                                          "MASTER_ADDR", "MASTER_PORT")}
    assert not dist.is_initialized()
    device = ddp_setup()
    assert dist.is_initialized()
    torch.manual_seed(0)  # identical initial weights (DDP also broadcasts rank 0's)
    dataset = make_dataset()
    loader = DataLoader(dataset, batch_size=32, shuffle=False,
                        sampler=DistributedSampler(dataset))
    model = Net(8, 32)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    trainer = Trainer(model, loader, optimizer, device)
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "ckpt.pt") if dist.get_rank() == 0 else ""
        ckpt = [ckpt]
        dist.broadcast_object_list(ckpt, src=0)  # every rank reads rank 0's file
        losses = trainer.train(args.epochs, ckpt[0])
        restored = Net(8, 32)
        restored.load_state_dict(torch.load(ckpt[0], map_location="cpu"))
        dist.barrier()  # nobody deletes the directory while another rank reads
    params = [p.detach().cpu().numpy().ravel().tolist()
              for p in trainer.model.module.parameters()]
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, params)
    restored_ok = all(
        (a.detach().cpu() == b.detach().cpu()).all().item()
        for a, b in zip(trainer.model.module.parameters(), restored.parameters()))
    report = {
        "env": env, "rank": dist.get_rank(), "world_size": dist.get_world_size(),
        "backend": dist.get_backend(), "device": str(device),
        "param_device": str(next(trainer.model.parameters()).device),
        "losses": losses, "ranks_agree": all(p == params for p in everyone),
        "checkpoint_matches": bool(restored_ok),
        "shard": len(loader.sampler),
    }
    dist.destroy_process_group()
    report["initialized_after_destroy"] = dist.is_initialized()
    with open(f"{args.report}.rank{report['rank']}", "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main()
