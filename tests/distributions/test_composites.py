"""The composite distributions against torch: MixtureSameFamily, Independent and
TransformedDistribution, value by value (log_prob, cdf, icdf, moments, entropy,
enumerate_support, expand, support) and their log_prob gradients with respect to every
parameter; mixture draws statistically. float64 on cpu, float32 on the other devices."""
import numpy as np
import pytest

import omnitensor as ot

from distribution_helpers import TD, close, dtype_for, torch

RNG = np.random.default_rng(3)
W = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]])
LOC = np.array([[-2.0, 0.0, 3.0], [1.0, -1.0, 0.5]])
SCALE = np.array([[0.5, 1.0, 2.0], [1.5, 0.3, 0.8]])
LOC2 = RNG.normal(size=(2, 3, 2))
SCALE2 = np.abs(RNG.normal(size=(2, 3, 2))) + 0.4
CHOL = np.linalg.cholesky(np.array([[2.0, 0.3], [0.3, 1.0]]))


def _lib(lib, device):
    """(namespace, tensor maker) for omnitensor on ``device`` or for torch (float64)."""
    if lib == "ours":
        return ot.distributions, lambda a: ot.tensor(
            np.asarray(a, dtype=np.float64), device=device).to(dtype_for(device))
    return TD, lambda a: torch.tensor(np.asarray(a, dtype=np.float64))


def _mixtures(L, t):
    T = L.transforms
    return {
        "normal": L.MixtureSameFamily(L.Categorical(t(W)), L.Normal(t(LOC), t(SCALE))),
        # one mixture weight vector broadcast over a batch of two
        "shared_weights": L.MixtureSameFamily(L.Categorical(t(W[0])),
                                              L.Normal(t(LOC), t(SCALE))),
        "independent": L.MixtureSameFamily(L.Categorical(logits=t(np.log(W))),
                                           L.Independent(L.Normal(t(LOC2), t(SCALE2)), 1)),
        "mvn": L.MixtureSameFamily(L.Categorical(t(W)), L.MultivariateNormal(
            t(LOC2), scale_tril=t(np.broadcast_to(CHOL, (2, 3, 2, 2))))),
        "gamma": L.MixtureSameFamily(L.Categorical(t(W)), L.Gamma(t(SCALE + 1), t(SCALE))),
        "lognormal_flow": L.TransformedDistribution(
            L.Normal(t(LOC[0]), t(SCALE[0])), [T.AffineTransform(t([0.5, 1.0, -1.0]), 2.0),
                                               T.ExpTransform()]),
        # a decreasing transform: cdf and icdf flip through the sign
        "decreasing_flow": L.TransformedDistribution(
            L.Normal(t(LOC[0]), t(SCALE[0])), [T.SigmoidTransform(),
                                               T.AffineTransform(1.0, -3.0)]),
        "event_flow": L.TransformedDistribution(
            L.Independent(L.Normal(t(LOC2), t(SCALE2)), 1), [T.StickBreakingTransform()]),
        "independent_normal": L.Independent(L.Normal(t(LOC2), t(SCALE2)), 2),
        "independent_bernoulli": L.Independent(L.Bernoulli(t(W[:, :2])), 1),
        "independent_gamma": L.Independent(L.Gamma(t(SCALE + 1), t(SCALE)), 1),
    }


VALUES = {
    "normal": RNG.normal(size=(4, 2)),
    "shared_weights": RNG.normal(size=(4, 2)),
    "independent": RNG.normal(size=(4, 2, 2)),
    "mvn": RNG.normal(size=(4, 2, 2)),
    "gamma": np.abs(RNG.normal(size=(4, 2))) + 0.1,
    "lognormal_flow": np.abs(RNG.normal(size=(4, 3))) + 0.1,
    "decreasing_flow": -3.0 * RNG.uniform(0.05, 0.95, size=(4, 3)) + 1.0,
    "event_flow": RNG.dirichlet([1.0, 2.0, 3.0], size=(4, 2, 3)),
    "independent_normal": RNG.normal(size=(4, 2, 3, 2)),
    "independent_bernoulli": RNG.integers(0, 2, size=(4, 2, 2)).astype(np.float64),
    "independent_gamma": np.abs(RNG.normal(size=(4, 2, 3))) + 0.1,
}
NAMES = sorted(VALUES)


def _both(name, device):
    ours = _mixtures(*_lib("ours", device))[name]
    theirs = _mixtures(*_lib("torch", device))[name]
    return ours, theirs


def _attempt(fn, *args):
    try:
        return fn(*args)
    except NotImplementedError:
        return NotImplemented


