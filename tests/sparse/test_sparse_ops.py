"""Ops on sparse tensors against torch, value by value: elementwise ops that keep sparsity
(and the ones torch refuses), products in every form, sums, softmax, transposes, the
module functions (torch.add, torch.mm...) reaching the same implementations as the
methods, and dense-only ops refusing sparse operands with a clear error."""
import numpy as np
import pytest
import torch

import omnitensor as ot
from sparse_helpers import (QUIET_TORCH, SHAPE, N, dense_pair, pair, same_dense, same_sparse,
                            tol)

pytestmark = QUIET_TORCH

DENSE_B = np.array([[0.5, -1.0, 2.0, 0.0], [1.5, 0.25, -0.5, 3.0], [-2.0, 0.0, 1.0, 0.75]])


@pytest.mark.parametrize("op", [
    lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a.add(b, alpha=2),
    lambda a, b: a.sub(b, alpha=0.5), lambda a, b: a.mul(b)])
def test_sparse_sparse_elementwise(device, op):
    s, t = pair(device)
    s2, t2 = pair(device, [[1, 2, 0], [0, 3, 2]], [2.0, -1.0, 4.0])
    same_sparse(op(s, s2), op(t, t2), tol(device))
    c, tc = s.coalesce(), t.coalesce()
    out, tout = op(c, s2.coalesce()), op(tc, t2.coalesce())
    same_sparse(out, tout, tol(device))
    assert out.is_coalesced() == tout.is_coalesced()


@pytest.mark.parametrize("op", [
    lambda s, d: s * d, lambda s, d: d * s, lambda s, d: s * 2.5, lambda s, d: -3 * s,
    lambda s, d: s / 4, lambda s, d: s * d[:, :1], lambda s, d: s ** 2, lambda s, d: s.pow(3),
    lambda s, d: -s, lambda s, d: +s, lambda s, d: s.mul(d[0, 0]), lambda s, d: s.div(2)])
def test_sparse_with_dense_or_scalar_stays_sparse(device, op):
    s, t = pair(device)
    d, td = dense_pair(device, DENSE_B)
    same_sparse(op(s, d), op(t, td), tol(device))


@pytest.mark.parametrize("op", [
    lambda s, d: d + s, lambda s, d: d - s, lambda s, d: d.add(s, alpha=-2),
    lambda s, d: d.sub(s)])
def test_dense_plus_sparse_is_dense(device, op):
    s, t = pair(device)
    d, td = dense_pair(device, DENSE_B)
    out = op(s, d)
    assert out.layout is ot.strided
    same_dense(out, op(t, td), tol(device))


@pytest.mark.parametrize("name", ["abs", "sqrt", "sin", "tan", "tanh", "asin", "atan", "sinh",
                                  "asinh", "atanh", "erf", "expm1", "log1p", "sign", "sgn",
                                  "floor", "ceil", "round", "trunc", "frac", "square", "relu",
                                  "deg2rad", "rad2deg", "neg", "isnan", "signbit"])
def test_zero_preserving_unary(device, name):
    s, t = pair(device)
    if name in ("sqrt", "asin", "atanh"):
        s, t = s.abs(), t.abs()
    out, tout = getattr(s, name)(), getattr(t, name)()
    assert out.is_coalesced() == tout.is_coalesced()
    if tout.dtype is torch.bool:
        assert N(out.to_dense()).tolist() == N(tout.to_dense()).tolist()
    else:
        same_sparse(out, tout, tol(device))
    if hasattr(ot, name) and name not in ("sgn", "frac", "deg2rad", "rad2deg"):
        same_dense(getattr(ot, name)(s), tout, tol(device))  # the module function


def test_unary_on_csr_keeps_layout(device):
    s, t = pair(device)
    c, tc = s.abs().to_sparse_csr(), t.abs().to_sparse_csr()
    for name in ("abs", "neg", "sin", "relu", "sqrt"):
        same_sparse(getattr(c, name)(), getattr(tc, name)(), tol(device))
    same_sparse(c * 2, tc * 2, tol(device))
    same_sparse(c + c, tc + tc, tol(device))


