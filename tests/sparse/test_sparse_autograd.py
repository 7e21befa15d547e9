"""Gradients through sparse ops against torch and against finite differences: to the dense
operand of a product, to the values a sparse tensor was built from, and to a sparse leaf
(COO: a sparse gradient on the coalesced pattern; CSR: a dense gradient, as torch)."""
import numpy as np
import pytest
import torch

import omnitensor as ot
from omnitensor.autograd import gradcheck, gradgradcheck
from sparse_helpers import (INDICES, QUIET_TORCH, SHAPE, VALUES, N, dense_pair, fdtype, pair,
                            same_sparse, tol)

pytestmark = QUIET_TORCH

X = np.random.default_rng(0).standard_normal((4, 5))
Y = np.random.default_rng(1).standard_normal((2, 3))


def _close(a, b, device):
    np.testing.assert_allclose(N(a), N(b), rtol=tol(device) * 10, atol=tol(device) * 10)


@pytest.mark.parametrize("coalesced", [False, True])
def test_sparse_mm_grads_to_dense_and_sparse_leaf(device, coalesced):
    s, t = pair(device, requires_grad=True)
    if coalesced:
        s = s.detach().coalesce().requires_grad_()
        t = t.detach().coalesce().requires_grad_()
    x, tx = dense_pair(device, X, requires_grad=True)
    (ot.sparse.mm(s, x) ** 2).sum().backward()
    (torch.sparse.mm(t, tx) ** 2).sum().backward()
    _close(x.grad, tx.grad, device)
    assert s.grad.layout is ot.sparse_coo and s.grad.shape == s.shape
    same_sparse(s.grad, t.grad, tol(device) * 10)
    s.grad = None
    assert s.grad is None


def test_values_grads_through_every_op(device):
    x, tx = dense_pair(device, X, requires_grad=True)
    y, ty = dense_pair(device, Y, requires_grad=True)
    d, td = dense_pair(device, X[:3, :4] * 2, requires_grad=True)
    cases = [
        lambda sp, x, y, d: (sp.to_dense() ** 2).sum(),
        lambda sp, x, y, d: ((sp @ x).sin()).sum(),
        lambda sp, x, y, d: ((y @ sp) ** 2).sum(),
        lambda sp, x, y, d: (sp.coalesce().values() ** 3).sum(),
        lambda sp, x, y, d: ((sp * d).to_dense() ** 2).sum(),
        lambda sp, x, y, d: ((d + sp) ** 2).sum(),
        lambda sp, x, y, d: (((sp + sp * 2) @ x) ** 2).sum(),
        lambda sp, x, y, d: (sp.abs() @ x).sum(),
        lambda sp, x, y, d: (sp.t() @ y.t()).pow(2).sum(),
        lambda sp, x, y, d: sp.sum() * 3,
        lambda sp, x, y, d: (sp ** 2).to_dense().sum(),
        lambda sp, x, y, d: (sp @ sp.t()).to_dense().pow(2).sum(),
    ]
    for fn in cases:
        v, tv = dense_pair(device, VALUES, requires_grad=True)
        sp = ot.sparse_coo_tensor(ot.tensor(INDICES, device=device), v, SHAPE)
        tsp = torch.sparse_coo_tensor(torch.tensor(INDICES), tv, SHAPE)
        fn(sp, x, y, d).backward()
        fn(tsp, tx, ty, td).backward()
        _close(v.grad, tv.grad, device)
    for ours, theirs in ((x, tx), (y, ty), (d, td)):
        _close(ours.grad, theirs.grad, device)


