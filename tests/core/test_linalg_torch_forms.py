"""torch's linalg call forms and gradients: svd/qr/eig/pinv gradients (gauge-invariant
losses), eigh(UPLO), lstsq's four outputs per driver, matrix_rank/pinv tolerances and
hermitian, and torch's top-level spellings (torch.svd returns V, cholesky_solve, lu_unpack,
triangular_solve, geqrf/orgqr/ormqr, vander, chain_matmul...), against torch on every
device."""
import numpy as np
import pytest
import torch

import omnitensor as ot

RNG = np.random.default_rng(3)


def _dt(device):
    return np.float64 if device == "cpu" else np.float32


def _close(ours, theirs, device, scale=1.0):
    tol = (1e-8 if device == "cpu" else 3e-4) * scale
    a = ours.detach().cpu().numpy() if isinstance(ours, ot.Tensor) else np.asarray(ours)
    b = theirs.detach().numpy() if isinstance(theirs, torch.Tensor) else np.asarray(theirs)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _grad(device, shape, loss, complex_out=False, scale=10.0):
    A = RNG.standard_normal(shape).astype(_dt(device))
    o = ot.tensor(A, device=device, requires_grad=True)
    t = torch.tensor(A, requires_grad=True)
    outs_t = loss(torch, t)
    ws = [RNG.standard_normal(tuple(x.shape)) for x in outs_t]
    sum((x * torch.tensor(w, dtype=x.dtype)).real.sum() for x, w in zip(outs_t, ws)).backward()
    outs_o = loss(ot, o)
    sum((x * ot.tensor(w, dtype=x.dtype, device=device)).real.sum()
        for x, w in zip(outs_o, ws)).backward()
    _close(o.grad, t.grad, device, scale)


def _svd_invariants(m, a):
    u, s, vh = m.linalg.svd(a, full_matrices=False)
    return (u * (s ** 2).unsqueeze(-2)) @ vh, u @ u.mT, vh.mT @ (vh * s.unsqueeze(-1))


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
def test_svd_qr_pinv_gradients(device, shape):
    _grad(device, shape, _svd_invariants)
    _grad(device, shape, lambda m, a: tuple(m.linalg.qr(a)))
    _grad(device, shape, lambda m, a: (m.linalg.pinv(a),), scale=100)


def _svd_full_invariants(m, a):
    u, s, vh = m.linalg.svd(a, full_matrices=True)
    k = s.shape[-1]
    return (u[..., :k] * s.unsqueeze(-2)) @ vh[..., :k, :], (u[..., :k] @ vh[..., :k, :]).abs()


@pytest.mark.parametrize("kind", ["real", "complex"])
@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5)])
def test_svd_gradient_full_matrices_and_phase(device, shape, kind):
    """full_matrices=True reads the first k columns of U / rows of Vh (torch's gauge rule:
    the rest span a null space); a complex loss that depends on the singular vectors' phase
    is refused, as torch's; the phase-invariant loss of U and Vh together has torch's
    gradient (its diagonal term i Im diag(U^H gU) / S)."""
    A = RNG.standard_normal(shape)
    if kind == "complex":
        A = (A + 1j * RNG.standard_normal(shape)).astype(
            np.complex128 if device == "cpu" else np.complex64)
    else:
        A = A.astype(_dt(device))
    grads = []
    for lib in (ot, torch):
        x = lib.tensor(A).to(device) if lib is ot else torch.tensor(A)
        x.requires_grad_(True)
        a, b = _svd_full_invariants(lib, x)
        (a.real.sum() + (b * 1.5).sum()).backward()
        grads.append(x.grad)
    _close(grads[0], grads[1], device, 100)
    if kind == "complex" and shape[0] >= shape[1]:
        with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):
            x = ot.tensor(A, device=device, requires_grad=True)
            u = ot.linalg.svd(x, full_matrices=False)[0]
            (u * ot.tensor(100 * (1 + 2j), dtype=u.dtype, device=device)).real.sum().backward()


