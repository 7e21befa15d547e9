"""Gradients against torch: of log_prob with respect to every parameter (all families, all
devices); of rsample with respect to the parameters, on the same base noise where the
noise can be recovered from the draw, by finite differences of re-seeded draws otherwise,
and for the Gamma family against the exact implicit derivative (SciPy) and torch's."""
import numpy as np
import pytest

import omnitensor as ot
import omnitensor.distributions as D

from distribution_cases import CASES
from distribution_helpers import TORCH_FLOAT32_ONLY, build, close, torch, value_of

NAMES = sorted(CASES)


@pytest.mark.parametrize("name", NAMES)
def test_log_prob_gradients_match_torch(name, device):
    ours, theirs, oargs, targs = build(name, device, requires_grad=True)
    v, tv = value_of(name, device)
    ours.log_prob(v).sum().backward()
    theirs.log_prob(tv).sum().backward()
    kw = dict(rtol=2e-5, atol=1e-6) if name in TORCH_FLOAT32_ONLY else {}
    if name in ("VonMises",):  # torch's log I0 is a fitted approximation (test_values)
        kw = dict(rtol=1e-6, atol=1e-8) if device == "cpu" else {}
    checked = 0
    for o, t in zip(oargs, targs):
        if isinstance(t, torch.Tensor) and t.grad is not None:
            assert o.grad is not None, f"{name}: no gradient reached a parameter"
            close(o.grad, t.grad, device, what=f"{name} d log_prob", **kw)
            checked += 1
    assert checked or name in ("Multinomial",)


# families whose rsample is icdf(u; θ) for a uniform u: torch's icdf at u = cdf(x) is the
# same reparameterisation, so d x / d θ must agree with torch's exactly
ICDF_FAMILIES = ["Normal", "Uniform", "Exponential", "Cauchy", "Laplace", "Gumbel",
                 "HalfNormal", "HalfCauchy", "LogNormal", "Weibull", "Pareto", "Kumaraswamy",
                 "ContinuousBernoulli", "GeneralizedPareto"]


@pytest.mark.parametrize("name", ICDF_FAMILIES)
def test_rsample_gradient_is_torchs_on_the_same_noise(name, device):
    ours, theirs, oargs, targs = build(name, device, requires_grad=True)
    ot.manual_seed(11)
    x = ours.rsample((6,))
    x.sum().backward()
    with torch.no_grad():
        u = theirs.cdf(torch.tensor(x.detach().cpu().numpy(), dtype=targs[0].dtype))
    theirs.icdf(u).sum().backward()
    kw = {} if device == "cpu" else dict(rtol=2e-3, atol=2e-4)
    if name in TORCH_FLOAT32_ONLY:
        kw = dict(rtol=1e-4, atol=1e-5)
    for o, t in zip(oargs, targs):
        if isinstance(t, torch.Tensor) and t.grad is not None:
            close(o.grad, t.grad, device, what=f"{name} d rsample", **kw)


def test_mvn_rsample_gradients_are_torchs_on_the_same_noise(device):
    for name in ("MultivariateNormal", "LowRankMultivariateNormal"):
        ours, theirs, oargs, targs = build(name, device, requires_grad=True)
        ot.manual_seed(12)
        x = ours.rsample((5,))
        x.sum().backward()
        xs = x.detach().cpu().numpy()
        if name == "MultivariateNormal":
            low = np.linalg.cholesky(CASES[name][1]["covariance_matrix"])
            eps = np.linalg.solve(low, (xs - CASES[name][0][0]).T).T
            tx = theirs.loc + (theirs._unbroadcasted_scale_tril @ torch.tensor(eps).unsqueeze(-1)
                               ).squeeze(-1)
            tx.sum().backward()
            for o, t in zip(oargs, targs):
                close(o.grad, t.grad, device, what=f"{name} d rsample")
        else:  # loc and the factor's gradients do not depend on the noise split
            np.testing.assert_allclose(oargs[0].grad.cpu().numpy(), 5 * np.ones(3))


# reparameterised families without a recoverable noise: the autograd gradient of a draw
# against central differences of draws re-seeded identically (float64 on cpu)
FD_FAMILIES = ["LogisticNormal", "RelaxedBernoulli", "RelaxedOneHotCategorical",
               "OneHotCategoricalStraightThrough"]