@pytest.mark.parametrize("dim", [0, 1])
def test_softmax_and_sum_grads(device, dim):
    v, tv = dense_pair(device, VALUES, requires_grad=True)
    sp = ot.sparse_coo_tensor(ot.tensor(INDICES, device=device), v, SHAPE)
    tsp = torch.sparse_coo_tensor(torch.tensor(INDICES), tv, SHAPE)
    w, tw = dense_pair(device, np.arange(12.0).reshape(SHAPE))
    (ot.sparse.log_softmax(sp, dim).to_dense() * w).sum().backward()
    (torch.sparse.log_softmax(tsp, dim).to_dense() * tw).sum().backward()
    _close(v.grad, tv.grad, device)
    v.grad, tv.grad = None, None
    sp = ot.sparse_coo_tensor(ot.tensor(INDICES, device=device), v, SHAPE)
    tsp = torch.sparse_coo_tensor(torch.tensor(INDICES), tv, SHAPE)
    (ot.sparse.sum(sp, dim).to_dense() ** 2).sum().backward()
    (torch.sparse.sum(tsp, dim).to_dense() ** 2).sum().backward()
    _close(v.grad, tv.grad, device)


def _stored(grad, mask):
    """``grad`` at the stored positions of ``mask`` (zero elsewhere)."""
    return N(grad) * (N(mask) != 0)


def test_csr_leaf_gets_a_dense_gradient(device):
    s, t = pair(device)
    c = s.coalesce().to_sparse_csr().requires_grad_()
    tc = t.coalesce().to_sparse_csr().requires_grad_()
    x, tx = dense_pair(device, X, requires_grad=True)
    ((c @ x) ** 2).sum().backward()
    ((tc @ tx) ** 2).sum().backward()
    assert c.grad.layout is ot.strided and tc.grad.layout is torch.strided
    # omnitensor's gradient lives on the stored entries (the values are what is
    # differentiated); torch's dense one also fills the unstored positions (docs/sparse.md)
    dense = c.detach().to_dense()
    np.testing.assert_allclose(N(c.grad), _stored(tc.grad, dense), rtol=tol(device) * 10,
                               atol=tol(device) * 10)
    _close(x.grad, tx.grad, device)


def test_dense_to_sparse_grad_reaches_the_dense_tensor(device):
    a, ta = dense_pair(device, [[0.0, 2.0, 0.0], [1.0, 0.0, -3.0]], requires_grad=True)
    x, tx = dense_pair(device, X[:3, :2])
    ((a.to_sparse() @ x) ** 2).sum().backward()
    ((ta.to_sparse() @ tx) ** 2).sum().backward()
    # at the nonzero entries as torch; zero where a is zero (see the CSR test above)
    np.testing.assert_allclose(N(a.grad), _stored(ta.grad, a.detach()),
                               rtol=tol(device) * 10,
                               atol=tol(device) * 10)


def test_gradcheck_against_finite_differences(device):
    if fdtype(device) is not ot.float64:
        pytest.skip("gradcheck needs float64")
    idx = ot.tensor(INDICES, device=device)
    v = ot.tensor(VALUES, dtype=ot.float64, device=device, requires_grad=True)
    x = ot.tensor(X, dtype=ot.float64, device=device, requires_grad=True)

    def mm(v, x):
        return ot.sparse.mm(ot.sparse_coo_tensor(idx, v, SHAPE), x)

    def softmax(v):
        return ot.sparse.softmax(ot.sparse_coo_tensor(idx, v, SHAPE), 1).to_dense()

    def spgemm(v):
        s = ot.sparse_coo_tensor(idx, v, SHAPE)
        return (s @ s.t()).to_dense()

    assert gradcheck(mm, (v, x), eps=1e-6, atol=1e-6)
    assert gradcheck(softmax, (v,), eps=1e-6, atol=1e-6)
    assert gradcheck(spgemm, (v,), eps=1e-6, atol=1e-6)
    assert gradgradcheck(mm, (v, x), eps=1e-6, atol=1e-5)


def test_grad_dtype_matches_values(device):
    s, t = pair(device, requires_grad=True)
    x32 = ot.tensor(X, dtype=ot.float32, device=device)
    out = s @ x32  # promoted to the wider dtype, as the dense rule
    assert out.dtype is ot.promote_types(fdtype(device), ot.float32)
    out.sum().backward()
    assert s.grad.dtype is s.dtype