def test_inplace_ops(device):
    s, t = pair(device)
    d, td = dense_pair(device, DENSE_B)
    a, ta = s.clone(), t.clone()
    a.mul_(2)
    ta.mul_(2)
    a.div_(4)
    ta.div_(4)
    a.neg_()
    ta.neg_()
    a += s
    ta += t
    a.sub_(s, alpha=3)
    ta.sub_(t, alpha=3)
    same_sparse(a, ta, tol(device))
    c, tc = s.coalesce(), t.coalesce()
    c.abs_()
    tc.abs_()
    same_sparse(c, tc, tol(device))
    with pytest.raises(RuntimeError, match="abs_ requires coalesced input"):
        s.clone().abs_()
    d2, td2 = d.clone(), td.clone()
    d2.add_(s, alpha=-0.5)
    td2.add_(t, alpha=-0.5)
    d2 += s
    td2 += t
    same_dense(d2, td2, tol(device))
    z = s.clone().zero_()
    assert z._nnz() == 0 and N(z.to_dense()).tolist() == np.zeros(SHAPE).tolist()


def test_module_functions_dispatch(device):
    s, t = pair(device)
    d, td = dense_pair(device, DENSE_B)
    same_sparse(ot.add(s, s), torch.add(t, t), tol(device))
    same_sparse(ot.mul(s, 3), torch.mul(t, 3), tol(device))
    same_sparse(ot.mul(d, s), torch.mul(td, t), tol(device))
    same_sparse(ot.neg(s), torch.neg(t), tol(device))
    same_sparse(ot.div(s, 2), torch.div(t, 2), tol(device))
    same_dense(ot.add(d, s), torch.add(td, t), tol(device))
    same_dense(ot.sum(s), torch.sum(t), tol(device))
    same_sparse(ot.t(s), torch.t(t), tol(device))
    same_sparse(ot.transpose(s, 0, 1), torch.transpose(t, 0, 1), tol(device))
    same_sparse(ot.clone(s), torch.clone(t), tol(device))


@pytest.mark.parametrize("layout", ["coo", "csr", "csc"])
def test_products(device, layout):
    s, t = pair(device)
    if layout != "coo":
        s, t = getattr(s, f"to_sparse_{layout}")(), getattr(t, f"to_sparse_{layout}")()
    x, tx = dense_pair(device, np.random.default_rng(0).standard_normal((4, 5)))
    y, ty = dense_pair(device, np.random.default_rng(1).standard_normal((2, 3)))
    v, tv = dense_pair(device, [1.0, -2.0, 0.5, 3.0])
    pairs = [(s @ x, t @ tx), (ot.mm(s, x), torch.mm(t, tx)), (ot.matmul(s, x), torch.matmul(t, tx)),
             (ot.sparse.mm(s, x), torch.sparse.mm(t, tx)), (ot.spmm(s, x), torch.spmm(t, tx)),
             (y @ s, ty @ t), (s @ v, t @ tv), (s.mv(v), t.mv(tv)), (s.mm(x), t.mm(tx))]
    for ours, theirs in pairs:
        assert ours.layout is ot.strided
        same_dense(ours, theirs, tol(device))
    m, tm = dense_pair(device, np.random.default_rng(4).standard_normal((3, 5)))
    same_dense(ot.sparse.addmm(m, s, x, beta=0.5, alpha=2),
               torch.sparse.addmm(tm, t, tx, beta=0.5, alpha=2), tol(device))
    nan = m * float("nan")
    same_dense(ot.sparse.addmm(nan, s, x, beta=0), t @ tx, tol(device))  # beta=0: not read


def test_sparse_times_sparse(device):
    s, t = pair(device)
    s2, t2 = pair(device, [[0, 3, 2, 3, 0], [1, 0, 2, 0, 1]], [1.0, 2.0, -1.0, 0.5, 4.0],
                  (4, 3))
    out, tout = s @ s2, t @ t2
    assert out.layout is ot.sparse_coo and out.is_coalesced()
    same_sparse(out, tout, tol(device))
    same_sparse(ot.sparse.mm(s, s2), torch.sparse.mm(t, t2), tol(device))
    c, tc = s.to_sparse_csr() @ s2.to_sparse_csr(), t.to_sparse_csr() @ t2.to_sparse_csr()
    assert c.layout is ot.sparse_csr
    # torch leaves the columns of a row unsorted here (and its COO of that keeps them so);
    # omnitensor's are sorted: the same matrix
    same_dense(c, tc, tol(device))
    assert c.col_indices().tolist() == [2, 0, 1, 0]


