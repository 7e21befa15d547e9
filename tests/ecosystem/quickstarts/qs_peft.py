"""peft: LoRA adapters on a tiny GPT-2 (built from a config, no hub downloads), a few
AdamW steps on the adapters only, then merge_and_unload."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")

import torch
from peft import LoraConfig, get_peft_model
from transformers import GPT2Config, GPT2LMHeadModel

from _harness import DEVICE, arr, ints, report, seed_module

base = GPT2LMHeadModel(GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=2,
                                  n_head=4, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                  bos_token_id=0, eos_token_id=0, loss_type="ForCausalLM"))
seed_module(base)
model = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0,
                                        target_modules=["c_attn"], fan_in_fan_out=True))
with torch.no_grad():  # LoRA's own init draws from torch's generator: overwrite it
    for name, p in model.named_parameters():
        if "lora_" in name:
            p.copy_(arr(*p.shape, scale=0.1))
model = model.to(DEVICE)
trainable = [p for p in model.parameters() if p.requires_grad]
opt = torch.optim.AdamW(trainable, lr=1e-2)
tokens = ints(64, 2, 10).to(DEVICE)
losses = []
for _ in range(3):
    opt.zero_grad()
    loss = model(tokens, labels=tokens).loss
    loss.backward()
    opt.step()
    losses.append(loss.item())
model.eval()
with torch.no_grad():
    adapted = model(tokens).logits[0, :2]
    merged = model.merge_and_unload()
    after = merged(tokens).logits[0, :2]
report(losses=losses, adapted=adapted, merged=after,
       trainable=sum(p.numel() for p in trainable),
       total=sum(p.numel() for p in merged.parameters()))
