"""pytorch-metric-learning: TripletMarginLoss with a MultiSimilarityMiner on embeddings of
a tiny network (the README's loss + miner), a few SGD steps, and the mined pairs."""
import torch
from pytorch_metric_learning import losses, miners

from _harness import DEVICE, arr, report, seed_module

model = seed_module(torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(),
                                        torch.nn.Linear(16, 4)), scale=0.3).to(DEVICE)
miner = miners.MultiSimilarityMiner(epsilon=0.1)
loss_func = losses.TripletMarginLoss(margin=0.2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = arr(16, 6).to(DEVICE)
labels = torch.tensor([0, 1, 2, 3] * 4).to(DEVICE)
hist, mined = [], []
for _ in range(3):
    opt.zero_grad()
    emb = model(x)
    pairs = miner(emb, labels)
    loss = loss_func(emb, labels, pairs)
    loss.backward()
    opt.step()
    hist.append(loss.item())
    mined.append([int(p.numel()) for p in pairs])
contrastive = losses.ContrastiveLoss(pos_margin=0, neg_margin=1)(model(x), labels)
report(losses=hist, mined=mined, contrastive=contrastive.item(), emb=model(x)[:3])
