"""validate_args as torch's: on by default (``__debug__``), switchable per instance and
globally; the same ValueErrors (parameters, supports, shapes) as torch, and the utils."""
import re
import warnings

import numpy as np
import pytest

import omnitensor as ot
import omnitensor.distributions as D

from distribution_helpers import TD, torch

BAD_PARAMS = [
    ("Normal", lambda L, t: L.Normal(t([0.0]), t([-1.0]))),
    ("Bernoulli", lambda L, t: L.Bernoulli(probs=t([1.5]))),
    ("Categorical", lambda L, t: L.Categorical(probs=t([0.5, -0.1]))),
    ("Dirichlet", lambda L, t: L.Dirichlet(t([1.0, 0.0]))),
    ("Gamma", lambda L, t: L.Gamma(t([-1.0]), t([1.0]))),
    ("Uniform", lambda L, t: L.Uniform(t([1.0]), t([0.5]))),
    ("Binomial", lambda L, t: L.Binomial(t([2.5]), t([0.5]))),
    ("Poisson", lambda L, t: L.Poisson(t([-0.5]))),
    ("MultivariateNormal", lambda L, t: L.MultivariateNormal(
        t([0.0, 0.0]), t([[1.0, 2.0], [2.0, 1.0]]))),
    ("LogNormal", lambda L, t: L.LogNormal(t([0.0]), t([0.0]))),
    ("StudentT", lambda L, t: L.StudentT(t([-1.0]))),
    ("VonMises", lambda L, t: L.VonMises(t([0.0]), t([-1.0]))),
]


def _t_ot(x):
    return ot.tensor(np.asarray(x, dtype=np.float64))



@pytest.fixture(autouse=True)
def torch_validates():
    """Real torch's errors are the oracle: its validation on (as its default under
    ``__debug__``), whatever code run earlier in this process switched it to."""
    old = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(True)
    yield
    torch.distributions.Distribution.set_default_validate_args(old)

def _t_torch(x):
    return torch.tensor(np.asarray(x, dtype=np.float64))


def _message(fn):
    with pytest.raises(ValueError) as info:
        fn()
    return str(info.value)


def _gist(msg):
    """The message up to the printed values, with library names and dtypes removed."""
    head = msg.split("but found invalid values")[0]
    head = re.sub(r"omnitensor|torch", "lib", head)
    return re.sub(r",?\s*dtype=lib\.\w+", "", head)


@pytest.mark.parametrize("name,make", BAD_PARAMS, ids=[n for n, _ in BAD_PARAMS])
def test_bad_parameters_raise_torchs_error(name, make):
    ours = _message(lambda: make(D, _t_ot))
    theirs = _message(lambda: make(TD, _t_torch))
    assert _gist(ours) == _gist(theirs)
    # without validation the same construction goes through, as torch's
    args_off = {"validate_args": False}
    if name not in ("MultivariateNormal",):  # its Cholesky needs a PD matrix regardless
        cls = getattr(D, name)
        try:
            with_off = make(type("L", (), {name: lambda *a, **k: cls(*a, **k, **args_off)}),
                            _t_ot)
        except ValueError as e:  # pragma: no cover - a failure of the test itself
            pytest.fail(f"validate_args=False still validated: {e}")
        assert with_off._validate_args is False


BAD_VALUES = [
    ("Normal", lambda L, t: L.Normal(t([0.0]), t([1.0])), [float("nan")]),
    ("Bernoulli", lambda L, t: L.Bernoulli(t([0.5])), [0.5]),
    ("Categorical", lambda L, t: L.Categorical(t([0.5, 0.5])), [2.0]),
    ("Gamma", lambda L, t: L.Gamma(t([1.0]), t([1.0])), [-1.0]),
    ("Beta", lambda L, t: L.Beta(t([1.0]), t([1.0])), [1.5]),
    ("Dirichlet", lambda L, t: L.Dirichlet(t([1.0, 1.0])), [0.3, 0.3]),
    ("Poisson", lambda L, t: L.Poisson(t([1.0])), [1.5]),
    ("Uniform", lambda L, t: L.Uniform(t([0.0]), t([1.0])), [2.0]),
    ("LogNormal", lambda L, t: L.LogNormal(t([0.0]), t([1.0])), [-1.0]),
]


