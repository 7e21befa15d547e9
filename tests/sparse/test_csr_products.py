"""torch.sparse.sampled_addmm and torch.sparse.mm(csr, dense, reduce) against torch, values
and gradients (of the dense operands and the CSR's stored values), on every device; torch's
refusals (a non-CSR input, a bad reduction, mismatched shapes or dtypes)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import omnitensor as ot

from sparse_helpers import QUIET_TORCH, fdtype, tdtype, tol

pytestmark = QUIET_TORCH

#: a 3x4 CSR pattern with an empty row (row 1)
DENSE = [[1.0, 0, 2, 0], [0, 0, 0, 0], [0, 3, -1, 0.5]]


def _csr_pair(device, requires_grad=True):
    """The same CSR matrix in torch and omnitensor; its stored values are leaves."""
    d = fdtype(device)
    t = torch.tensor(DENSE, dtype=tdtype(d)).to_sparse_csr()
    tv = t.values().detach().clone().requires_grad_(requires_grad)
    ts = torch.sparse_csr_tensor(t.crow_indices(), t.col_indices(), tv, t.shape)
    ov = ot.tensor(tv.detach().numpy(), device=device, requires_grad=requires_grad)
    os_ = ot.sparse_csr_tensor(ot.tensor(t.crow_indices().numpy(), device=device),
                               ot.tensor(t.col_indices().numpy(), device=device), ov, t.shape)
    return (os_, ov), (ts, tv)


def _dense_pair(device, shape, seed):
    a = np.random.default_rng(seed).standard_normal(shape)
    d = fdtype(device)
    return (ot.tensor(a, dtype=d, device=device, requires_grad=True),
            torch.tensor(a, dtype=tdtype(d), requires_grad=True))


def _close(o, t, device):
    np.testing.assert_allclose(o.detach().cpu().numpy(), t.detach().numpy(),
                               rtol=tol(device), atol=tol(device))


@pytest.mark.parametrize("beta,alpha", [(1.0, 1.0), (0.5, 2.0), (0.0, -1.5)])
def test_sampled_addmm_matches_torch(device, beta, alpha):
    (os_, ov), (ts, tv) = _csr_pair(device)
    (o1, t1), (o2, t2) = _dense_pair(device, (3, 5), 0), _dense_pair(device, (5, 4), 1)
    o = ot.sparse.sampled_addmm(os_, o1, o2, beta=beta, alpha=alpha)
    t = torch.sparse.sampled_addmm(ts, t1, t2, beta=beta, alpha=alpha)
    assert o.layout is ot.sparse_csr
    assert o.crow_indices().tolist() == t.crow_indices().tolist()
    assert o.col_indices().tolist() == t.col_indices().tolist()
    _close(o.values(), t.values(), device)
    w = np.arange(t.values().shape[0], dtype=np.float64) - 1.5  # a non-uniform cotangent
    (o.values() * ot.tensor(w, dtype=o.dtype, device=device)).sum().backward()
    (t.values() * torch.tensor(w, dtype=t.dtype)).sum().backward()
    for og, tg in ((o1.grad, t1.grad), (o2.grad, t2.grad)):
        _close(og, tg, device)
    if beta != 0:  # torch gives no gradient to input's values when beta == 0
        _close(ov.grad, tv.grad, device)


def test_sampled_addmm_refuses_what_torch_refuses(device):
    (os_, _), _ = _csr_pair(device, requires_grad=False)
    a = ot.ones(3, 5, dtype=os_.dtype, device=device)
    b = ot.ones(5, 4, dtype=os_.dtype, device=device)
    with pytest.raises(RuntimeError, match="sparse CSR"):
        ot.sparse.sampled_addmm(os_.to_dense(), a, b)
    with pytest.raises(RuntimeError, match="strided layout"):
        ot.sparse.sampled_addmm(os_, a.to_sparse(), b)
    with pytest.raises(ValueError, match="cannot be multiplied"):
        ot.sparse.sampled_addmm(os_, a[:, :4], b)
    with pytest.raises(RuntimeError, match="same dtype"):
        ot.sparse.sampled_addmm(os_, a.to(ot.int64), b)


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin"])
def test_mm_reduce_matches_torch(device, reduce):
    (os_, ov), (ts, tv) = _csr_pair(device)
    od, td = _dense_pair(device, (4, 2), 2)
    o, t = ot.sparse.mm(os_, od, reduce), torch.sparse.mm(ts, td, reduce)
    _close(o, t, device)  # the empty row is 0 in both
    w = np.arange(6, dtype=np.float64).reshape(3, 2)
    (o * ot.tensor(w, dtype=o.dtype, device=device)).sum().backward()
    (t * torch.tensor(w, dtype=t.dtype)).sum().backward()
    _close(od.grad, td.grad, device)
    _close(ov.grad, tv.grad, device)


def test_mm_reduce_refuses_what_torch_refuses(device):
    (os_, _), (ts, _) = _csr_pair(device, requires_grad=False)
    od = ot.ones(4, 2, dtype=os_.dtype, device=device)
    with pytest.raises(RuntimeError, match="sum, mean, amax or amin, got max"):
        ot.sparse.mm(os_, od, "max")
    with pytest.raises(RuntimeError):  # torch: no reduction kernel for a COO operand
        torch.sparse.mm(ts.to_sparse_coo(), torch.ones(4, 2, dtype=ts.dtype), "amax")
    with pytest.raises(NotImplementedError, match="to_sparse_csr"):
        ot.sparse.mm(os_.to_sparse_coo(), od, "amax")
