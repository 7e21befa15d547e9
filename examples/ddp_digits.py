"""Data-parallel training of a digits MLP with DistributedDataParallel.

    omnitensor-run -n 2 examples/ddp_digits.py            # 2 ranks, cpu tensors
    omnitensor-run -n 2 examples/ddp_digits.py --device opencl:0
    python examples/ddp_digits.py                         # one process, for comparison

The 8x8 digits of scikit-learn (1797 images; 75% train, 25% test), a 64-256-256-10 ReLU
MLP and SGD with momentum. Each rank sees its share of every global batch (a
DistributedSampler), DDP averages the gradients, so the run matches one process on the
whole batch: the same parameters up to float rounding, hence about the same accuracy
(>= 97%; rounding may flip an image or two: 2 ranks 97.78%, one process 97.56% here).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import omnitensor as ot
import omnitensor.distributed as dist
import omnitensor.nn as nn
import omnitensor.nn.functional as F
import omnitensor.optim as optim
from omnitensor.data import DataLoader, TensorDataset
from omnitensor.data.distributed import DistributedSampler
from omnitensor.nn.parallel import DistributedDataParallel as DDP


def load(device: str) -> tuple[TensorDataset, ot.Tensor, ot.Tensor]:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    x, y = load_digits(return_X_y=True)
    x_tr, x_te, y_tr, y_te = train_test_split(x.astype(np.float32), y, test_size=0.25,
                                              random_state=0, stratify=y)
    mean, std = x_tr.mean(0), x_tr.std(0) + 1e-6  # statistics of the training split only
    x_tr, x_te = (x_tr - mean) / std, (x_te - mean) / std
    train = TensorDataset(ot.tensor(x_tr, device=device), ot.tensor(y_tr, device=device))
    return train, ot.tensor(x_te, device=device), ot.tensor(y_te, device=device)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None,
                    help="device of every rank (default: $OMNITENSOR_DEVICE, else cpu)")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=64, help="global batch size")
    ap.add_argument("--lr", type=float, default=0.05)
    args = ap.parse_args()

    dist.init_process_group()  # one rank without mpiexec: the same script runs alone
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.batch_size % world:
        raise SystemExit(f"--batch-size {args.batch_size} must divide by {world} ranks")
    args.device = args.device or str(ot.get_default_device())
    train, x_te, y_te = load(args.device)

    ot.manual_seed(0)  # DDP broadcasts rank 0's initial weights anyway
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 10)).to(args.device)
    ddp = DDP(model)
    opt = optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9)
    sampler = DistributedSampler(train, shuffle=True, seed=0, drop_last=True)
    loader = DataLoader(train, batch_size=args.batch_size // world, sampler=sampler)

    t0 = time.perf_counter()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        ddp.train()
        total = ot.zeros(2, dtype=ot.float64)  # (loss sum, samples) on this rank
        for xb, yb in loader:
            opt.zero_grad()
            loss = F.cross_entropy(ddp(xb), yb)
            loss.backward()  # gradients are averaged across ranks here
            opt.step()
            total += ot.tensor([loss.item() * len(yb), len(yb)], dtype=ot.float64)
        dist.all_reduce(total)  # the epoch's mean loss over every rank's samples
        if rank == 0 and (epoch % 5 == 4 or epoch == args.epochs - 1):
            print(f"epoch {epoch + 1:3d}  train loss {(total[0] / total[1]).item():.4f}",
                  flush=True)

    # evaluation: each rank scores a slice of the test set, counts are summed
    ddp.eval()
    n_test = len(y_te)
    lo, hi = rank * n_test // world, (rank + 1) * n_test // world
    with ot.no_grad():
        pred = model(x_te[lo:hi]).argmax(dim=1)
    counts = ot.tensor([float((pred == y_te[lo:hi]).sum().item()), float(hi - lo)],
                       dtype=ot.float64)
    dist.all_reduce(counts)
    acc = (counts[0] / counts[1]).item()
    if rank == 0:
        print(f"{world} rank(s) on {args.device}: test accuracy {acc:.4f} "
              f"({int(counts[0].item())}/{n_test}) in {time.perf_counter() - t0:.1f} s")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
