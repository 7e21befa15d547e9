"""Samplers, statistically: draws cannot equal torch's bit for bit (another generator),
so each family's draws (fixed seed, 20000 of them) must match its distribution: sample
mean and variance within 5 standard errors of the exact moments where the fourth moment
is finite, the empirical CDF within 5 standard errors at three quantiles for heavy tails,
frequencies for the discrete families, and a law each of the others obeys (Gumbel-max for
the relaxed categorical, circular moments for von Mises, LKJ's marginal correlations)."""
import numpy as np
import pytest

import omnitensor as ot
import omnitensor.distributions as D

from distribution_helpers import build, torch

N = 20000
MOMENTS = ["Normal", "Uniform", "Gamma", "Chi2", "Beta", "Exponential", "Laplace", "Gumbel",
           "HalfNormal", "LogNormal", "Weibull", "Kumaraswamy", "ContinuousBernoulli",
           "Bernoulli", "Geometric", "Poisson", "Binomial", "NegativeBinomial", "Dirichlet",
           "Multinomial", "OneHotCategorical", "MultivariateNormal",
           "LowRankMultivariateNormal", "Wishart"]
HEAVY = {  # family -> SciPy frozen distributions of the batch (the reference CDF)
    "Cauchy": lambda st: [st.cauchy(0.0, 1.0), st.cauchy(1.0, 2.0), st.cauchy(-2.0, 0.5)],
    "HalfCauchy": lambda st: [st.halfcauchy(0, s) for s in (1.0, 2.0, 0.5)],
    "StudentT": lambda st: [st.t(0.8, 0.0, 1.0), st.t(2.5, 1.0, 0.5), st.t(30.0, -1.0, 2.0)],
    "FisherSnedecor": lambda st: [st.f(1.5, 2.5), st.f(3.0, 6.0), st.f(10.0, 12.0)],
    "Pareto": lambda st: [st.pareto(a, scale=s) for s, a in ((1.0, 0.7), (2.0, 2.5),
                                                             (0.5, 4.0))],
    "InverseGamma": lambda st: [st.invgamma(a, scale=b) for a, b in ((1.5, 1.0), (3.0, 2.0),
                                                                     (0.7, 0.5))],
    "GeneralizedPareto": lambda st: [st.genpareto(0.3, 0.0, 1.0), st.genpareto(0.0, 1.0, 2.0),
                                     st.genpareto(-0.2, -1.0, 0.5)],
}


def _draws(name, device):
    d, td, _, _ = build(name, device)
    ot.manual_seed(1234)
    x = d.sample((N,)).cpu().numpy().astype(np.float64)
    return d, td, x


def _assert_moments(x, mean, var, what):
    """Sample mean and variance within 5 standard errors (from the sample's own fourth
    central moment) of the exact ones."""
    m_hat = x.mean(0)
    c = x - m_hat
    v_hat = (c ** 2).mean(0)
    m4 = (c ** 4).mean(0)
    se_m = np.sqrt(var / N)
    se_v = np.sqrt(np.maximum(m4 - v_hat ** 2, 0) / N)
    assert np.all(np.abs(m_hat - mean) <= 5 * se_m + 1e-6 * np.abs(mean) + 1e-12), \
        f"{what} mean {m_hat} vs {mean}"
    assert np.all(np.abs(v_hat - var) <= 5 * se_v + 1e-5 * np.abs(var) + 1e-12), \
        f"{what} variance {v_hat} vs {var}"


@pytest.mark.parametrize("name", MOMENTS)
def test_draws_have_the_moments(name, device):
    d, td, x = _draws(name, device)
    mean = td.mean.detach().numpy()
    var = td.variance.detach().numpy()
    _assert_moments(x, mean, var, name)


@pytest.mark.parametrize("name", sorted(HEAVY))
def test_heavy_tailed_draws_have_the_cdf(name, device):
    st = pytest.importorskip("scipy.stats")
    d, _, x = _draws(name, device)
    for j, ref in enumerate(HEAVY[name](st)):
        for q in (0.2, 0.5, 0.8):
            t = ref.ppf(q)
            f_hat = (x[:, j] <= t).mean()
            assert abs(f_hat - q) <= 5 * np.sqrt(q * (1 - q) / N), \
                f"{name}[{j}] P(X <= {t}) = {f_hat}, expected {q}"


