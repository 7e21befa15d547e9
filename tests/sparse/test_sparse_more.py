"""torch's legacy COO names against torch, entry by entry (stored layout included):
``smm``/``sspaddmm`` (uncoalesced: ``input``'s entries, then every column of each row where
``mat1`` has entries) and the in-place resizes ``sparse_resize_``,
``sparse_resize_and_clear_`` and ``resize_as_sparse_`` with torch's refusals."""
import numpy as np
import pytest
import torch

import omnitensor as ot
import omnitensor.torch_face as face
from sparse_helpers import QUIET_TORCH, N, dense_pair, fdtype, pair, tdtype, tol

pytestmark = QUIET_TORCH

MAT = [[0.5, -1.0], [0.0, 0.0], [2.0, 0.25], [1.5, -0.5]]
BASE = ([[1, 0, 1], [1, 1, 1]], [1.0, 2.0, 3.0], (3, 2))


def _empty(device, shape):
    """An empty COO tensor of ``shape`` in omnitensor and in torch (the tests' dtype)."""
    sd, d = len(shape), fdtype(device)
    return (ot.sparse_coo_tensor(ot.zeros((sd, 0), dtype=ot.int64, device=device),
                                 ot.zeros(0, dtype=d, device=device), shape),
            torch.sparse_coo_tensor(torch.zeros((sd, 0), dtype=torch.long),
                                    torch.zeros(0, dtype=tdtype(d)), shape))


def _stored(ours, theirs, tolerance):
    """The same stored entries in the same order, and the same coalesced flag."""
    assert ours.layout is ot.sparse_coo and theirs.layout is torch.sparse_coo
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert (ours.sparse_dim(), ours.dense_dim()) == (theirs.sparse_dim(), theirs.dense_dim())
    assert ours._indices().tolist() == theirs._indices().tolist()
    np.testing.assert_allclose(N(ours._values()), N(theirs._values()), rtol=tolerance,
                               atol=tolerance)
    assert ours.is_coalesced() == theirs.is_coalesced()


@pytest.mark.parametrize("fn", ["torch", "method"])
def test_smm_equals_torch(device, fn):
    s, t = pair(device)
    d, td = dense_pair(device, MAT)
    ours = face.smm(s, d) if fn == "torch" else s.smm(d)
    _stored(ours, torch.smm(t, td) if fn == "torch" else t.smm(td), tol(device))


@pytest.mark.parametrize("beta,alpha", [(1, 1), (2, -0.5), (0, 3)])
def test_sspaddmm_equals_torch(device, beta, alpha):
    s, t = pair(device)
    d, td = dense_pair(device, MAT)
    b, tb = pair(device, *BASE)
    _stored(face.sspaddmm(b, s, d, beta=beta, alpha=alpha),
            torch.sspaddmm(tb, t, td, beta=beta, alpha=alpha), tol(device))
    _stored(b.sspaddmm(s, d, beta=beta, alpha=alpha),
            tb.sspaddmm(t, td, beta=beta, alpha=alpha), tol(device))
    out, tout = pair(device, [[0], [0]], [9.0], (3, 2))
    assert face.sspaddmm(b, s, d, beta=beta, alpha=alpha, out=out) is out
    _stored(out, torch.sspaddmm(tb, t, td, beta=beta, alpha=alpha, out=tout), tol(device))


def test_smm_of_an_empty_matrix_equals_torch(device):
    e, te = _empty(device, (3, 4))
    d, td = dense_pair(device, MAT)
    _stored(e.smm(d), te.smm(td), 0)


def test_smm_sspaddmm_refuse_as_torch(device):
    s, t = pair(device)
    d, td = dense_pair(device, MAT)
    b, tb = pair(device, *BASE)
    cases = [lambda m, S, D, B: m.smm(D, D), lambda m, S, D, B: m.smm(S, S),
             lambda m, S, D, B: m.smm(S, D[:2]), lambda m, S, D, B: m.sspaddmm(B, D, D),
             lambda m, S, D, B: m.sspaddmm(B, S, D[:, :1])]
    for case in cases:
        with pytest.raises(RuntimeError):
            case(torch, t, td, tb)
        with pytest.raises(RuntimeError):
            case(face, s, d, b)
    if ot.device(device).supports_dtype(ot.float64):
        with pytest.raises(RuntimeError, match="expected scalar type"):
            face.smm(s, d.float() if d.dtype is ot.float64 else d.double())


