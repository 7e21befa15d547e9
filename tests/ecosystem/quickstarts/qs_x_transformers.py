"""x-transformers: a small decoder LM, one training step."""
import torch
from x_transformers import Decoder, TransformerWrapper

from _harness import DEVICE, ints, report, seed_module

model = TransformerWrapper(num_tokens=64, max_seq_len=32,
                           attn_layers=Decoder(dim=32, depth=2, heads=4))
model = seed_module(model).to(DEVICE)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
tokens = ints(64, 2, 16).to(DEVICE)
logits = model(tokens)
loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 64), tokens[:, 1:].reshape(-1))
loss.backward()
opt.step()
after = model(tokens)
report(logits=logits[0, :2], loss=loss.item(), after=after.sum().item())
