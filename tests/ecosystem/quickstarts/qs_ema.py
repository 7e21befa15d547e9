"""torch-ema and ema-pytorch: exponential moving averages of weights while training."""
import torch
from ema_pytorch import EMA
from torch_ema import ExponentialMovingAverage

from _harness import DEVICE, arr, report, seed_module

model = seed_module(torch.nn.Linear(4, 2)).to(DEVICE)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
ema1 = ExponentialMovingAverage(model.parameters(), decay=0.9)
ema2 = EMA(model, beta=0.9, update_after_step=0, update_every=1)
x, y = arr(8, 4).to(DEVICE), arr(8, 2).to(DEVICE)
for _ in range(5):
    loss = ((model(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema1.update()
    ema2.update()
with ema1.average_parameters():
    avg1 = model.weight.detach().clone()
report(avg1=avg1, avg2=ema2.ema_model.weight, out=ema2(x).sum().item())