def test_batched_coo_times_dense(device):
    idx = [[0, 0, 1, 1, 1], [0, 2, 1, 1, 0], [1, 0, 2, 2, 3]]
    s, t = pair(device, idx, [1.0, -2.0, 0.5, 1.5, 3.0], (2, 3, 4))
    x, tx = dense_pair(device, np.random.default_rng(2).standard_normal((2, 4, 3)))
    same_dense(ot.bmm(s, x), torch.bmm(t, tx), tol(device))
    same_dense(s @ x, torch.bmm(t, tx), tol(device))


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), -1])
def test_sum(device, dim):
    s, t = pair(device)
    ours = ot.sparse.sum(s) if dim is None else ot.sparse.sum(s, dim)
    theirs = torch.sparse.sum(t) if dim is None else torch.sparse.sum(t, dim)
    assert (ours.layout is ot.strided) == (theirs.layout is torch.strided)
    if theirs.layout is torch.strided:
        same_dense(ours, theirs, tol(device))
    else:
        same_sparse(ours, theirs, tol(device))
    if isinstance(dim, int):
        same_sparse(s.sum(dim, keepdim=True), t.sum(dim, keepdim=True), tol(device))


def test_hybrid_sum_and_int_dtype(device):
    vals = np.arange(12.0).reshape(3, 4) - 5
    s, t = pair(device, [[0, 2, 0], [1, 0, 1]], vals, (3, 3, 4))
    for dim in (0, 2, (0, 1), (0, 2)):
        ours, theirs = ot.sparse.sum(s, dim), torch.sparse.sum(t, dim)
        (same_dense if theirs.layout is torch.strided else same_sparse)(ours, theirs,
                                                                        tol(device))
    i = ot.sparse_coo_tensor([[0, 1]], ot.tensor([2, 3], dtype=ot.int32, device=device), (3,))
    assert ot.sparse.sum(i).dtype is ot.int64 and ot.sparse.sum(i).item() == 5
    assert ot.sparse.sum(s, dtype=ot.float32).dtype is ot.float32


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("log", [False, True])
def test_sparse_softmax(device, dim, log):
    s, t = pair(device)
    fn, tfn = (ot.sparse.log_softmax, torch.sparse.log_softmax) if log else \
        (ot.sparse.softmax, torch.sparse.softmax)
    out, tout = fn(s, dim), tfn(t, dim)
    assert out.is_coalesced()
    same_sparse(out, tout, tol(device))
    vals = np.random.default_rng(3).standard_normal((3, 2)) * 40  # large: needs the shift
    h, th = pair(device, [[0, 2, 2], [1, 0, 1]], vals, (3, 3, 2))
    same_sparse(fn(h, dim), tfn(th, dim), tol(device))


def test_transpose_permute(device):
    s, t = pair(device)
    same_sparse(s.t(), t.t(), tol(device))
    same_sparse(s.T, t.T, tol(device))
    same_sparse(s.mT, t.mT, tol(device))
    assert s.t().is_coalesced() == t.t().is_coalesced()
    c, tc = s.to_sparse_csr(), t.to_sparse_csr()
    assert c.t().layout is ot.sparse_csc and tc.t().layout is torch.sparse_csc
    same_sparse(c.t(), tc.t(), tol(device))
    same_sparse(c.t().t(), tc.t().t(), tol(device))
    h, th = pair(device, [[0, 2], [1, 0]], np.ones((2, 2, 3)), (3, 3, 2, 3))
    # two dense dimensions: torch refuses, omnitensor transposes the values
    same_dense(h.transpose(2, 3), th.to_dense().transpose(2, 3), tol(device))
    with pytest.raises(ValueError, match="both be sparse or both dense"):
        h.transpose(0, 2)


def test_refusals_match_torch_and_name_to_dense(device):
    s, t = pair(device)
    d, td = dense_pair(device, DENSE_B)
    for ours, theirs in ((lambda: s + d, lambda: t + td), (lambda: s + 1, lambda: t + 1),
                         (lambda: s / d, lambda: t / td), (lambda: s ** 0, lambda: t ** 0)):
        with pytest.raises(RuntimeError):
            theirs()
        with pytest.raises(RuntimeError):
            ours()
    for call in (lambda: s.exp(), lambda: ot.exp(s), lambda: s.view(12), lambda: s > 0,
                 lambda: s.reshape(12), lambda: s[0], lambda: ot.cat([s, s]),
                 lambda: s.amax(), lambda: ot.where(d > 0, s, d)):
        with pytest.raises(ot.core.layout_dispatch.LayoutError, match=r"to_dense\(\)"):
            call()
    with pytest.raises(TypeError, match="to_dense"):
        s.numpy()
    with pytest.raises(ot.core.layout_dispatch.LayoutError, match=r"^exp\(\) does not"):
        s.exp()


def test_device_mismatch_is_refused(device):
    if device == "cpu":
        pytest.skip("needs a second device")
    s, _ = pair(device)
    host = ot.tensor(DENSE_B)
    for call in (lambda: s @ host.t(), lambda: host + s, lambda: s * host):
        with pytest.raises(ot.DeviceMismatchError):
            call()
