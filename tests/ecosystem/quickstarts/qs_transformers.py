"""Hugging Face transformers: a tiny GPT-2 and a tiny BERT built from configs (no hub
downloads), a forward pass with loss, one AdamW step, and greedy generation."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")

import torch
from transformers import (BertConfig, BertForSequenceClassification, GPT2Config,
                          GPT2LMHeadModel)

from _harness import DEVICE, ints, report, seed_module

gpt = GPT2LMHeadModel(GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=2,
                                 n_head=4, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                 bos_token_id=0, eos_token_id=0, loss_type="ForCausalLM"))
gpt = seed_module(gpt).to(DEVICE).eval()
tokens = ints(64, 2, 12).to(DEVICE)
out = gpt(tokens, labels=tokens)
opt = torch.optim.AdamW(gpt.parameters(), lr=1e-3)
out.loss.backward()
opt.step()
gen = gpt.generate(tokens[:1, :4], max_new_tokens=5, do_sample=False, pad_token_id=0)
bert = BertForSequenceClassification(BertConfig(vocab_size=64, hidden_size=32,
                                                num_hidden_layers=2, num_attention_heads=4,
                                                intermediate_size=64, num_labels=3,
                                                hidden_dropout_prob=0.0,
                                                attention_probs_dropout_prob=0.0))
bert = seed_module(bert).to(DEVICE).eval()
logits = bert(tokens, attention_mask=(tokens > 3).long()).logits
report(loss=out.loss.item(), logits=out.logits[0, :2], generated=gen.float(),
       bert=logits)
