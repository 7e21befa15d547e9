"""torchmetrics: classification and regression metrics over batches."""
import torchmetrics

from _harness import DEVICE, arr, ints, report

acc = torchmetrics.Accuracy(task="multiclass", num_classes=5).to(DEVICE)
f1 = torchmetrics.F1Score(task="multiclass", num_classes=5, average="macro").to(DEVICE)
mse = torchmetrics.MeanSquaredError().to(DEVICE)
auroc = torchmetrics.AUROC(task="binary").to(DEVICE)
for _ in range(3):
    logits, target = arr(32, 5).to(DEVICE), ints(5, 32).to(DEVICE)
    acc.update(logits, target)
    f1.update(logits, target)
    mse.update(arr(32).to(DEVICE), arr(32).to(DEVICE))
    auroc.update(arr(32).sigmoid().to(DEVICE), ints(2, 32).to(DEVICE))
report(acc=acc.compute().item(), f1=f1.compute().item(), mse=mse.compute().item(),
       auroc=auroc.compute().item())
