"""skorch: a scikit-learn style classifier around a torch module."""
import numpy as np
import torch
from skorch import NeuralNetClassifier

from _harness import DEVICE, RNG, report, seed_module


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                       torch.nn.Linear(16, 3))
        seed_module(self)

    def forward(self, x):
        return torch.softmax(self.net(x), dim=-1)


X = RNG.standard_normal((60, 8)).astype(np.float32)
y = (X[:, 0] > 0).astype(np.int64) + (X[:, 1] > 0.5).astype(np.int64)
net = NeuralNetClassifier(MLP, max_epochs=4, lr=0.2, batch_size=20, train_split=None,
                          iterator_train__shuffle=False, device=DEVICE, verbose=0)
net.fit(X, y)
proba = net.predict_proba(X[:4])
report(loss=[round(h["train_loss"], 6) for h in net.history], proba=torch.from_numpy(proba))
