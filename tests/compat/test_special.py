"""omnitensor.special against torch.special (values and gradients) on every device."""
import numpy as np
import pytest

import omnitensor as ot
import omnitensor.special as S

torch = pytest.importorskip("torch")
X = np.concatenate([np.linspace(-7.3, -0.1, 9), np.linspace(0.01, 50, 25), [100.0, 1e4]])


@pytest.mark.parametrize("name,lo", [("gammaln", -1e9), ("digamma", -1e9), ("i0", -1e9),
                                     ("i0e", -1e9), ("i1", -1e9), ("i1e", -1e9),
                                     ("ndtr", -1e9), ("log_ndtr", -1e9),
                                     ("entr", -1e9), ("expit", -1e9), ("sinc", -1e9),
                                     ("erf", -1e9), ("erfc", -1e9), ("logit", 0),
                                     ("erfinv", -1), ("ndtri", 0)])
def test_unary_matches_torch(name, lo, device):
    x = X[(X > lo)]
    if name in ("logit", "ndtri"):
        x = np.linspace(0.001, 0.999, 31)
    if name == "erfinv":
        x = np.linspace(-0.999, 0.999, 31)
    got = getattr(S, name)(ot.tensor(x, device=device)).cpu().numpy()
    want = getattr(torch.special, name)(torch.tensor(x)).numpy()
    fin = np.isfinite(want)
    assert (np.isfinite(got) == fin).all()
    np.testing.assert_allclose(got[fin], want[fin], rtol=1e-9 if name != "ndtr" else 1e-5,
                               atol=1e-12)


def test_binary_and_reductions(device):
    x = np.array([0.0, 0.5, 2.0])
    y = np.array([-0.5, 3.0, 0.0])
    for name in ("xlogy", "xlog1py"):
        got = getattr(S, name)(ot.tensor(x, device=device), ot.tensor(np.abs(y), device=device))
        want = getattr(torch.special, name)(torch.tensor(x), torch.tensor(np.abs(y)))
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-12)
    m = np.array([[0.1, 2.0, -1.0], [3.0, 0.0, 1.0]])
    for name in ("softmax", "log_softmax"):
        np.testing.assert_allclose(getattr(S, name)(ot.tensor(m, device=device), 1).cpu().numpy(),
                                   getattr(torch.special, name)(torch.tensor(m), 1).numpy(),
                                   rtol=1e-12)
    np.testing.assert_allclose(S.logsumexp(ot.tensor(m, device=device), 1).cpu().numpy(),
                               torch.special.logsumexp(torch.tensor(m), 1).numpy(), rtol=1e-12)
    np.testing.assert_allclose(S.multigammaln(ot.tensor([2.5, 4.0], dtype=ot.float64, device=device), 3).cpu().numpy(),
                               torch.special.multigammaln(torch.tensor([2.5, 4.0], dtype=torch.float64), 3).numpy(),
                               rtol=1e-10)


def test_gammaln_gradient_is_digamma(device):
    x = ot.tensor([0.3, 2.5, 11.0, -1.5], dtype=ot.float64, device=device, requires_grad=True)
    S.gammaln(x).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(),
                               torch.special.digamma(torch.tensor([0.3, 2.5, 11.0, -1.5],
                                                                  dtype=torch.float64)).numpy(),
                               rtol=1e-9)
    assert ot.lgamma is S.gammaln and ot.digamma is S.digamma


