"""pytorch/examples mnist_hogwild, in shape: a shared model trained by several processes at
once (mp.Process, start method spawn), then tested in the parent. Synthetic data (two
Gaussian blobs per class) stands in for MNIST. Prints a JSON line with what the test checks,
then PASS."""
import argparse
import json
import os

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 4, (n,), generator=g)
    centers = torch.eye(4, 8) * 3.0
    x = centers[y] + torch.randn(n, 8, generator=g)
    return TensorDataset(x, y)


def train(rank, args, model, device, dataset, dataloader_kwargs):
    torch.manual_seed(args.seed + rank)
    train_loader = DataLoader(dataset, **dataloader_kwargs)
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    for _epoch in range(1, args.epochs + 1):
        model.train()
        for data, target in train_loader:
            optimizer.zero_grad()
            loss = F.nll_loss(model(data.to(device)), target.to(device))
            loss.backward()
            optimizer.step()
    # what this child saw: the parameters are shared, not copies
    with open(os.path.join(args.out, f"rank{rank}.json"), "w") as f:
        json.dump({"shared": all(p.is_shared() for p in model.parameters()),
                   "pid": os.getpid()}, f)


def test(model, device, dataset):
    model.eval()
    correct = 0
    with torch.no_grad():
        for data, target in DataLoader(dataset, batch_size=256):
            pred = model(data.to(device)).argmax(dim=1)
            correct += pred.eq(target.to(device)).sum().item()
    return correct / len(dataset)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-processes", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--momentum", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=".")
    args = parser.parse_args()
    device = torch.device("cpu")
    torch.manual_seed(args.seed)
    mp.set_start_method("spawn", force=True)
    model = Net().to(device)
    model.share_memory()  # gradients are allocated lazily, so they are not shared here
    before = [p.detach().clone() for p in model.parameters()]
    kwargs = {"batch_size": 32, "shuffle": True}
    train_set, test_set = make_data(512, 0), make_data(256, 1)
    start_acc = test(model, device, test_set)
    processes = []
    for rank in range(args.num_processes):
        p = mp.Process(target=train, args=(rank, args, model, device, train_set, kwargs))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
    changed = max((p - b).abs().max().item() for p, b in zip(model.parameters(), before))
    acc = test(model, device, test_set)
    print(json.dumps({"exitcodes": [p.exitcode for p in processes], "changed": changed,
                      "start_acc": start_acc, "acc": acc,
                      "torch_is": type(torch.zeros(1)).__module__}))
    print("PASS" if acc > 0.9 and changed > 0 else "FAIL")