def test_eig_gradient(device):
    if device != "cpu":
        pytest.skip("eig's eigenvector phase differs between LAPACK builds in float32")
    _grad(device, (4, 4), lambda m, a: (m.linalg.eig(a)[0],))
    _grad(device, (4, 4), lambda m, a: ((lambda w, v: v * v.conj())(*m.linalg.eig(a)),))


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_outputs(device, driver):
    A = RNG.standard_normal((6, 3)).astype(_dt(device))
    B = RNG.standard_normal((6, 2)).astype(_dt(device))
    ours = ot.linalg.lstsq(ot.tensor(A, device=device), ot.tensor(B, device=device),
                           driver=driver)
    theirs = torch.linalg.lstsq(torch.tensor(A), torch.tensor(B), driver=driver)
    for a, b in zip(ours, theirs):
        _close(a, b, device, 100)


@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (2, 3)])
@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd"])
def test_lstsq_differentiable_outputs_are_torchs(device, driver, shape):
    """solution and residuals (even empty) carry a gradient, rank and singular_values do
    not, as in torch; the gradient through an empty residual is the solution's alone."""
    A = RNG.standard_normal(shape).astype(_dt(device))
    B = RNG.standard_normal((shape[0], 2)).astype(_dt(device))
    oa = ot.tensor(A, device=device).requires_grad_(True)
    ta = torch.tensor(A).requires_grad_(True)
    ours = ot.linalg.lstsq(oa, ot.tensor(B, device=device), driver=driver)
    theirs = torch.linalg.lstsq(ta, torch.tensor(B), driver=driver)
    assert [t.requires_grad for t in ours] == [t.requires_grad for t in theirs]
    (ours[0].sum() + ours[1].sum()).backward()
    (theirs[0].sum() + theirs[1].sum()).backward()
    _close(oa.grad, ta.grad, device, 100)


@pytest.mark.parametrize("kind", ["real", "complex"])
def test_slogdet_gradient_of_both_outputs(device, kind):
    """sign and logabsdet both carry a gradient, as torch's; a complex sign's gradient is
    torch's -i Im(conj(g_sign) sign) A^{-H}, a real one's adds nothing."""
    A = RNG.standard_normal((3, 3))
    if kind == "complex":
        A = (A + 1j * RNG.standard_normal((3, 3))).astype(
            np.complex128 if device == "cpu" else np.complex64)
    else:
        A = A.astype(_dt(device))
    oa = ot.tensor(A, device=device).requires_grad_(True)
    ta = torch.tensor(A).requires_grad_(True)
    w = 1.3 + 0.4j if kind == "complex" else 1.3
    for lib, x in ((ot, oa), (torch, ta)):
        sign, logabs = lib.linalg.slogdet(x)
        assert sign.requires_grad and logabs.requires_grad
        ((sign * w).real.sum() if kind == "complex" else (sign * w).sum()
         + 0).backward(retain_graph=True)
        (2 * logabs.sum()).backward()
    _close(oa.grad, ta.grad, device, 100)


@pytest.mark.parametrize("shapes", [((3, 3, 3), (3, 3)), ((0, 0, 0), (0, 0)),
                                    ((2, 3, 3), (2, 3)), ((3, 3), (3,))])
def test_solve_vector_rule_follows_the_face(device, shapes):
    """torch.linalg.solve (the torch face's linalg, and solve_ex) reads B of exactly
    A.shape[:-1] as vectors, as torch; omnitensor.linalg.solve keeps the standard's matrix
    reading where both fit (NumPy 2 follows the standard), and torch's where only it does."""
    import omnitensor.torch_face as face
    sa, sb = shapes
    A = (RNG.standard_normal(sa) + 4 * np.eye(sa[-1])).astype(_dt(device))
    B = RNG.standard_normal(sb).astype(_dt(device))
    oa, ob = ot.tensor(A, device=device), ot.tensor(B, device=device)
    want = torch.linalg.solve(torch.tensor(A), torch.tensor(B))
    _close(face.linalg.solve(oa, ob), want, device, 100)
    _close(ot.linalg.solve_ex(oa, ob).result, want, device, 100)
    if len(sb) > 1 and sb[-2] != sa[-1]:  # the standard's reading does not fit: torch's
        _close(ot.linalg.solve(oa, ob), want, device, 100)
    elif A.size:
        _close(ot.linalg.solve(oa, ob), np.linalg.solve(A, B), device, 100)
    else:  # NumPy refuses empty matrices: the standard's (0,) + (0, 0) batch of matrices
        assert tuple(ot.linalg.solve(oa, ob).shape) == (0, 0, 0)