@pytest.mark.parametrize("name", FD_FAMILIES)
def test_rsample_gradient_is_the_derivative_of_the_draw(name):
    if name == "OneHotCategoricalStraightThrough":
        p = ot.tensor([[0.2, 0.3, 0.5]], dtype=ot.float64, requires_grad=True)
        ot.manual_seed(3)
        x = D.OneHotCategoricalStraightThrough(probs=p).rsample((4,))
        w = np.array([1.0, 2.0, 3.0])
        (x * ot.tensor(w)).sum().backward()
        # straight through: 4 draws of d (w . p / sum p) / dp = (w - w . p) / sum p
        pn = p.detach().numpy()[0]
        np.testing.assert_allclose(p.grad.numpy()[0], 4 * (w - w @ pn / pn.sum()) / pn.sum(),
                                   rtol=1e-12)
        return
    args, kwargs, _ = CASES[name]
    base = [np.asarray(a, dtype=np.float64) if isinstance(a, (list, np.ndarray)) else a
            for a in args]
    idx = [i for i, a in enumerate(base) if isinstance(a, np.ndarray) and a.ndim > 0][-1]

    def draw(arr, grad=False):
        params = list(base)
        params[idx] = ot.tensor(arr, requires_grad=grad)
        params = [ot.tensor(a) if isinstance(a, np.ndarray) and i != idx else a
                  for i, a in enumerate(params)]
        ot.manual_seed(5)
        return getattr(D, name)(*params), params[idx]

    d, param = draw(base[idx], grad=True)
    weights = np.random.default_rng(1).normal(size=tuple(d.rsample((3,)).shape))
    d, param = draw(base[idx], grad=True)
    (d.rsample((3,)) * ot.tensor(weights)).sum().backward()
    fd = np.zeros_like(base[idx])
    h = 1e-6
    for k in np.ndindex(base[idx].shape):
        up, dn = base[idx].copy(), base[idx].copy()
        up[k] += h
        dn[k] -= h
        fu = (draw(up)[0].rsample((3,)).numpy() * weights).sum()
        fl = (draw(dn)[0].rsample((3,)).numpy() * weights).sum()
        fd[k] = (fu - fl) / (2 * h)
    np.testing.assert_allclose(param.grad.numpy(), fd, rtol=1e-5, atol=1e-7)


def test_gamma_rsample_gradient_is_the_implicit_derivative(device):
    """dx/dα of Gamma draws: SciPy's exact implicit derivative (tight), and torch's
    _standard_gamma_grad, a fitted approximation (~1e-4 relative)."""
    sc = pytest.importorskip("scipy.special")
    a0 = np.array([0.05, 0.6, 1.0, 3.5, 40.0, 700.0])
    alpha = ot.tensor(a0, device=device, requires_grad=True)
    ot.manual_seed(4)
    x = D.Gamma(alpha, 1.0).rsample((8,))
    x.sum().backward()
    xs = x.detach().cpu().numpy().astype(np.float64)
    mine = D._samplers.standard_gamma_grad(alpha.expand(8, 6), x.detach()).cpu().numpy()
    np.testing.assert_allclose(alpha.grad.cpu().numpy(), mine.sum(0), rtol=1e-5)
    a = np.broadcast_to(a0, xs.shape)
    h = 1e-6 * a
    pdf = np.exp((a - 1) * np.log(xs) - xs - sc.gammaln(a))
    exact = -(sc.gammainc(a + h, xs) - sc.gammainc(a - h, xs)) / (2 * h) / pdf
    ok = xs > 1e-30  # tiny concentrations draw below float range now and then
    rtol = 1e-6 if device == "cpu" else 2e-3
    np.testing.assert_allclose(mine[ok], exact[ok], rtol=rtol)
    theirs = torch._standard_gamma_grad(torch.tensor(a.copy()), torch.tensor(xs)).numpy()
    np.testing.assert_allclose(mine[ok], theirs[ok], rtol=2e-3)


# cases whose draws have a finite variance (so the estimator's mean converges)
UNBIASED = {"Beta": None, "Dirichlet": None, "Chi2": None,
            "StudentT": (([3.0, 5.0, 30.0], [0.0, 1.0, -1.0], [1.0, 0.5, 2.0]), {}, None),
            "InverseGamma": (([3.5, 4.0, 6.0], [1.0, 2.0, 0.5]), {}, None),
            "FisherSnedecor": (([3.0, 6.0, 10.0], [9.0, 12.0, 20.0]), {}, None)}


@pytest.mark.parametrize("name", sorted(UNBIASED))
def test_gamma_family_rsample_gradients_are_unbiased(name):
    """E[d x/dθ] over reparameterised draws equals d E[x]/dθ (the mean in closed form),
    for the families whose draws are built on reparameterised Gamma draws."""
    ours, _, oargs, _ = build(name, "cpu", requires_grad=True, case=UNBIASED[name])
    params = [o for o in oargs if isinstance(o, ot.Tensor)]
    ot.manual_seed(21)
    got = ot.autograd.grad(ours.rsample((40000,)).mean(0).sum(), params, allow_unused=True)
    want = ot.autograd.grad(ours.mean.sum(), params, allow_unused=True)
    for g, w, p in zip(got, want, params):
        g = np.zeros(tuple(p.shape)) if g is None else g.numpy()
        w = np.zeros(tuple(p.shape)) if w is None else w.numpy()
        np.testing.assert_allclose(g, w, rtol=0.08, atol=0.03)