def test_sparse_resize_grows_as_torch(device):
    s, t = pair(device)
    assert s.sparse_resize_((5, 6), 2, 0) is s
    _stored(s, t.sparse_resize_((5, 6), 2, 0), tol(device))
    c, tc = pair(device)
    c, tc = c.coalesce(), tc.coalesce()
    _stored(c.sparse_resize_([4, 4], 2, 0), tc.sparse_resize_([4, 4], 2, 0), tol(device))
    h, th = (x.sparse_coo_tensor(x.tensor([[0, 2]]), x.tensor([[1.0, 2.0], [3.0, 4.0]]),
                                 (3, 2)) for x in (ot, torch))
    h = h.to(device)
    before = N(th._values())
    h.sparse_resize_((4, 3), 1, 1)
    th = th.clone().sparse_resize_((4, 3), 1, 1)  # a clone: resizable values
    assert tuple(h.shape) == tuple(th.shape) and h._values().shape == th._values().shape
    assert h._indices().tolist() == th._indices().tolist()
    # torch reinterprets the values' memory (new positions uninitialized): here they are
    # the old values with zeros in the new positions
    np.testing.assert_array_equal(N(h._values()), np.pad(before, [(0, 0), (0, 1)]))


def test_sparse_resize_of_an_empty_tensor_takes_any_size(device):
    e, te = _empty(device, (3, 4))
    _stored(e.sparse_resize_((1, 5, 3), 1, 2), te.sparse_resize_((1, 5, 3), 1, 2), 0)
    assert e._values().shape == (0, 5, 3)


@pytest.mark.parametrize("size,sd,dd", [((1, 4), 2, 0), ((3, 4, 2), 2, 1), ((3, 4, 2), 3, 0),
                                         ((3, 4, 2), 2, 0), ((3, -1), 2, 0)])
def test_sparse_resize_refuses_as_torch(device, size, sd, dd):
    s, t = pair(device)
    with pytest.raises(RuntimeError) as theirs:
        t.sparse_resize_(size, sd, dd)
    with pytest.raises(RuntimeError) as ours:
        s.sparse_resize_(size, sd, dd)
    assert str(ours.value).splitlines()[0] == str(theirs.value).splitlines()[0]


def test_sparse_resize_and_clear_equals_torch(device):
    s, t = pair(device)
    assert s.sparse_resize_and_clear_((3, 4, 5), 2, 1) is s
    _stored(s, t.sparse_resize_and_clear_((3, 4, 5), 2, 1), 0)
    s, t = pair(device)
    _stored(s.sparse_resize_and_clear_((2, 2), 0, 2), t.sparse_resize_and_clear_((2, 2), 0, 2),
            0)
    with pytest.raises(RuntimeError):
        t.sparse_resize_and_clear_((3, 4, 5), 2, 0)
    with pytest.raises(RuntimeError):
        s.sparse_resize_and_clear_((3, 4, 5), 2, 0)


def test_resize_as_sparse_equals_torch(device):
    s, t = pair(device)
    big, tbig = pair(device, [[0, 4], [1, 0]], [1.0, 2.0], (5, 5))
    assert face.resize_as_sparse_(s, big) is s
    _stored(s, torch.resize_as_sparse_(t, tbig), tol(device))
    e, te = _empty(device, (3, 4))
    hyb, thyb = (x.sparse_coo_tensor(x.tensor([[0], [1]]), x.tensor([[5.0, 6.0]]), (3, 3, 2))
                 for x in (ot, torch))
    _stored(e.resize_as_sparse_(hyb.to(device)), te.resize_as_sparse_(thyb), 0)
    s, t = pair(device)
    for template, ttemplate in ((hyb.to(device), thyb), (ot.ones(3, 3, device=device),
                                                        torch.ones(3, 3))):
        with pytest.raises(RuntimeError):
            t.resize_as_sparse_(ttemplate)
        with pytest.raises(RuntimeError):
            s.resize_as_sparse_(template)


def test_resizes_refuse_dense_tensors_and_grad_leaves(device):
    for fn in (lambda x: x.sparse_resize_((3,), 1, 0),
               lambda x: x.sparse_resize_and_clear_((3,), 1, 0)):
        with pytest.raises(NotImplementedError):
            fn(torch.ones(2))
        with pytest.raises(NotImplementedError):
            fn(ot.ones(2, device=device))
    s, t = pair(device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        t.sparse_resize_((3, 5), 2, 0)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        s.sparse_resize_((3, 5), 2, 0)