def test_tolerances_hermitian_and_uplo(device):
    A = RNG.standard_normal((6, 3)).astype(_dt(device))
    S = A.T @ A
    o, t = ot.tensor(S, device=device), torch.tensor(S)
    _close(ot.linalg.pinv(o, hermitian=True), torch.linalg.pinv(t, hermitian=True), device, 100)
    for kw in ({}, {"atol": 1.0}, {"rtol": 0.5}, {"atol": 0.1, "rtol": 0.1}):
        _close(ot.linalg.matrix_rank(o, **kw), torch.linalg.matrix_rank(t, **kw), device)
        _close(ot.linalg.matrix_rank(o, hermitian=True, **kw),
               torch.linalg.matrix_rank(t, hermitian=True, **kw), device)
    up = np.triu(S) + np.tril(RNG.standard_normal((3, 3)), -1).astype(S.dtype)  # junk below
    for uplo in ("L", "U"):
        _close(ot.linalg.eigvalsh(ot.tensor(up, device=device), UPLO=uplo),
               torch.linalg.eigvalsh(torch.tensor(up), UPLO=uplo), device, 100)


def test_torch_top_level_spellings(device):
    dt = _dt(device)
    A = RNG.standard_normal((5, 3)).astype(dt)
    S = (A.T @ A + np.eye(3)).astype(dt)
    B = RNG.standard_normal((3, 2)).astype(dt)
    oa, ta = ot.tensor(A, device=device), torch.tensor(A)
    os_, ts = ot.tensor(S, device=device), torch.tensor(S)
    ob, tb = ot.tensor(B, device=device), torch.tensor(B)
    u, s, v = oa.svd()                                  # torch.svd returns V, not Vh
    tu, tsv, tv = torch.svd(ta)
    _close((u * s) @ v.mT, (tu * tsv) @ tv.T, device, 10)
    assert tuple(v.shape) == tuple(tv.shape)
    low, tlow = ot.linalg.cholesky(os_), torch.linalg.cholesky(ts)
    _close(ot.cholesky_solve(ob, low), torch.cholesky_solve(tb, tlow), device, 10)
    _close(ot.cholesky_inverse(low), torch.cholesky_inverse(tlow), device, 10)
    lu_, piv = torch.linalg.lu_factor(ts)
    for a, b in zip(ot.lu_unpack(ot.tensor(lu_.numpy(), device=device),
                                 ot.tensor(piv.numpy(), device=device)),
                    torch.lu_unpack(lu_, piv)):
        _close(a, b, device)
    for up, tr in ((True, False), (False, True)):
        _close(ot.triangular_solve(ob, os_, upper=up, transpose=tr).solution,
               torch.triangular_solve(tb, ts, upper=up, transpose=tr).solution, device, 10)
    ga, gt = ot.geqrf(oa), torch.geqrf(ta)
    _close(ga.a, gt.a, device, 10)
    _close(ga.tau, gt.tau, device, 10)
    _close(ot.orgqr(ga.a, ga.tau), torch.orgqr(gt.a, gt.tau), device, 10)
    C = RNG.standard_normal((5, 4)).astype(dt)
    for tr in (False, True):
        _close(ot.ormqr(ga.a, ga.tau, ot.tensor(C, device=device), transpose=tr),
               torch.ormqr(gt.a, gt.tau, torch.tensor(C), transpose=tr), device, 10)
    x = RNG.standard_normal(4).astype(dt)
    _close(ot.vander(ot.tensor(x, device=device), 3), torch.vander(torch.tensor(x), 3), device)
    _close(ot.chain_matmul(oa, ob), torch.chain_matmul(ta, tb), device, 10)
    _close(os_.matrix_exp(), ts.matrix_exp(), device, 100)
    with pytest.raises(RuntimeError, match="torch.linalg.eigh"):
        ot.symeig(os_)


@pytest.mark.parametrize("a_shape,b_shape", [((2, 5, 5), (2, 5)), ((2, 3, 4, 4), (2, 3, 4)),
                                             ((3, 3, 3), (3, 3)), ((4, 4), (4,))])
