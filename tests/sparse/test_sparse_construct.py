"""Building sparse tensors and reading them back, against torch: sparse_coo_tensor,
sparse_csr/csc_tensor, to_sparse*/to_dense, coalesce, the accessors, layouts, devices,
and clear errors for bad components and unsupported layouts."""
import numpy as np
import pytest
import torch

import omnitensor as ot
from sparse_helpers import (INDICES, QUIET_TORCH, SHAPE, VALUES, N, dense_pair, fdtype, pair,
                            same_dense, same_sparse, tol)

pytestmark = QUIET_TORCH

DENSE = [[0.0, 1.5, 0.0, -2.0], [0.0, 0.0, 0.0, 0.0], [3.0, 0.0, 0.25, 0.0]]


def test_coo_metadata_and_accessors(device):
    s, t = pair(device)
    assert s.layout is ot.sparse_coo and repr(s.layout) == "omnitensor.sparse_coo"
    assert s.is_sparse and not s.is_sparse_csr and isinstance(s, ot.Tensor)
    assert tuple(s.shape) == SHAPE and s.size() == ot.Size(SHAPE) and s.size(1) == 4
    assert s.dim() == s.ndim == 2 and s.numel() == 12 and len(s) == 3
    assert str(s.device) == device and s.dtype is fdtype(device)
    assert s._nnz() == t._nnz() == 6 and s.sparse_dim() == 2 and s.dense_dim() == 0
    assert s.is_coalesced() is False and not s.is_contiguous()
    assert s._indices().tolist() == t._indices().tolist()
    np.testing.assert_array_equal(N(s._values()), N(t._values()))
    with pytest.raises(RuntimeError, match="uncoalesced tensor, please call .coalesce"):
        s.indices()
    c, tc = s.coalesce(), t.coalesce()
    assert c.is_coalesced() and c.coalesce() is c
    assert c.indices().tolist() == tc.indices().tolist()
    np.testing.assert_allclose(N(c.values()), N(tc.values()), rtol=tol(device))
    same_dense(s, t, tol(device))
    assert "indices=tensor(" in repr(s) and "nnz=6" in repr(s) and "layout=" in repr(s)


def test_size_is_inferred_and_hybrid_values(device):
    s = ot.sparse_coo_tensor(ot.tensor([[0, 2], [1, 4]], device=device),
                             ot.tensor([1.0, 2.0], device=device))
    t = torch.sparse_coo_tensor(torch.tensor([[0, 2], [1, 4]]), torch.tensor([1.0, 2.0]))
    assert tuple(s.shape) == tuple(t.shape) == (3, 5)
    vals = np.arange(6.0).reshape(2, 3)
    h = ot.sparse_coo_tensor([[0, 3]], ot.tensor(vals, device=device), (4, 3))
    th = torch.sparse_coo_tensor([[0, 3]], torch.tensor(vals), (4, 3))
    assert h.sparse_dim() == 1 and h.dense_dim() == 1
    same_sparse(h, th, 1e-12)
    empty = ot.sparse_coo_tensor(ot.zeros((2, 0), dtype=ot.int64, device=device),
                                 ot.zeros(0, device=device), (2, 2))
    assert empty._nnz() == 0 and N(empty.to_dense()).tolist() == [[0, 0], [0, 0]]


@pytest.mark.parametrize("sparse_dim", [None, 1, 2])
def test_dense_to_coo_and_back(device, sparse_dim):
    x, tx = dense_pair(device, DENSE)
    s = x.to_sparse(sparse_dim)
    ts = tx.to_sparse() if sparse_dim is None else tx.to_sparse(sparse_dim)
    assert s.is_coalesced() and s.sparse_dim() == ts.sparse_dim()
    same_sparse(s, ts, 0)
    np.testing.assert_array_equal(N(s.to_dense()), np.array(DENSE))
    assert x.to_dense() is x and x.sparse_dim() == 0 and x.dense_dim() == 2