@pytest.mark.parametrize("name,make,value", BAD_VALUES, ids=[n for n, _, _ in BAD_VALUES])
def test_values_outside_the_support_raise_torchs_error(name, make, value):
    ours = _message(lambda: make(D, _t_ot).log_prob(_t_ot(value)))
    theirs = _message(lambda: make(TD, _t_torch).log_prob(_t_torch(value)))
    assert _gist(ours) == _gist(theirs)


def test_shape_errors_and_non_tensors():
    mvn, tmvn = D.MultivariateNormal(ot.zeros(3), ot.eye(3)), \
        TD.MultivariateNormal(torch.zeros(3), torch.eye(3))
    for ours, theirs in ((lambda: mvn.log_prob(ot.zeros(2)),
                          lambda: tmvn.log_prob(torch.zeros(2))),
                         (lambda: D.Normal(ot.zeros(3), 1.0).log_prob(ot.zeros(2)),
                          lambda: TD.Normal(torch.zeros(3), 1.0).log_prob(torch.zeros(2))),
                         (lambda: D.Normal(0.0, 1.0).log_prob(0.5),
                          lambda: TD.Normal(0.0, 1.0).log_prob(0.5))):
        assert _gist(_message(ours)) == _gist(_message(theirs))


def test_default_follows_debug_and_the_switch():
    assert D.Distribution._validate_args is __debug__
    assert D.Normal(0.0, 1.0)._validate_args is True
    try:
        D.Distribution.set_default_validate_args(False)
        d = D.Normal(ot.tensor([0.0]), ot.tensor([-1.0]))  # no error
        assert d._validate_args is False
        assert D.Normal(0.0, 1.0, validate_args=True)._validate_args is True
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")
    with pytest.raises(ValueError, match="Expected parameter scale"):
        D.Normal(ot.tensor([0.0]), ot.tensor([-1.0]))
    # lazily derived parameters are not checked (the given one is)
    D.Bernoulli(logits=ot.tensor([100.0]))


def test_missing_arg_constraints_warn_as_torch():
    class Mine(D.Distribution):
        pass

    with pytest.warns(UserWarning, match="does not define `arg_constraints`"):
        Mine()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Mine(validate_args=False)


def test_utils_match_torch():
    from omnitensor.distributions import utils as U
    tu = torch.distributions.utils
    p = np.array([[1e-12, 0.3, 0.7], [0.5, 0.25, 0.25]])
    for fn in ("clamp_probs", "probs_to_logits", "logits_to_probs"):
        for kw in ({}, {"is_binary": True}) if fn != "clamp_probs" else ({},):
            np.testing.assert_allclose(getattr(U, fn)(ot.tensor(p), **kw).numpy(),
                                       getattr(tu, fn)(torch.tensor(p), **kw).numpy(),
                                       rtol=1e-12)
    m = np.arange(16.0).reshape(4, 4)
    for diag in (0, -1, -2, 1):
        v = U.tril_matrix_to_vec(ot.tensor(m), diag)
        tv = tu.tril_matrix_to_vec(torch.tensor(m), diag)
        np.testing.assert_array_equal(v.numpy(), tv.numpy())
        np.testing.assert_array_equal(U.vec_to_tril_matrix(v, diag).numpy(),
                                      tu.vec_to_tril_matrix(tv, diag).numpy())
    a, b = U.broadcast_all(ot.zeros(2, 1, dtype=ot.float64), 3.0)
    assert a.shape == (2, 1) and b.shape == (2, 1) and b.dtype == ot.float64
    with pytest.raises(ValueError, match="numbers.Number or Tensor"):
        U.broadcast_all("x", 1.0)
    assert U._sum_rightmost(ot.ones(2, 3, 4), 2).tolist() == [12.0, 12.0]
    assert tuple(U._standard_normal((2, 3), ot.float32, "cpu").shape) == (2, 3)
    assert U.euler_constant == pytest.approx(tu.euler_constant, rel=1e-15)
    calls = []

    class Lazy:
        @U.lazy_property
        def x(self):
            calls.append(1)
            return 5

    o = Lazy()
    assert o.x == 5 and o.x == 5 and calls == [1] and isinstance(Lazy.x, U.lazy_property)
