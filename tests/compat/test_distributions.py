"""omnitensor.distributions against torch.distributions on every device: log_prob, entropy,
mean/variance, kl_divergence, sample statistics and rsample gradients."""
import numpy as np
import pytest

import omnitensor as ot
import omnitensor.distributions as D

torch = pytest.importorskip("torch")
TD = torch.distributions


def _f64(x, device):
    return ot.tensor(np.asarray(x, dtype=np.float64), device=device)


def _t64(x):
    return torch.tensor(np.asarray(x, dtype=np.float64))


def _close(a, b, rtol=1e-6, atol=1e-9):
    np.testing.assert_allclose(a.cpu().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)


CASES = {
    "Normal": (([0.0, 1.0, -2.0], [1.0, 2.0, 0.5]), [0.3, -1.0, 4.0]),
    "Uniform": (([0.0, 1.0, -3.0], [1.0, 3.0, 2.0]), [0.3, 2.0, 0.0]),
    "Gamma": (([0.5, 3.0, 10.0], [1.0, 2.0, 0.3]), [0.3, 2.0, 25.0]),
    "Beta": (([0.5, 3.0, 2.0], [1.5, 2.0, 7.0]), [0.3, 0.7, 0.05]),
    "Bernoulli": (([0.3, 0.9, 0.5],), [0.0, 1.0, 1.0]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_scores_and_moments_match_torch(name, device):
    args, value = CASES[name]
    d = getattr(D, name)(*[_f64(a, device) for a in args])
    td = getattr(TD, name)(*[_t64(a) for a in args])
    _close(d.log_prob(_f64(value, device)), td.log_prob(_t64(value)))
    _close(d.entropy(), td.entropy())
    _close(d.mean, td.mean)
    _close(d.variance, td.variance)
    _close(d.stddev, td.stddev)
    assert d.batch_shape == tuple(td.batch_shape) and d.event_shape == tuple(td.event_shape)
    assert d.has_rsample == td.has_rsample


@pytest.mark.parametrize("name", sorted(CASES))
def test_kl_matches_torch(name, device):
    args, _ = CASES[name]
    other = [np.asarray(a) * 0.7 + 0.1 for a in args]
    if name == "Uniform":  # q must cover p's support for a finite KL
        other = [np.asarray(args[0]) - 0.5, np.asarray(args[1]) + 1.0]
    p = getattr(D, name)(*[_f64(a, device) for a in args])
    q = getattr(D, name)(*[_f64(a, device) for a in other])
    _close(D.kl_divergence(p, q), TD.kl_divergence(getattr(TD, name)(*map(_t64, args)),
                                                   getattr(TD, name)(*map(_t64, other))))


def test_categorical(device):
    logits = [[0.1, 0.5, 2.0], [1.0, 1.0, 1.0]]
    probs = [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]
    c, tc = D.Categorical(logits=_f64(logits, device)), TD.Categorical(logits=_t64(logits))
    c2, tc2 = D.Categorical(probs=_f64(probs, device)), TD.Categorical(probs=_t64(probs))
    v = ot.tensor([2, 0], device=device)
    _close(c.log_prob(v), tc.log_prob(torch.tensor([2, 0])))
    _close(c.entropy(), tc.entropy())
    _close(c2.probs, tc2.probs)
    _close(D.kl_divergence(c, c2), TD.kl_divergence(tc, tc2))
    ot.manual_seed(0)
    s = c2.sample((4000,))
    assert tuple(s.shape) == (4000, 2) and s.device == ot.device(device)
    freq = np.stack([(s.cpu().numpy()[:, b, None] == np.arange(3)).mean(0) for b in range(2)])
    np.testing.assert_allclose(freq, probs, atol=0.03)


def test_multivariate_normal(device):
    cov = [[2.0, 0.3], [0.3, 1.0]]
    m = D.MultivariateNormal(_f64([0.0, 1.0], device), _f64(cov, device))
    tm = TD.MultivariateNormal(_t64([0.0, 1.0]), _t64(cov))
    x = [[0.3, 0.2], [1.0, 2.0]]
    _close(m.log_prob(_f64(x, device)), tm.log_prob(_t64(x)))
    _close(m.entropy(), tm.entropy())
    _close(m.variance, tm.variance)
    _close(m.covariance_matrix, tm.covariance_matrix)
    L = [[1.0, 0.0], [0.5, 2.0]]
    m2 = D.MultivariateNormal(_f64([1.0, 0.0], device), scale_tril=_f64(L, device))
    tm2 = TD.MultivariateNormal(_t64([1.0, 0.0]), scale_tril=_t64(L))
    _close(D.kl_divergence(m, m2), TD.kl_divergence(tm, tm2))
    prec = np.linalg.inv(np.asarray(cov))
    m3 = D.MultivariateNormal(_f64([0.0, 1.0], device), precision_matrix=_f64(prec, device))
    _close(m3.log_prob(_f64(x, device)), tm.log_prob(_t64(x)))


def test_independent(device):
    i = D.Independent(D.Normal(_f64([[0.0, 1.0]], device), _f64([[1.0, 2.0]], device)), 1)
    ti = TD.Independent(TD.Normal(_t64([[0.0, 1.0]]), _t64([[1.0, 2.0]])), 1)
    assert i.batch_shape == tuple(ti.batch_shape) and i.event_shape == tuple(ti.event_shape)
    _close(i.log_prob(_f64([[0.3, 0.1]], device)), ti.log_prob(_t64([[0.3, 0.1]])))
    _close(i.entropy(), ti.entropy())
    j = D.Independent(D.Normal(_f64([[0.5, 1.0]], device), _f64([[1.5, 2.0]], device)), 1)
    tj = TD.Independent(TD.Normal(_t64([[0.5, 1.0]]), _t64([[1.5, 2.0]])), 1)
    _close(D.kl_divergence(i, j), TD.kl_divergence(ti, tj))


@pytest.mark.parametrize("name", ["Normal", "Uniform"])
def test_rsample_gradients_are_the_reparameterisation(name, device):
    a = _f64([0.5, -1.0], device).requires_grad_()
    b = _f64([2.0, 3.0], device).requires_grad_()
    d = getattr(D, name)(a, b)
    ot.manual_seed(1)
    x = d.rsample((500,))
    assert x.shape == (500, 2) and x.requires_grad
    x.sum().backward()
    xs = x.detach().cpu().numpy()
    av, bv = a.detach().cpu().numpy(), b.detach().cpu().numpy()
    if name == "Normal":  # x = loc + scale * eps: dx/dloc = 1, dx/dscale = eps
        np.testing.assert_allclose(a.grad.cpu().numpy(), [500, 500])
        np.testing.assert_allclose(b.grad.cpu().numpy(), ((xs - av) / bv).sum(0), rtol=1e-9)
    else:  # x = low + u (high - low): dx/dhigh = u, dx/dlow = 1 - u
        u = (xs - av) / (bv - av)
        np.testing.assert_allclose(b.grad.cpu().numpy(), u.sum(0), rtol=1e-9)
        np.testing.assert_allclose(a.grad.cpu().numpy(), (1 - u).sum(0), rtol=1e-9)


def test_mvn_rsample_gradient(device):
    loc = _f64([0.0, 1.0], device).requires_grad_()
    L = _f64([[1.0, 0.0], [0.5, 2.0]], device).requires_grad_()
    ot.manual_seed(2)
    x = D.MultivariateNormal(loc, scale_tril=L).rsample((300,))
    x.sum().backward()
    np.testing.assert_allclose(loc.grad.cpu().numpy(), [300, 300])
    eps = np.linalg.solve(L.detach().cpu().numpy(),
                          (x.detach().cpu().numpy() - [0.0, 1.0]).T).T
    # d sum(L eps)/dL[i, j] = sum over samples of eps_j (lower triangle only receives it)
    expect = np.tril(np.tile(eps.sum(0), (2, 1)))
    np.testing.assert_allclose(np.tril(L.grad.cpu().numpy()), expect, rtol=1e-8, atol=1e-8)


def test_gamma_beta_draw_and_reparameterise(device):
    """Gamma and Beta draw with the right moments, and rsample carries gradients to the
    concentrations (implicit reparameterisation; checked exactly in
    tests/distributions/test_gradients.py)."""
    ot.manual_seed(3)
    g = D.Gamma(_f64([0.5, 3.0], device), _f64([1.0, 2.0], device))
    s = g.sample((40000,)).cpu().numpy()
    np.testing.assert_allclose(s.mean(0), [0.5, 1.5], rtol=0.04)
    np.testing.assert_allclose(s.var(0), [0.5, 0.75], rtol=0.08)
    b = D.Beta(_f64([0.5, 3.0], device), _f64([1.5, 2.0], device)).sample((40000,))
    np.testing.assert_allclose(b.cpu().numpy().mean(0), [0.25, 0.6], rtol=0.04)
    a = _f64([0.5, 3.0], device).requires_grad_()
    assert D.Gamma(a, 1.0).has_rsample
    D.Gamma(a, 1.0).rsample((100,)).sum().backward()
    assert a.grad is not None and bool((a.grad > 0).all())


def test_validate_args(device):
    with pytest.raises(ValueError, match="Expected parameter scale"):
        D.Normal(_f64([0.0], device), _f64([-1.0], device))
    D.Normal(_f64([0.0], device), _f64([-1.0], device), validate_args=False)
    with pytest.raises(ValueError, match="within the support"):
        D.Bernoulli(_f64([0.5], device)).log_prob(_f64([0.5], device))
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Bernoulli()
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(_f64([0.5, 0.5], device)))
    # both exponential families: torch's generic Bregman pair answers, and refuses
    with pytest.raises(NotImplementedError, match="different exponential families"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(_f64([0.5], device)))


def test_register_kl_picks_the_most_specific(monkeypatch):
    # a private registry, so the pair does not leak into tests of torch's registry
    monkeypatch.setattr(D.kl, "_KL_REGISTRY", dict(D.kl._KL_REGISTRY))
    monkeypatch.setattr(D.kl, "_KL_MEMOIZE", {})

    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return ot.zeros(())

    assert float(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0))) == 0.0
    assert float(D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(1.0, 1.0))) == pytest.approx(0.5)
