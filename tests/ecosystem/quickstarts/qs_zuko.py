"""zuko: a masked autoregressive flow and a neural spline flow, fit by likelihood for a few
Adam steps on fixed data; log-densities before and after."""
import torch
import zuko

from _harness import DEVICE, arr, report

data = arr(128, 2).to(DEVICE) * torch.tensor([1.0, 0.3], device=DEVICE)
results = {}
for name, flow in (("maf", zuko.flows.MAF(features=2, transforms=2, hidden_features=(16,))),
                   ("nsf", zuko.flows.NSF(features=2, transforms=2, hidden_features=(16,)))):
    with torch.no_grad():  # parameters only: the base distribution's buffers stay
        for p in flow.parameters():
            p.copy_(arr(*p.shape, scale=0.1))
    flow = flow.to(DEVICE)
    opt = torch.optim.Adam(flow.parameters(), lr=1e-2)
    start = -flow().log_prob(data).mean()
    for _ in range(6):
        loss = -flow().log_prob(data).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    results[name + "_start"] = start
    results[name + "_end"] = -flow().log_prob(data).mean()
    z = flow().transform(data[:4])
    results[name + "_z"] = z
report(**results)
