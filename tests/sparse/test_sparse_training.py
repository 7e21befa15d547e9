"""Sparse gradients in training, against torch: ``nn.Embedding(sparse=True)`` gives a COO
gradient (padding rows left out, accumulated across backward calls), and the optimizers
that take one (SGD with and without momentum, Adagrad, SparseAdam) make torch's updates.
Also: the backend's library product (SciPy on cpu) equals the composite every device runs."""
import numpy as np
import pytest
import torch

import omnitensor as ot
from sparse_helpers import QUIET_TORCH, N, fdtype, tdtype

pytestmark = QUIET_TORCH

TOKENS = [[0, 1, 3, 5], [3, 3, 4, 1]]
W = np.random.default_rng(0).standard_normal((7, 3))


def _embeddings(device, **kwargs):
    d = fdtype(device)
    ours = ot.nn.Embedding(7, 3, sparse=True, **kwargs).to(device)
    theirs = torch.nn.Embedding(7, 3, sparse=True, **kwargs)
    ours.weight.data = ot.tensor(W, dtype=d, device=device)
    theirs.weight.data = torch.tensor(W, dtype=tdtype(d))
    return ours, theirs


def _loss(emb, lib, device):
    x = lib.tensor(TOKENS) if lib is torch else ot.tensor(TOKENS, device=device)
    return (emb(x) ** 2).sum() + emb(x[:, :2]).sum()


@pytest.mark.parametrize("padding_idx", [None, 1])
def test_embedding_sparse_gradient(device, padding_idx):
    ours, theirs = _embeddings(device, padding_idx=padding_idx)
    for _ in range(2):  # the second backward accumulates
        _loss(ours, ot, device).backward()
        _loss(theirs, torch, device).backward()
    g, tg = ours.weight.grad, theirs.weight.grad
    assert g.layout is ot.sparse_coo and g.sparse_dim() == 1 and g.dense_dim() == 1
    assert tuple(g.shape) == (7, 3)
    np.testing.assert_allclose(N(g.to_dense()), N(tg.to_dense()), rtol=1e-6, atol=1e-6)
    if padding_idx is not None:
        assert padding_idx not in g._indices().tolist()[0]


@pytest.mark.parametrize("make", [
    lambda lib, ps: lib.optim.SGD(ps, lr=0.1),
    lambda lib, ps: lib.optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.1),
    lambda lib, ps: lib.optim.SGD(ps, lr=0.05, momentum=0.8, nesterov=True, maximize=True),
    lambda lib, ps: lib.optim.Adagrad(ps, lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1),
    lambda lib, ps: lib.optim.SparseAdam(ps, lr=0.05, betas=(0.8, 0.9)),
    lambda lib, ps: lib.optim.SparseAdam(ps, lr=0.05, maximize=True),
], ids=["sgd", "sgd-momentum", "sgd-nesterov-maximize", "adagrad", "sparse-adam",
        "sparse-adam-maximize"])
def test_optimizers_with_sparse_gradients(device, make):
    ours, theirs = _embeddings(device)
    opt, topt = make(ot, ours.parameters()), make(torch, theirs.parameters())
    for _ in range(4):
        opt.zero_grad()
        topt.zero_grad()
        _loss(ours, ot, device).backward()
        _loss(theirs, torch, device).backward()
        opt.step()
        topt.step()
    np.testing.assert_allclose(N(ours.weight), N(theirs.weight), rtol=1e-5, atol=1e-6)


def test_zero_grad_in_place_keeps_a_sparse_gradient(device):
    ours, _ = _embeddings(device)
    opt = ot.optim.SGD(ours.parameters(), lr=0.1)
    _loss(ours, ot, device).backward()
    opt.zero_grad(set_to_none=False)
    assert ours.weight.grad.layout is ot.sparse_coo and ours.weight.grad._nnz() == 0


def test_optimizers_refuse_what_torch_refuses(device):
    ours, _ = _embeddings(device)
    _loss(ours, ot, device).backward()
    with pytest.raises(RuntimeError, match="weight_decay option is not compatible"):
        ot.optim.Adagrad(ours.parameters(), weight_decay=0.1).step()
    dense = ot.nn.Linear(2, 2).to(device)
    dense(ot.ones(1, 2, device=device)).sum().backward()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        ot.optim.SparseAdam(dense.parameters()).step()
    with pytest.raises(ValueError, match="Invalid learning rate"):
        ot.optim.SparseAdam(dense.parameters(), lr=0.0)


def test_library_product_equals_the_composite(device):
    """Where the backend has an spmm library routine (SciPy on cpu, cuSPARSE on cuda), it
    and the composite of index ops (what OpenCL and SYCL run) give the same product."""
    from omnitensor.core.sparse import matmul as sm
    be = ot.device(device).backend
    rng = np.random.default_rng(5)
    rows = ot.tensor(rng.integers(0, 30, 200), device=device)
    cols = ot.tensor(rng.integers(0, 20, 200), device=device)
    d = fdtype(device)
    vals = ot.tensor(rng.standard_normal(200), dtype=d, device=device)
    dense = ot.tensor(rng.standard_normal((20, 6)), dtype=d, device=device)
    native = sm._spmm_forward(rows, cols, vals, (30, 20), dense)
    ref = np.zeros((30, 6))
    np.add.at(ref, N(rows), N(vals)[:, None] * N(dense)[N(cols)])
    np.testing.assert_allclose(N(native), ref, rtol=1e-9 if d is ot.float64 else 1e-4,
                               atol=1e-9 if d is ot.float64 else 1e-4)
    # SciPy (a test dependency) on cpu, cuSPARSE on cuda; dpnp and OpenCL have none
    assert (be.hook("spmm") is not None) == (ot.device(device).type in ("cpu", "cuda"))
    composite = ot.zeros((30, 6), dtype=d, device=device).index_add(
        0, rows, vals.unsqueeze(1) * dense.index_select(0, cols))
    np.testing.assert_allclose(N(native), N(composite), rtol=1e-9 if d is ot.float64 else 1e-4)
