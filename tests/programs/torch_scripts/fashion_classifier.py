"""A quickstart-style classifier written as a torch script: FashionMNIST-shaped synthetic
images, DataLoader, an MLP, SGD with momentum, whole-model and state-dict checkpoints.
Run with `python -m omnitensor.as_torch fashion_classifier.py` (OMNITENSOR_DEVICE picks the
device); prints PASS when the test accuracy clears the bar."""
import os
import sys
import tempfile

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
torch.cuda.manual_seed_all(0)
torch.backends.cudnn.benchmark = True
device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"
print(f"Using {device} device")


def synthetic_fashion(n, seed):
    rng = np.random.default_rng(seed)
    protos = np.random.default_rng(7).uniform(0, 1, size=(10, 1, 28, 28))
    labels = rng.integers(0, 10, size=n)
    images = protos[labels] * 0.8 + rng.normal(0, 0.35, size=(n, 1, 28, 28))
    return (torch.from_numpy(images.astype(np.float32)),
            torch.LongTensor(labels.tolist()))


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28 * 28, 128), nn.ReLU(), nn.Dropout(0.1),
            nn.Linear(128, 64), nn.ReLU(),
            nn.Linear(64, 10))

    def forward(self, x):
        return self.linear_relu_stack(self.flatten(x))


train_loader = DataLoader(TensorDataset(*synthetic_fashion(1024, 1)), batch_size=64,
                          shuffle=True)
test_loader = DataLoader(TensorDataset(*synthetic_fashion(256, 2)), batch_size=128)
model = NeuralNetwork().to(device)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)


def evaluate(net):
    net.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for X, y in test_loader:
            X, y = X.to(device), y.to(device)
            correct += (net(X).argmax(1) == y).type(torch.float).sum().item()
            total += y.size(0)
    return correct / total


for epoch in range(4):
    model.train()
    for X, y in train_loader:
        X, y = X.to(device), y.to(device)
        loss = loss_fn(model(X), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    scheduler.step()
    print(f"epoch {epoch}: loss {loss.item():.4f} accuracy {evaluate(model):.3f}")

accuracy = evaluate(model)
with tempfile.TemporaryDirectory() as tmp:
    torch.save(model.state_dict(), os.path.join(tmp, "model.pth"))
    reloaded = NeuralNetwork().to(device)
    reloaded.load_state_dict(torch.load(os.path.join(tmp, "model.pth")))
    torch.save(model, os.path.join(tmp, "whole.pth"))
    try:
        torch.load(os.path.join(tmp, "whole.pth"))
        sys.exit("FAIL: a whole model loaded with weights_only=True")
    except Exception as e:  # the torch >= 2.6 refusal
        assert "weights_only" in str(e), e
    whole = torch.load(os.path.join(tmp, "whole.pth"), weights_only=False)
    with torch.serialization.safe_globals([NeuralNetwork, nn.Flatten, nn.Sequential, nn.Linear,
                                           nn.ReLU, nn.Dropout]):
        allowed = torch.load(os.path.join(tmp, "whole.pth"))
for net in (reloaded, whole, allowed):
    assert abs(evaluate(net) - accuracy) < 1e-6
print(f"accuracy {accuracy:.3f}")
print("PASS" if accuracy > 0.8 else "FAIL: accuracy too low")
