"""torch.linalg beyond the Array API extension (LU family, *_ex, cond, matrix_exp,
multi_dot, tensorinv/tensorsolve, vander, householder_product) against torch, values and
gradients, on every device (float64 on cpu, float32 elsewhere)."""
import numpy as np
import pytest
import torch

import omnitensor as ot

RNG = np.random.default_rng(0)


def _dt(device):
    return np.float64 if device == "cpu" else np.float32


def _tol(device, scale=1.0):
    return (1e-9 if device == "cpu" else 2e-4) * scale


def _same(ours, theirs, device, scale=1.0):
    a = ours.detach().cpu().numpy() if isinstance(ours, ot.Tensor) else np.asarray(ours)
    b = theirs.detach().numpy()
    tol = _tol(device, scale)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _pair(a, device, grad=False):
    return (ot.tensor(a, device=device, requires_grad=grad),
            torch.tensor(a, requires_grad=grad))


def test_lu_factor_and_lu(device):
    A = RNG.standard_normal((2, 4, 4)).astype(_dt(device))
    o, t = _pair(A, device)
    ours, theirs = ot.linalg.lu_factor(o), torch.linalg.lu_factor(t)
    _same(ours.LU, theirs.LU, device)
    assert ours.pivots.dtype == ot.int32
    _same(ours.pivots, theirs.pivots, device)
    R = RNG.standard_normal((3, 5)).astype(_dt(device))
    for a, b in zip(ot.linalg.lu(ot.tensor(R, device=device)), torch.linalg.lu(torch.tensor(R))):
        _same(a, b, device)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve(device, left, adjoint):
    A = RNG.standard_normal((2, 4, 4)).astype(_dt(device))
    B = RNG.standard_normal((2, 4, 3) if left else (2, 3, 4)).astype(_dt(device))
    (oa, ta), (ob, tb) = _pair(A, device), _pair(B, device)
    lo, lt = ot.linalg.lu_factor(oa), torch.linalg.lu_factor(ta)
    _same(ot.linalg.lu_solve(lo.LU, lo.pivots, ob, left=left, adjoint=adjoint),
          torch.linalg.lu_solve(lt.LU, lt.pivots, tb, left=left, adjoint=adjoint), device, 50)


def test_ex_variants_report_failures_in_info(device):
    dt = _dt(device)
    A = RNG.standard_normal((2, 4, 4)).astype(dt)
    spd = A @ A.transpose(0, 2, 1) + 4 * np.eye(4, dtype=dt)
    not_pd = np.array([[1., 2.], [2., 1.]], dt)
    singular = np.array([[1., 2.], [2., 4.]], dt)
    for arr in (spd, not_pd):
        o, t = _pair(arr, device)
        ours, theirs = ot.linalg.cholesky_ex(o), torch.linalg.cholesky_ex(t)
        _same(ours.info, theirs.info, device)
        if not int(theirs.info.max()):
            _same(ours.L, theirs.L, device)
    o, t = _pair(singular, device)
    _same(ot.linalg.inv_ex(o).info, torch.linalg.inv_ex(t).info, device)
    with pytest.raises(ot.linalg.LinAlgError, match="failed at step 2"):
        ot.linalg.inv_ex(o, check_errors=True)
    o, t = _pair(A, device)
    _same(ot.linalg.inv_ex(o).inverse, torch.linalg.inv_ex(t).inverse, device, 50)
    B = RNG.standard_normal((2, 4, 3)).astype(dt)
    ob, tb = _pair(B, device)
    _same(ot.linalg.solve_ex(o, ob).result, torch.linalg.solve_ex(t, tb).result, device, 50)


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, float("inf")])
def test_cond(device, p):
    A = RNG.standard_normal((2, 4, 4)).astype(_dt(device))
    o, t = _pair(A, device)
    _same(ot.linalg.cond(o, p), torch.linalg.cond(t, p), device, 500)


