"""A VAE written as a torch script (pytorch/examples' vae shape, smaller): the encoder's
Normal posterior sampled with rsample, the KL term from torch.distributions.kl_divergence
checked against the closed form, Adam, on binarised synthetic digit-like images."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.distributions import Normal, kl_divergence

torch.manual_seed(1)
device = torch.device("cpu")
if torch.accelerator.is_available():
    device = torch.accelerator.current_accelerator()

rng = np.random.default_rng(0)
protos = (rng.uniform(size=(4, 64)) > 0.5).astype(np.float32)
data = torch.tensor(protos[rng.integers(0, 4, size=512)], device=device)


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc21 = nn.Linear(32, 4)
        self.fc22 = nn.Linear(32, 4)
        self.fc3 = nn.Linear(4, 32)
        self.fc4 = nn.Linear(32, 64)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x):
        mu, logvar = self.encode(x)
        q = Normal(mu, torch.exp(0.5 * logvar))
        return self.decode(q.rsample()), mu, logvar, q


model = VAE().to(device)
optimizer = optim.Adam(model.parameters(), lr=1e-2)


def loss_function(recon_x, x, mu, logvar, q):
    bce = F.binary_cross_entropy(recon_x, x, reduction="sum")
    prior = Normal(torch.zeros_like(mu), torch.ones_like(mu))
    kld = kl_divergence(q, prior).sum()
    closed = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    assert torch.allclose(kld, closed, rtol=1e-4, atol=1e-3), (kld.item(), closed.item())
    return bce + kld


losses = []
for epoch in range(6):
    model.train()
    total = 0.0
    for batch in data.split(64):
        optimizer.zero_grad()
        recon, mu, logvar, q = model(batch)
        loss = loss_function(recon, batch, mu, logvar, q)
        loss.backward()
        total += loss.item()
        optimizer.step()
    losses.append(total / len(data))
    print(f"====> Epoch: {epoch} Average loss: {losses[-1]:.4f}")

with torch.no_grad():
    sample = model.decode(torch.randn(8, 4, device=device))
    assert sample.shape == (8, 64) and sample.device == data.device
print("PASS" if losses[-1] < 0.6 * losses[0] else f"FAIL: loss {losses}")
