"""pytorch-lightning: Trainer.fit and validate of a tiny LightningModule on the CPU accelerator."""
import logging
import warnings

import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader, TensorDataset

from _harness import arr, report, seed_module

warnings.filterwarnings("ignore")
logging.getLogger("pytorch_lightning").setLevel(logging.ERROR)


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.Tanh(),
                                       torch.nn.Linear(12, 1))
        seed_module(self)
        self.losses = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.losses.append(float(loss.detach()))
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.net(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)


x = arr(32, 6)
y = x[:, :1] * 0.5 - x[:, 1:2]
data = TensorDataset(x, y)
model = Regressor()
trainer = pl.Trainer(max_epochs=3, accelerator="cpu", devices=1, logger=False,
                     enable_checkpointing=False, enable_progress_bar=False,
                     enable_model_summary=False, num_sanity_val_steps=0)
trainer.fit(model, DataLoader(data, batch_size=8), DataLoader(data, batch_size=16))
val = trainer.validate(model, DataLoader(data, batch_size=16), verbose=False)
report(losses=model.losses, val_loss=val[0]["val_loss"], step=trainer.global_step,
       weight=model.net[0].weight)
