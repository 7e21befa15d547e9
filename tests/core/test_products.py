"""matmul family, einsum, tensordot and the linalg extension against NumPy."""
import numpy as np
import pytest

import omnitensor as ot
from omnitensor.testing import assert_close

rng = np.random.default_rng(1)


def r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 5)), ((4,), (4, 2)), ((3, 4), (4,)), ((4,), (4,)),
                                   ((2, 3, 4), (4, 5)), ((1, 3, 4), (2, 4, 5)),
                                   ((2, 1, 3, 4), (5, 4, 2)), ((1, 1), (1, 7)), ((0, 3), (3, 2))])
def test_matmul_shapes(device, sa, sb):
    a, b = r(*sa), r(*sb)
    assert_close(ot.tensor(a, device=device) @ ot.tensor(b, device=device), a @ b, rtol=1e-4,
                 atol=1e-5)


def test_matmul_views_and_dtypes(device):
    a, b = r(5, 3), r(4, 5)
    ta, tb = ot.tensor(a, device=device), ot.tensor(b, device=device)
    assert_close(ta.mT @ tb.T, a.T @ b.T, rtol=1e-4, atol=1e-5)
    i = ot.arange(6, device=device).reshape(2, 3)
    assert (i @ i.T).dtype is ot.int64 and (i @ i.T).tolist() == [[5, 14], [14, 50]]
    with pytest.raises(ValueError, match="not aligned"):
        ta @ ta
    with pytest.raises(ValueError):
        ot.tensor(1.0, device=device) @ ta


def test_products(device):
    a, b = r(4), r(4)
    ta, tb = ot.tensor(a, device=device), ot.tensor(b, device=device)
    assert_close(ot.dot(ta, tb), np.float32(a @ b), rtol=1e-5)
    assert_close(ot.outer(ta, tb), np.outer(a, b))
    assert_close(ot.vecdot(ta, tb), np.float32(a @ b), rtol=1e-5)
    x, y = r(2, 3, 4), r(4, 3, 5)
    tx, ty = ot.tensor(x, device=device), ot.tensor(y, device=device)
    assert_close(ot.tensordot(tx, ty, axes=([1, 2], [1, 0])),
                 np.tensordot(x, y, ([1, 2], [1, 0])), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("spec,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->", [(2, 3)]), ("i,j->ij", [(2,), (3,)]),
    ("...ij,...jk", [(2, 3, 4), (2, 4, 2)]), ("ijk,ikl,il->j", [(2, 3, 4), (2, 4, 5), (2, 5)]),
    ("ji", [(2, 3)]),
])
def test_einsum(device, spec, shapes):
    arrays = [r(*s) for s in shapes]
    ts = [ot.tensor(a, device=device) for a in arrays]
    ref = np.einsum(spec, *arrays)
    assert_close(ot.einsum(spec, *ts), ref, rtol=1e-4, atol=1e-5)
    grad_ts = [t.clone().requires_grad_() for t in ts]
    assert_close(ot.einsum(spec, *grad_ts).detach(), ref, rtol=1e-4, atol=1e-5)


def test_linalg(device):
    m = r(4, 4) + 4 * np.eye(4, dtype=np.float32)
    t = ot.tensor(m, device=device)
    assert_close(ot.linalg.inv(t), np.linalg.inv(m), rtol=1e-4, atol=1e-5)
    assert_close(ot.linalg.det(t), np.float32(np.linalg.det(m)), rtol=1e-4)
    spd = m @ m.T
    assert_close(ot.linalg.cholesky(ot.tensor(spd, device=device)), np.linalg.cholesky(spd),
                 rtol=1e-4, atol=1e-4)
    w, v = ot.linalg.eigh(ot.tensor(spd, device=device))
    assert_close(w, np.linalg.eigvalsh(spd), rtol=1e-4, atol=1e-4)
    b = r(4, 2)
    assert_close(ot.linalg.solve(t, ot.tensor(b, device=device)), np.linalg.solve(m, b),
                 rtol=1e-4, atol=1e-4)
    assert_close(ot.linalg.svdvals(t), np.linalg.svd(m, compute_uv=False), rtol=1e-4, atol=1e-4)
    q, rr = ot.linalg.qr(t)
    assert_close(q @ rr, m, rtol=1e-4, atol=1e-4)
    assert_close(ot.linalg.pinv(t), np.linalg.pinv(m), rtol=1e-3, atol=1e-4)
    assert_close(ot.linalg.matrix_power(t, 3), np.linalg.matrix_power(m, 3), rtol=1e-4,
                 atol=1e-3)
    with pytest.raises(ot.linalg.LinAlgError):
        ot.linalg.inv(ot.zeros(3, 3, device=device))
    with pytest.raises(ValueError, match="square"):
        ot.linalg.inv(ot.zeros(2, 3, device=device))