@pytest.mark.parametrize("name", NAMES)
def test_composite_matches_torch(name, device):
    ours, theirs = _both(name, device)
    mk = _lib("ours", device)[1]
    v, tv = mk(VALUES[name]), torch.tensor(VALUES[name])
    assert ours.batch_shape == theirs.batch_shape and ours.event_shape == theirs.event_shape
    assert ours.has_rsample == theirs.has_rsample
    assert ours.has_enumerate_support == theirs.has_enumerate_support
    assert type(ours.support).__name__ == type(theirs.support).__name__
    assert ours.support.event_dim == theirs.support.event_dim
    assert bool(ours.support.check(v).all()) == bool(theirs.support.check(tv).all())
    checks = [("log_prob", lambda d, x: d.log_prob(x)), ("cdf", lambda d, x: d.cdf(x)),
              ("mean", lambda d, x: d.mean), ("variance", lambda d, x: d.variance),
              ("stddev", lambda d, x: d.stddev), ("mode", lambda d, x: d.mode),
              ("entropy", lambda d, x: d.entropy())]
    for what, fn in checks:
        want, got = _attempt(fn, theirs, tv), _attempt(fn, ours, v)
        assert (want is NotImplemented) == (got is NotImplemented), f"{name}.{what}"
        if want is not NotImplemented:
            close(got, want, device, what=f"{name}.{what}")
    bs = tuple(theirs.batch_shape)
    q = np.linspace(0.1, 0.9, 4).reshape((4,) + (1,) * len(bs)) * np.ones(bs)
    want = _attempt(theirs.icdf, torch.tensor(q))
    got = _attempt(ours.icdf, mk(q))
    assert (want is NotImplemented) == (got is NotImplemented), f"{name}.icdf"
    if want is not NotImplemented:
        close(got, want, device, what=f"{name}.icdf")
    if theirs.has_enumerate_support:
        for expand in (True, False):
            close(ours.enumerate_support(expand), theirs.enumerate_support(expand), device,
                  what=f"{name}.enumerate_support")
    shape = (3,) + tuple(theirs.batch_shape)
    e, te = ours.expand(shape), theirs.expand(shape)
    assert type(e) is type(ours) and e.batch_shape == te.batch_shape
    close(e.log_prob(v[:1]), te.log_prob(tv[:1]), device, what=f"{name}.expand.log_prob")
    s = ours.sample((5,))
    # torch 2.13 cannot draw from a mixture whose weights broadcast over the batch
    # (its gather index lacks the batch dims); ours draws one index per batch element
    assert tuple(s.shape) == (5,) + tuple(theirs.batch_shape + theirs.event_shape)
    assert s.device == ot.device(device) and bool(ours.support.check(s).all())


@pytest.mark.parametrize("name", NAMES)
def test_composite_log_prob_gradients_match_torch(name, device):
    """Every parameter of every part gets torch's gradient of the summed log-density."""
    leaves = {"ours": [], "torch": []}

    def grad_lib(lib):
        L, make = _lib(lib, device)

        def t(a):
            x = make(a).requires_grad_()
            leaves[lib].append(x)
            return x
        return L, t
    ours = _mixtures(*grad_lib("ours"))[name]
    theirs = _mixtures(*grad_lib("torch"))[name]
    v = _lib("ours", device)[1](VALUES[name])
    ours.log_prob(v).sum().backward()
    theirs.log_prob(torch.tensor(VALUES[name])).sum().backward()
    checked = 0
    for o, t in zip(leaves["ours"], leaves["torch"]):
        if t.grad is not None:
            assert o.grad is not None, f"{name}: no gradient reached a parameter"
            close(o.grad, t.grad, device, what=f"{name} d log_prob")
            checked += 1
    assert checked >= 1


@pytest.mark.parametrize("name", ["normal", "shared_weights"])
def test_mixture_draws_have_the_mixture_law(name, device):
    """Mixture draws: the mixture's mean and variance (law of total variance) and its cdf
    at a few points, over 40000 draws."""
    ours, _ = _both(name, device)
    ot.manual_seed(5)
    x = ours.sample((40000,)).cpu().numpy().astype(np.float64)
    mean, var = ours.mean.cpu().numpy(), ours.variance.cpu().numpy()
    n = x.shape[0]
    assert (np.abs(x.mean(0) - mean) < 5 * np.sqrt(var / n)).all(), (x.mean(0), mean)
    np.testing.assert_allclose(x.var(0), var, rtol=0.05)
    for point in (-1.0, 0.5, 2.0):
        ecdf = (x <= point).mean(0)
        cdf = ours.cdf(ot.full((2,), point, device=device).to(dtype_for(device)))
        np.testing.assert_allclose(ecdf, cdf.cpu().numpy(), atol=0.015)


def test_mixture_and_independent_errors_are_torchs():
    D = ot.distributions
    with pytest.raises(ValueError, match="instance of torch.distributions.Categorical"):
        D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(ot.zeros(3), ot.ones(3)))
    with pytest.raises(ValueError, match="does not equal"):
        D.MixtureSameFamily(D.Categorical(ot.ones(2)), D.Normal(ot.zeros(3), ot.ones(3)))
    with pytest.raises(ValueError, match="is not compatible"):
        D.MixtureSameFamily(D.Categorical(ot.ones(4, 3)),
                            D.Normal(ot.zeros(2, 3), ot.ones(2, 3)))
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims"):
        D.Independent(D.Normal(ot.zeros(3), ot.ones(3)), 2)
