"""A two-layer graph convolutional network (Kipf & Welling) written the way torch programs
write it: a random graph's symmetric-normalised adjacency ``D^-1/2 (A + I) D^-1/2`` built as
a sparse COO tensor with ``torch.sparse.sum``, layers ``torch.sparse.mm(adj, x @ W)``,
cross-entropy on the labelled nodes, Adam with weight decay. The same program runs on
omnitensor (every device) and on real torch from the same initial weights; the losses of
every step agree to float32 tolerance, and they fall."""
import numpy as np
import pytest
import torch

import omnitensor as ot

N_NODES, N_FEATURES, HIDDEN, CLASSES, STEPS = 80, 12, 16, 4, 15


def _graph():
    rng = np.random.default_rng(0)
    edges = rng.integers(0, N_NODES, (2, 300))
    features = rng.standard_normal((N_NODES, N_FEATURES)).astype(np.float32)
    labels = rng.integers(0, CLASSES, N_NODES)
    train = rng.random(N_NODES) < 0.5
    glorot = [(rng.uniform(-1, 1, shape) * np.sqrt(6 / sum(shape))).astype(np.float32)
              for shape in ((N_FEATURES, HIDDEN), (HIDDEN, CLASSES))]
    return edges, features, labels, train, glorot


def gcn_losses(lib, device):
    """The program; ``lib`` is ``torch`` or ``omnitensor`` (run as ``torch``)."""
    nn, F = lib.nn, lib.nn.functional
    edges, features, labels, train, glorot = _graph()
    loops = np.arange(N_NODES)[None].repeat(2, 0)
    index = lib.tensor(np.concatenate([edges, edges[::-1], loops], 1), device=device)
    a = lib.sparse_coo_tensor(index, lib.ones(index.shape[1], device=device),
                              (N_NODES, N_NODES)).coalesce()  # repeated edges weigh more
    deg_inv_sqrt = lib.sparse.sum(a, dim=1).to_dense().pow(-0.5)
    row, col = a.indices()
    adj = lib.sparse_coo_tensor(a.indices(), deg_inv_sqrt[row] * a.values() *
                                deg_inv_sqrt[col], a.shape)

    class GCN(nn.Module):
        def __init__(self):
            super().__init__()
            self.w1 = nn.Parameter(lib.tensor(glorot[0], device=device))
            self.b1 = nn.Parameter(lib.zeros(HIDDEN, device=device))
            self.w2 = nn.Parameter(lib.tensor(glorot[1], device=device))
            self.b2 = nn.Parameter(lib.zeros(CLASSES, device=device))

        def forward(self, x, adj):
            h = F.relu(lib.sparse.mm(adj, x @ self.w1) + self.b1)
            return lib.sparse.mm(adj, h @ self.w2) + self.b2

    model = GCN()
    opt = lib.optim.Adam(model.parameters(), lr=0.05, weight_decay=5e-4)
    x = lib.tensor(features, device=device)
    y = lib.tensor(labels, device=device)
    mask = lib.tensor(train, device=device)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = F.cross_entropy(model(x, adj)[mask], y[mask])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    accuracy = (model(x, adj).argmax(1) == y)[mask].float().mean().item()
    return losses, accuracy


@pytest.mark.filterwarnings("ignore:Sparse invariant checks")
def test_gcn_matches_torch(device):
    ours, acc = gcn_losses(ot, device)
    theirs, tacc = gcn_losses(torch, "cpu")
    np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=2e-6)
    assert ours[-1] < 0.8 * ours[0]
    assert abs(acc - tacc) < 0.05
