"""Compiled variants of torch-style training programs (the patterns of tests/programs): a
DataLoader-fed classifier whose whole training step is compiled (forward, loss, backward,
SGD with momentum) under a StepLR schedule, evaluated through a compiled model under
no_grad; and a regression whose model is compiled while loss, backward and Adam stay eager
(torch.compile(model) in a plain loop). Each runs next to its eager twin: same losses, same
weights, same accuracy."""
from __future__ import annotations

import numpy as np

import omnitensor as torch
from omnitensor import nn
from omnitensor.utils.data import DataLoader, TensorDataset


def _images(n, seed):
    rng = np.random.default_rng(seed)
    protos = np.random.default_rng(7).uniform(0, 1, size=(4, 1, 8, 8))
    labels = rng.integers(0, 4, size=n)
    x = protos[labels] * 0.8 + rng.normal(0, 0.3, size=(n, 1, 8, 8))
    return torch.from_numpy(x.astype(np.float32)), torch.tensor(labels.tolist())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.stack = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Dropout(0.1),
                                   nn.Linear(32, 4))

    def forward(self, x):
        return self.stack(self.flatten(x))


def _classifier(device, compiled):
    torch.manual_seed(0)
    model = Net().to(device)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)

    def train_step(X, y):
        optimizer.zero_grad()
        loss = loss_fn(model(X), y)
        loss.backward()
        optimizer.step()
        return loss.detach()
    step = torch.compile(train_step) if compiled else train_step
    net = torch.compile(model) if compiled else model
    train = DataLoader(TensorDataset(*_images(256, 1)), batch_size=32, shuffle=True,
                       generator=torch.Generator().manual_seed(5))
    test = DataLoader(TensorDataset(*_images(128, 2)), batch_size=64)
    losses = []
    torch.manual_seed(1)
    for _epoch in range(4):
        model.train()
        for X, y in train:
            losses.append(step(X.to(device), y.to(device)).item())
        scheduler.step()
    model.eval()
    correct = 0
    with torch.no_grad():
        for X, y in test:
            correct += (net(X.to(device)).argmax(1) == y.to(device)).sum().item()
    return losses, correct / 128, model, step


def test_compiled_classifier_program(device):
    el, eacc, emodel, _ = _classifier(device, False)
    cl, cacc, cmodel, step = _classifier(device, True)
    assert np.allclose(el, cl, rtol=1e-5, atol=1e-6)
    assert cacc == eacc and cacc > 0.9
    for p, q in zip(emodel.parameters(), cmodel.parameters()):
        assert torch.allclose(p, q, rtol=1e-4, atol=1e-6)
    info = step.cache_info()
    # 4 epochs x 8 batches; retraces: the first step (no momentum buffers, no .grad yet),
    # then once per learning rate (StepLR halves it every 2 epochs)
    assert info["replays"] >= 32 - 4 and not info["breaks"]


def _regression(device, compiled):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    f = torch.compile(model) if compiled else model
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.normal(size=(64, 3)).astype(np.float32), device=device)
    y = (x[:, :1] * 2 - x[:, 1:2] + 0.5 * x[:, 2:3].sin())
    losses = []
    for _ in range(40):
        opt.zero_grad()
        loss = ((f(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, f


def test_compiled_model_in_an_eager_loop(device):
    el, _ = _regression(device, False)
    cl, f = _regression(device, True)
    assert np.allclose(el, cl, rtol=1e-5, atol=1e-7)
    assert cl[-1] < 0.05 * cl[0]
    assert f._compiled.cache_info()["replays"] >= 38
