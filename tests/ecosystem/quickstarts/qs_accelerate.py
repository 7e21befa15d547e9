"""accelerate: Accelerator().prepare of a model, optimizer and loader, then a few steps
with accelerator.backward and clip_grad_norm_ (the README's minimal loop); the device is
accelerate's choice: the `cuda` one when there is one."""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

from _harness import arr, report, seed_module

accelerator = Accelerator()  # the `cuda` device when there is one: omnitensor's accelerator
model = seed_module(torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.GELU(),
                                        torch.nn.Linear(8, 2)))
optimizer = torch.optim.AdamW(model.parameters(), lr=0.05)
x = arr(24, 5)
y = torch.stack([x[:, 0] - x[:, 1], x[:, 2] * 0.5], dim=1)
loader = DataLoader(TensorDataset(x, y), batch_size=6)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
assert next(model.parameters()).device.type == accelerator.device.type
losses = []
for _epoch in range(2):
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(xb), yb)
        accelerator.backward(loss)
        accelerator.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
gathered = accelerator.gather_for_metrics(model(x[:4].to(accelerator.device)))
unwrapped = accelerator.unwrap_model(model)
report(losses=losses, out=gathered, weight=unwrapped[0].weight,
       procs=accelerator.num_processes)