def test_solve_batched_vector_rhs_like_torch(device, a_shape, b_shape):
    """torch reads B of shape A.shape[:-1] as a stack of vectors where the standard's
    matrix reading does not fit; (3, 3, 3) with (3, 3) fits the standard's (M, K) reading,
    which ot.linalg keeps (torch would read three vectors there)."""
    a = RNG.standard_normal(a_shape) + 4 * np.eye(a_shape[-1])
    b = RNG.standard_normal(b_shape)
    dt = _dt(device)
    theirs = torch.linalg.solve(torch.tensor(a), torch.tensor(b))
    ours = ot.linalg.solve(ot.tensor(a.astype(dt), device=device),
                           ot.tensor(b.astype(dt), device=device))
    if a_shape == (3, 3, 3):  # the standard's reading: one (3, 3) B for every matrix
        theirs = torch.linalg.solve(torch.tensor(a), torch.tensor(b)[None])
    assert tuple(ours.shape) == tuple(theirs.shape)
    _close(ours, theirs, device)


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
@pytest.mark.parametrize("dim,keepdim", [((0, 2), True), ((2, 0), False), ((1, 0), True)])
def test_matrix_norm_over_any_two_dims(device, ord, dim, keepdim):
    """matrix_norm(A, ord, dim, keepdim) positionally, over dims other than the last two
    (every ord but fro read the last two before), with torch's dtype= cast."""
    A = RNG.standard_normal((3, 4, 5)).astype(_dt(device))
    ours = ot.linalg.matrix_norm(ot.tensor(A, device=device), ord, dim, keepdim)
    _close(ours, torch.linalg.matrix_norm(torch.tensor(A), ord, dim, keepdim), device, 10)
    half = ot.linalg.matrix_norm(ot.tensor(A, device=device), ord, dim, dtype=ot.float32)
    assert half.dtype is ot.float32


def test_matrix_norm_vecdot_vander_torch_rules(device):
    x = ot.ones(3, 4, device=device)
    with pytest.raises(RuntimeError, match="dim must be a 2-tuple"):
        ot.linalg.matrix_norm(x, 2, (0,))
    with pytest.raises(RuntimeError, match="dims must be different"):
        ot.linalg.matrix_norm(x, 2, (1, 1))
    _close(ot.linalg.vecdot(x, x, dim=0), torch.linalg.vecdot(torch.ones(3, 4),
                                                              torch.ones(3, 4), dim=0), device)
    v = ot.tensor(2.0, device=device)
    _close(ot.linalg.vander(v, N=3), torch.linalg.vander(torch.tensor(2.0), N=3), device)
    with pytest.raises(RuntimeError, match="N must be greater than 1"):
        ot.linalg.vander(ot.tensor([2.0], device=device))


@pytest.mark.parametrize("dt", ["float64", "complex128"])
def test_geqrf_keeps_a_column_already_zero_below_the_diagonal(device, dt):
    """LAPACK's larfg reflects nothing there (tau 0, the diagonal's sign kept): the last
    column of a square matrix, a diagonal matrix; elsewhere R and tau are torch's."""
    torch = pytest.importorskip("torch")
    if dt == "complex128" and device != "cpu":
        pytest.skip("complex128 on cpu (the devices' float64 path is the real one)")
    rng = np.random.default_rng(1)
    for a in (np.diag([2.0, -3.0, 4.0]), rng.standard_normal((5, 5)),
              rng.standard_normal((2, 4, 3))):
        a = a.astype(dt)
        t_a, t_tau = torch.geqrf(torch.tensor(a))
        o_a, o_tau = ot.geqrf(ot.tensor(a, device=device))
        np.testing.assert_allclose(o_a.cpu().numpy(), t_a.numpy(), atol=1e-12)
        np.testing.assert_allclose(o_tau.cpu().numpy(), t_tau.numpy(), atol=1e-12)


def test_torch_faces_linalg_cross_needs_one_number_of_dimensions(device):
    """torch.linalg.cross refuses inputs of different ndim (then broadcasts as torch);
    the Array API's omnitensor.linalg.cross broadcasts any."""
    from omnitensor import torch_linalg
    a = ot.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3), device=device)
    b = ot.tensor([1.0, 0.0, 2.0], device=device)
    with pytest.raises(ValueError, match="same number of dimensions"):
        torch_linalg.cross(a, b)
    expected = torch.linalg.cross(torch.tensor(a.cpu().numpy()),
                                  torch.tensor([[1.0, 0, 2]], dtype=torch.float32))
    np.testing.assert_allclose(torch_linalg.cross(a, b[None], dim=-1).cpu().numpy(),
                               expected.numpy())
    np.testing.assert_allclose(ot.linalg.cross(a, b).cpu().numpy(), expected.numpy())