@pytest.mark.parametrize("layout", ["csr", "csc"])
def test_compressed_from_dense_and_coo(device, layout):
    x, tx = dense_pair(device, DENSE)
    c = getattr(x, f"to_sparse_{layout}")()
    tc = getattr(tx, f"to_sparse_{layout}")()
    assert c.layout is getattr(ot, f"sparse_{layout}")
    assert c.is_sparse_csr == (layout == "csr") and not c.is_sparse
    same_sparse(c, tc, 0)
    s, ts = pair(device)
    same_sparse(getattr(s, f"to_sparse_{layout}")(), getattr(ts, f"to_sparse_{layout}")(),
                tol(device))
    same_sparse(c.to_sparse(), tc.to_sparse(), 0)
    same_sparse(c.to_sparse_coo(), tc.to_sparse_coo(), 0)
    same_sparse(x.to_sparse(layout=c.layout), tc, 0)
    assert c._nnz() == 4 and c.sparse_dim() == 2 and c.dense_dim() == 0


def test_csr_constructor_matches_torch(device):
    crow, col, val = [0, 2, 2, 4], [1, 3, 0, 2], [1.5, -2.0, 3.0, 0.25]
    c = ot.sparse_csr_tensor(ot.tensor(crow, device=device), ot.tensor(col, device=device),
                             ot.tensor(val, dtype=fdtype(device), device=device), (3, 4))
    tc = torch.sparse_csr_tensor(torch.tensor(crow), torch.tensor(col),
                                 torch.tensor(val, dtype=torch.float64), (3, 4))
    same_sparse(c, tc, 0)
    assert tuple(ot.sparse_csr_tensor(crow, col, val).shape) == (3, 4)
    cc = ot.sparse_csc_tensor([0, 1, 2, 3, 4], [2, 0, 2, 0], [3.0, 1.5, 0.25, -2.0], (3, 4))
    same_dense(cc, tc.to_dense(), 1e-6)
    with pytest.raises(RuntimeError, match="expected sparse row compressed tensor layout "
                                           "but got SparseCsc"):
        cc.crow_indices()
    assert "crow_indices=tensor(" in repr(c)


def test_bad_components_are_clear_errors(device):
    idx = ot.tensor([[0, 1], [1, 2]], device=device)
    v = ot.tensor([1.0, 2.0], device=device)
    with pytest.raises(IndexError, match="size is inconsistent with indices: for dim 0, "
                                         "size is 1 but found index 1"):
        ot.sparse_coo_tensor(idx, v, (1, 3))
    with pytest.raises(IndexError, match="negative index -1"):
        ot.sparse_coo_tensor(ot.tensor([[0, -1], [1, 2]], device=device), v, (3, 3))
    with pytest.raises(ValueError, match="same nnz"):
        ot.sparse_coo_tensor(idx, ot.tensor([1.0, 2.0, 3.0], device=device), (3, 3))
    with pytest.raises(ValueError, match="sparse_dim x nnz"):
        ot.sparse_coo_tensor(ot.tensor([0, 1], device=device), v, (3,))
    with pytest.raises(TypeError, match="integer tensor"):
        ot.sparse_coo_tensor(idx.float(), v, (3, 3))
    with pytest.raises(ValueError, match="not sorted and unique"):
        ot.sparse_coo_tensor(ot.tensor([[1, 0], [0, 0]], device=device), v, (3, 3),
                             is_coalesced=True)
    with pytest.raises(ValueError, match="must start at 0, end at nnz"):
        ot.sparse_csr_tensor([0, 1, 3], [0, 1], [1.0, 2.0], (2, 2))
    with pytest.raises(IndexError, match="negative index"):
        ot.sparse_csr_tensor([0, 1, 2], [0, -1], [1.0, 2.0], (2, 2))
    with pytest.raises(ValueError, match="does not fit"):
        ot.sparse_csr_tensor([0, 1, 2], [0, 3], [1.0, 2.0], (2, 2))
    if device != "cpu":
        with pytest.raises(ot.DeviceMismatchError):
            ot.sparse_coo_tensor(ot.tensor([[0], [1]]), ot.tensor([1.0], device=device))


def test_blocked_layouts_are_refused_naming_the_supported(device):
    x = ot.tensor(DENSE, device=device)
    for call in (lambda: x.to_sparse_bsr((1, 1)), lambda: x.to_sparse(blocksize=(1, 1)),
                 lambda: ot.sparse_bsr_tensor([0, 1], [0], ot.ones(1, 1, 1)),
                 lambda: ot.sparse_bsc_tensor([0, 1], [0], ot.ones(1, 1, 1)),
                 lambda: x.to_sparse(layout=ot.sparse_bsc)):
        with pytest.raises(NotImplementedError, match="sparse_coo, torch.sparse_csr and "
                                                      "torch.sparse_csc"):
            call()