def test_gammainc_matches_scipy_and_torch(device):
    """P and Q against SciPy (float64, tight: torch's own igamma is off by ~1e-9 at a ~ 30)
    and torch, edges (0, inf, negative, nan) as torch's, on every device."""
    sc = pytest.importorskip("scipy.special")
    a, x = (v.ravel() for v in np.meshgrid([1e-3, 0.1, 0.5, 1.0, 2.5, 7.0, 30.0, 120.0, 2e3],
                                           [1e-5, 0.01, 0.3, 1.0, 2.0, 5.0, 9.0, 25.0, 31.0,
                                            130.0, 1990.0, 2010.0]))
    ta, tx = ot.tensor(a, device=device), ot.tensor(x, device=device)
    np.testing.assert_allclose(S.gammainc(ta, tx).cpu().numpy(), sc.gammainc(a, x),
                               rtol=1e-11, atol=1e-300)
    np.testing.assert_allclose(S.gammaincc(ta, tx).cpu().numpy(), sc.gammaincc(a, x),
                               rtol=1e-11, atol=1e-300)
    np.testing.assert_allclose(S.gammainc(ta, tx).cpu().numpy(),
                               torch.special.gammainc(torch.tensor(a), torch.tensor(x)).numpy(),
                               rtol=1e-8, atol=1e-300)
    ea = np.array([0.0, 0.0, 1.0, 1.0, -1.0, 1.0, np.inf, np.inf, np.nan, 2.0])
    ex = np.array([0.0, 1.0, 0.0, np.inf, 1.0, -1.0, 1.0, np.inf, 1.0, np.nan])
    for ours, theirs in ((S.gammainc, torch.special.gammainc),
                         (S.gammaincc, torch.special.gammaincc)):
        got = ours(ot.tensor(ea, device=device), ot.tensor(ex, device=device)).cpu().numpy()
        np.testing.assert_array_equal(got, theirs(torch.tensor(ea), torch.tensor(ex)).numpy())


def test_gammainc_gradients(device):
    """d/dx P = the Gamma density; d/da P against a central difference of SciPy's P
    (torch has no gradient in a)."""
    sc = pytest.importorskip("scipy.special")
    a = np.array([0.05, 0.7, 3.0, 40.0, 40.0])
    x = np.array([0.01, 1.5, 2.0, 35.0, 48.0])
    ta = ot.tensor(a, device=device, requires_grad=True)
    tx = ot.tensor(x, device=device, requires_grad=True)
    S.gammainc(ta, tx).sum().backward()
    pdf = np.exp((a - 1) * np.log(x) - x - sc.gammaln(a))
    np.testing.assert_allclose(tx.grad.cpu().numpy(), pdf, rtol=1e-10)
    h = 1e-6 * a
    fd = (sc.gammainc(a + h, x) - sc.gammainc(a - h, x)) / (2 * h)
    np.testing.assert_allclose(ta.grad.cpu().numpy(), fd, rtol=1e-7)


def test_xlogy_gradients_match_torch_at_zero(device):
    """d/dx x log y is log y also at x = 0 (torch), and the masked lanes (x = 0 with y = 0
    or inf) answer 0, not NaN."""
    x = [0.0, 0.0, 1.0, 2.0]
    for ours, theirs, y in ((S.xlogy, torch.special.xlogy, [0.2, 0.0, 3.0, 0.5]),
                            (S.xlog1py, torch.special.xlog1py, [0.2, -1.0, 3.0, -0.5])):
        ox = ot.tensor(x, dtype=ot.float64, device=device, requires_grad=True)
        tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        out = ours(ox, ot.tensor(y, dtype=ot.float64, device=device))
        want = theirs(tx, torch.tensor(y, dtype=torch.float64))
        np.testing.assert_allclose(out.detach().cpu().numpy(), want.detach().numpy())
        out.sum().backward()
        want.sum().backward()
        np.testing.assert_allclose(ox.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-12)


def test_gammainc_a_gradient_at_integer_a(device):
    """At integer a the continued fraction's value ends (a coefficient is 0) but its
    a-derivative does not: the derivative must still converge."""
    sc = pytest.importorskip("scipy.special")
    a = np.array([1.0, 2.0, 3.0, 1.0])
    x = np.array([2.56, 5.1, 7.7, 1.5])
    ta = ot.tensor(a, device=device, requires_grad=True)
    S.gammainc(ta, ot.tensor(x, device=device)).sum().backward()
    h = 1e-6
    fd = (sc.gammainc(a + h, x) - sc.gammainc(a - h, x)) / (2 * h)
    np.testing.assert_allclose(ta.grad.cpu().numpy(), fd, rtol=1e-7)
