"""rotary-embedding-torch and vector-quantize-pytorch: two building blocks of modern models."""
from rotary_embedding_torch import RotaryEmbedding
from vector_quantize_pytorch import VectorQuantize

from _harness import DEVICE, arr, report, seed_module

rotary = RotaryEmbedding(dim=16).to(DEVICE)
q = arr(1, 2, 8, 32).to(DEVICE)
rq = rotary.rotate_queries_or_keys(q)
vq = VectorQuantize(dim=16, codebook_size=32, decay=0.8, commitment_weight=1.0)
seed_module(vq, scale=1.0).to(DEVICE)
vq.eval()
x = arr(1, 10, 16).to(DEVICE)
quantized, indices, commit_loss = vq(x)
report(rotary=rq[0, 1, 3], quantized=quantized.sum().item(), indices=indices.float(),
       commit=commit_loss.sum().item())