def test_dense_tensors_refuse_sparse_accessors(device):
    x = ot.tensor(DENSE, device=device)
    tx = torch.tensor(DENSE)
    for name in ("indices", "coalesce", "crow_indices", "values", "_nnz"):
        with pytest.raises(RuntimeError, match="layout but got Strided"):
            getattr(x, name)()
        with pytest.raises(RuntimeError):  # torch: the same error (for _nnz: no kernel)
            getattr(tx, name)()


def test_to_device_dtype_clone_detach(device):
    s, t = pair(device, requires_grad=True)
    moved = s.to("cpu")
    assert str(moved.device) == "cpu" and str(moved._indices().device) == "cpu"
    same_sparse(moved, t, tol(device))
    back = moved.to(device)
    assert str(back.device) == device and back.to(device) is back
    assert s.cpu().layout is ot.sparse_coo and s.float().dtype is ot.float32
    assert s.to(ot.float32).dtype is ot.float32 and s.double().layout is ot.sparse_coo
    c = s.clone()
    assert c.requires_grad and c.grad_fn is not None and not c.is_leaf
    assert c._values().tolist() == s._values().tolist()
    d = s.detach()
    assert not d.requires_grad and d.grad_fn is None
    assert s.is_leaf and s.requires_grad and s.grad_fn is None
    csr = s.detach().to_sparse_csr()
    same_sparse(csr.to("cpu"), t.detach().to_sparse_csr(), tol(device))
    assert csr.clone().layout is ot.sparse_csr and ot.clone(csr).layout is ot.sparse_csr


def test_values_alias_and_requires_grad(device):
    v = ot.tensor(VALUES, dtype=fdtype(device), device=device)
    s = ot.sparse_coo_tensor(ot.tensor(INDICES, device=device), v, SHAPE)
    v.mul_(2)  # torch: the sparse tensor's values share memory with the given tensor
    assert s._values().tolist() == v.tolist()
    s.requires_grad_()
    assert s.requires_grad and not v.requires_grad and s.is_leaf
    vg = ot.tensor(VALUES, dtype=fdtype(device), device=device, requires_grad=True)
    s2 = ot.sparse_coo_tensor(ot.tensor(INDICES, device=device), vg, SHAPE)
    assert s2.requires_grad and not s2.is_leaf
    with pytest.raises(RuntimeError, match="floating point"):
        ot.sparse_coo_tensor([[0]], [1], (2,)).requires_grad_()


def test_spdiags_matches_torch(device):
    diags = np.arange(1.0, 13.0).reshape(3, 4)
    d, td = dense_pair(device, diags)
    # shapes where torch 2.13 stays in bounds (for (2, 5) with offset 1 it stores (2, 3),
    # outside the matrix; omnitensor keeps to the shape)
    for offsets, shape in (([0, 1, -1], (3, 4)), ([0, -2, 2], (4, 4)), ([1], (3, 5)),
                           ([2], (3, 4))):
        k = len(offsets)
        ours = ot.sparse.spdiags(d[:k], ot.tensor(offsets, device=device), shape)
        theirs = torch.sparse.spdiags(td[:k], torch.tensor(offsets), shape)
        same_sparse(ours, theirs, 0)
    csr = ot.sparse.spdiags(d, ot.tensor([0, 1, -1]), (3, 4), layout=ot.sparse_csr)
    same_sparse(csr, torch.sparse.spdiags(td, torch.tensor([0, 1, -1]), (3, 4),
                                          layout=torch.sparse_csr), 0)
    with pytest.raises(ValueError, match="duplicate"):
        ot.sparse.spdiags(d[:2], ot.tensor([1, 1]), (3, 4))
    narrow = ot.sparse.spdiags(d[:1], ot.tensor([1]), (2, 5)).coalesce()
    assert narrow._indices().tolist() == [[0, 1], [1, 2]]


def test_sparse_mask(device):
    x, tx = dense_pair(device, np.arange(12.0).reshape(3, 4))
    s, t = pair(device)
    same_sparse(x.sparse_mask(s), tx.sparse_mask(t.coalesce()), 0)
    c, tc = s.to_sparse_csr(), t.to_sparse_csr()
    same_sparse(x.sparse_mask(c), tx.sparse_mask(tc), 0)
