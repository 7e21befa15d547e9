"""Two torch.distributions programs written as torch scripts, deterministic so that real
torch and omnitensor (under --as-torch) can be held to the same numbers:

1. a normalizing flow on 2-D data: a Normal base pushed through learned affine coupling
   layers (a user Transform subclass), an ExpTransform/AffineTransform chain and
   IndependentTransform, trained by maximum likelihood with Adam;
2. variational Bayesian logistic regression: q(w) = Independent Normal, a LogNormal
   prior on the prior scale, the ELBO from log_prob and kl_divergence with the
   reparameterisation written out on fixed NumPy noise (the generators differ).

Prints one JSON line per step ({"flow": loss} / {"vi": -elbo}), then PASS when both
losses fell. FLOW_VI_DTYPE=float32 runs it in float32 (default float64)."""
import json
import os

import numpy as np
import torch
from torch import nn
from torch.distributions import (AffineTransform, ComposeTransform, Independent,
                                 IndependentTransform, LogNormal, Normal, Bernoulli,
                                 TransformedDistribution, constraints, kl_divergence)
from torch.distributions.transforms import Transform

dt = getattr(torch, os.environ.get("FLOW_VI_DTYPE", "float64"))
torch.set_default_dtype(dt)
device = torch.device("cpu")
if torch.accelerator.is_available():
    device = torch.accelerator.current_accelerator()
rng = np.random.default_rng(0)


class Coupling(Transform):
    """y1 = x1, y2 = x2 * exp(s(x1)) + t(x1): RealNVP's affine coupling on 2-D points."""
    domain = constraints.real_vector
    codomain = constraints.real_vector
    bijective = True

    def __init__(self, net, flip):
        super().__init__(cache_size=1)
        self.net, self.flip = net, flip

    def _split(self, v):
        a, b = v[..., :1], v[..., 1:]
        return (b, a) if self.flip else (a, b)

    def _join(self, a, b):
        return torch.cat([b, a] if self.flip else [a, b], dim=-1)

    def _st(self, a):
        h = self.net(a)
        return torch.tanh(h[..., :1]), h[..., 1:]

    def _call(self, x):
        a, b = self._split(x)
        s, t = self._st(a)
        return self._join(a, b * torch.exp(s) + t)

    def _inverse(self, y):
        a, b = self._split(y)
        s, t = self._st(a)
        return self._join(a, (b - t) * torch.exp(-s))

    def log_abs_det_jacobian(self, x, y):
        s, _ = self._st(self._split(x)[0])
        return s.sum(-1)


def make_net(seed):
    g = np.random.default_rng(seed)
    net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 2))
    with torch.no_grad():  # the same initial weights in either library
        for p in net.parameters():
            p.copy_(torch.tensor(g.normal(scale=0.3, size=tuple(p.shape)),
                                 dtype=p.dtype))
    return net.to(device)


# ------------------------------------------------------------------ 1. the flow
theta = rng.uniform(0, np.pi, 256)
moons = np.stack([np.cos(theta), np.sin(theta)], 1) + rng.normal(scale=0.1, size=(256, 2))
data = torch.tensor(moons, dtype=dt, device=device)
nets = [make_net(s) for s in range(4)]
log_scale = nn.Parameter(torch.zeros(2, device=device))
shift = nn.Parameter(torch.zeros(2, device=device))


def flow():
    base = Normal(torch.zeros(2, device=device), torch.ones(2, device=device))
    couplings = [Coupling(n, flip=i % 2 == 1) for i, n in enumerate(nets)]
    outer = IndependentTransform(AffineTransform(shift, log_scale.exp()), 1)
    return TransformedDistribution(Independent(base, 1),
                                   [ComposeTransform(couplings), outer])


params = [p for n in nets for p in n.parameters()] + [log_scale, shift]
opt = torch.optim.Adam(params, lr=1e-2)
flow_losses = []
for _ in range(25):
    opt.zero_grad()
    loss = -flow().log_prob(data).mean()
    loss.backward()
    opt.step()
    flow_losses.append(loss.item())
    print(json.dumps({"flow": loss.item()}))
with torch.no_grad():
    d = flow()
    x = d.sample((5,))
    assert x.shape == (5, 2) and torch.isfinite(d.log_prob(x)).all()

# --------------------------------------------- 2. variational logistic regression
X = rng.normal(size=(200, 3))
w_true = np.array([1.5, -2.0, 0.5])
y = (rng.uniform(size=200) < 1 / (1 + np.exp(-X @ w_true))).astype(np.float64)
Xt, yt = torch.tensor(X, dtype=dt, device=device), torch.tensor(y, dtype=dt, device=device)
# one draw set per step
noise = torch.tensor(rng.normal(size=(40, 8, 3)), dtype=dt, device=device)
mu = nn.Parameter(torch.zeros(3, device=device))
rho = nn.Parameter(torch.full((3,), -1.0, device=device))
log_tau = nn.Parameter(torch.zeros((), device=device))
opt = torch.optim.Adam([mu, rho, log_tau], lr=5e-2)
vi_losses = []
for step in range(40):
    opt.zero_grad()
    q = Independent(Normal(mu, torch.nn.functional.softplus(rho)), 1)
    tau = log_tau.exp()
    prior = Independent(Normal(torch.zeros(3, device=device), tau.expand(3)), 1)
    w = q.mean + q.stddev * noise[step]  # the reparameterisation on shared noise
    log_lik = Bernoulli(logits=w @ Xt.T).log_prob(yt.expand(8, 200)).sum(-1).mean()
    hyper = LogNormal(torch.tensor(0.0, device=device), torch.tensor(1.0, device=device))
    elbo = log_lik - kl_divergence(q, prior) + hyper.log_prob(tau) + log_tau
    (-elbo).backward()
    opt.step()
    vi_losses.append(-elbo.item())
    print(json.dumps({"vi": -elbo.item()}))
ok = flow_losses[-1] < flow_losses[0] - 0.3 and vi_losses[-1] < vi_losses[0] - 20
print("PASS" if ok else f"FAIL: flow {flow_losses[::6]}, vi {vi_losses[::10]}")
