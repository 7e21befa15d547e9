"""torchdiffeq: integrate a small neural ODE, with and without the adjoint."""
import torch
from torchdiffeq import odeint, odeint_adjoint

from _harness import DEVICE, arr, report, seed_module


class Func(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.Tanh(),
                                       torch.nn.Linear(16, 2))

    def forward(self, t, y):
        return self.net(y)


func = seed_module(Func(), scale=0.5).to(DEVICE)
y0 = arr(4, 2).to(DEVICE)
t = torch.linspace(0.0, 1.0, 5).to(DEVICE)
ys = odeint(func, y0, t, method="dopri5", rtol=1e-6, atol=1e-8)
ys_rk4 = odeint(func, y0, t, method="rk4")
loss = odeint_adjoint(func, y0, t, rtol=1e-6, atol=1e-8)[-1].pow(2).sum()
loss.backward()
report(ys=ys[-1], rk4=ys_rk4[-1], grad=func.net[0].weight.grad)