def test_categorical_frequencies(device):
    d, td, x = _draws("Categorical", device)
    probs = td.probs.numpy()
    for b in range(probs.shape[0]):
        freq = np.bincount(x[:, b].astype(int), minlength=3) / N
        np.testing.assert_allclose(freq, probs[b], atol=5 * np.sqrt(0.25 / N))


def test_relaxed_families_follow_their_laws(device):
    # RelaxedBernoulli: P(X > 1/2) = probs; RelaxedOneHotCategorical: argmax ~ probs
    _, td, x = _draws("RelaxedBernoulli", device)
    p = td.probs.numpy()
    np.testing.assert_allclose((x > 0.5).mean(0), p, atol=5 * np.sqrt(0.25 / N))
    _, td, x = _draws("RelaxedOneHotCategorical", device)
    probs = td.probs.numpy()
    for b in range(probs.shape[0]):
        freq = np.bincount(x[:, b].argmax(-1), minlength=3) / N
        np.testing.assert_allclose(freq, probs[b], atol=5 * np.sqrt(0.25 / N))
    # LogisticNormal: the stick-breaking preimage of a draw is Normal(loc, scale)
    d, td, x = _draws("LogisticNormal", device)
    z = torch.distributions.transforms.StickBreakingTransform().inv(torch.tensor(x)).numpy()
    _assert_moments(z, td.loc.numpy(), td.scale.numpy() ** 2, "LogisticNormal preimage")


def test_von_mises_circular_moments(device):
    sc = pytest.importorskip("scipy.special")
    d, td, x = _draws("VonMises", device)
    assert np.all((x >= -np.pi) & (x < np.pi))
    loc, k = td.loc.numpy(), td.concentration.numpy()
    r = sc.i1e(k) / sc.i0e(k)  # E[cos(x - loc)]; E[sin(x - loc)] = 0
    cos, sin = np.cos(x - loc), np.sin(x - loc)
    for stat, want in ((cos, r), (sin, 0 * r)):
        se = stat.std(0) / np.sqrt(N)
        assert np.all(np.abs(stat.mean(0) - want) <= 5 * se + 1e-7)


def test_lkj_marginal_correlations(device):
    """Under LKJ(dim, eta) each correlation r_ij has (r + 1)/2 ~ Beta(b, b) with
    b = eta - 1 + dim/2: mean 0, variance 1 / (2 eta + dim - 1)."""
    d, td, x = _draws("LKJCholesky", device)
    corr = x @ np.swapaxes(x, -1, -2)
    np.testing.assert_allclose(np.diagonal(corr, axis1=-2, axis2=-1), 1.0, atol=1e-5)
    eta = td.concentration.numpy()
    r = corr[:, :, [1, 2, 2], [0, 0, 1]]  # (N, batch, 3 pairs)
    var = np.broadcast_to((1 / (2 * eta + 3 - 1))[:, None], r.shape[1:])
    _assert_moments(r, np.zeros_like(var), var, "LKJ correlations")
    # every pair, in a larger matrix (torch 2.13's sampler fails this beyond column 0)
    ot.manual_seed(9)
    x = D.LKJCholesky(5, ot.tensor(1.5, device=device)).sample((N,)).cpu().numpy()
    corr = (x @ np.swapaxes(x, -1, -2)).astype(np.float64)
    rows, cols = np.tril_indices(5, -1)
    r = corr[:, rows, cols]
    _assert_moments(r, np.zeros(len(rows)), np.full(len(rows), 1 / (2 * 1.5 + 5 - 1)),
                    "LKJ(5) correlations")


def test_draws_follow_the_seed(device):
    d, _, _, _ = build("Gamma", device)
    ot.manual_seed(5)
    a = d.sample((100,)).cpu().numpy()
    ot.manual_seed(5)
    b = d.sample((100,)).cpu().numpy()
    c = d.sample((100,)).cpu().numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(b, c)
    assert D.Normal(0.0, 1.0).sample().shape == ()
