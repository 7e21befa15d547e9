"""einops, entmax and torchinfo: shape algebra, sparse activations, model summaries."""
import torch
from einops import rearrange, reduce, repeat
from einops.layers.torch import Rearrange
from entmax import entmax15, sparsemax
from torchinfo import summary

from _harness import DEVICE, arr, report, seed_module

x = arr(2, 3, 4, 6).to(DEVICE)
a = rearrange(x, "b c (h p) w -> b (c h) p w", p=2)
r = reduce(x, "b c h w -> b c", "mean")
rep = repeat(x[0, 0], "h w -> h w k", k=2)
seq = torch.nn.Sequential(Rearrange("b c h w -> b (c h w)"), torch.nn.Linear(72, 5))
seed_module(seq).to(DEVICE)
logits = arr(3, 7, scale=2.0).to(DEVICE).requires_grad_()
p15, psp = entmax15(logits, dim=-1), sparsemax(logits, dim=-1)
(p15 * torch.arange(7.0).to(DEVICE)).sum().backward()
stats = summary(seq, input_size=(2, 3, 4, 6), device=DEVICE, verbose=0)
report(a=a.sum().item(), r=r, rep=rep.shape[-1], seq=seq(x), entmax=p15, sparsemax=psp,
       grad=logits.grad, params=stats.total_params)