def test_matrix_exp_multi_dot_tensor_ops_vander_householder(device):
    dt = _dt(device)
    A = RNG.standard_normal((2, 4, 4)).astype(dt)
    o, t = _pair(A, device)
    _same(ot.linalg.matrix_exp(o), torch.linalg.matrix_exp(t), device, 100)
    _same(ot.linalg.matrix_exp(o * 5), torch.linalg.matrix_exp(t * 5), device, 1e4)
    v1, v2 = RNG.standard_normal(4).astype(dt), RNG.standard_normal(3).astype(dt)
    M = RNG.standard_normal((4, 3)).astype(dt)
    _same(ot.linalg.multi_dot([ot.tensor(v1, device=device), o[0], ot.tensor(M, device=device),
                               ot.tensor(v2, device=device)]),
          torch.linalg.multi_dot([torch.tensor(v1), t[0], torch.tensor(M), torch.tensor(v2)]),
          device, 50)
    A4 = RNG.standard_normal((6, 2, 3)).astype(dt)
    o4, t4 = _pair(A4, device)
    _same(ot.linalg.tensorinv(o4, ind=1), torch.linalg.tensorinv(t4, ind=1), device, 50)
    b = RNG.standard_normal(6).astype(dt)
    _same(ot.linalg.tensorsolve(o4, ot.tensor(b, device=device)),
          torch.linalg.tensorsolve(t4, torch.tensor(b)), device, 50)
    _same(ot.linalg.vander(ot.tensor(v1, device=device), N=3),
          torch.linalg.vander(torch.tensor(v1), N=3), device)
    qr_a, tau = torch.geqrf(torch.tensor(RNG.standard_normal((5, 3)).astype(dt)))
    _same(ot.linalg.householder_product(ot.tensor(qr_a.numpy(), device=device),
                                        ot.tensor(tau.numpy(), device=device)),
          torch.linalg.householder_product(qr_a, tau), device, 50)


def test_matrix_exp_float32_is_as_accurate_as_torchs(device):
    """A float32 stack of large, different norms (1-norms ~ 0.3 to 40, a shifted trace):
    each matrix's worst error against float64 stays within twice torch's float32 one (the
    old fixed 0.5 scaling squared up to 4 times more and lost 10x)."""
    A = RNG.standard_normal((4, 5, 5)) * np.array([0.1, 1.0, 4.0, 8.0])[:, None, None]
    A = A + 3.0 * np.eye(5)
    ref = torch.linalg.matrix_exp(torch.tensor(A)).numpy()
    A32 = A.astype(np.float32)
    ours = ot.linalg.matrix_exp(ot.tensor(A32, device=device)).numpy()
    theirs = torch.linalg.matrix_exp(torch.tensor(A32)).numpy()
    scale = np.abs(ref).max(axis=(-2, -1))
    err_o = np.abs(ours - ref).max(axis=(-2, -1)) / scale
    err_t = np.abs(theirs - ref).max(axis=(-2, -1)) / scale
    assert (err_o <= 2 * err_t + 2e-7).all(), (err_o, err_t)


def test_multi_dot_multiplies_in_torchs_order():
    """The cheapest parenthesization (torch's: it rounds as torch's does), the left product
    on a tie of three."""
    from omnitensor.core.ops.linalg_factor import _chain_product

    class M:
        def __init__(self, name, shape):
            self.name, self.shape = name, shape

        def __matmul__(self, other):
            return M(f"({self.name}{other.name})", (self.shape[0], other.shape[1]))

    def order(*shapes):
        return _chain_product([M("ABCDE"[i], s) for i, s in enumerate(shapes)]).name

    assert order((10, 100), (100, 5), (5, 50)) == "((AB)C)"
    assert order((50, 5), (5, 100), (100, 10)) == "(A(BC))"
    assert order((2, 2), (2, 2), (2, 2)) == "((AB)C)"
    assert order((30, 35), (35, 15), (15, 5), (5, 10), (10, 20)) == "((A(BC))(DE))"


@pytest.mark.parametrize("name", ["lu_factor", "matrix_exp", "inv_ex", "lu_solve"])
def test_gradients_match_torch(device, name):
    dt = _dt(device)
    A = RNG.standard_normal((2, 4, 4)).astype(dt)
    W = RNG.standard_normal((2, 4, 4)).astype(dt)
    fns = {
        "lu_factor": lambda m, x: m.linalg.lu_factor(x).LU,
        "matrix_exp": lambda m, x: m.linalg.matrix_exp(x),
        "inv_ex": lambda m, x: m.linalg.inv_ex(x).inverse,
        "lu_solve": lambda m, x: m.linalg.lu_solve(*m.linalg.lu_factor(x), x.mT),
    }
    o, t = _pair(A, device, grad=True)
    (fns[name](ot, o) * ot.tensor(W, device=device)).sum().backward()
    (fns[name](torch, t) * torch.tensor(W)).sum().backward()
    _same(o.grad, t.grad, device, 500)
