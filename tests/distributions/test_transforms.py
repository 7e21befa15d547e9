"""Transforms, constraints and the constraint registry against torch: forward, inverse,
log_abs_det_jacobian (also against autograd's Jacobian), shapes, sign, bijectivity,
domains, caching; every constraint's check; biject_to/transform_to for every registered
constraint type."""
import numpy as np
import pytest

import omnitensor as ot
import omnitensor.distributions as D

from distribution_helpers import TD, close, dtype_for, torch

C, TC = D.constraints, TD.constraints
T, TT = D.transforms, TD.transforms
RNG = np.random.default_rng(0)
X = RNG.normal(size=(4, 3))
POS = np.abs(X) + 0.3


def _pair(make, device):
    """Build the same transform in both libraries; ``make(lib, tensor)``."""
    def ours_tensor(a):
        return ot.tensor(np.asarray(a, dtype=np.float64), device=device).to(dtype_for(device))

    def torch_tensor(a):
        return torch.tensor(np.asarray(a, dtype=np.float64))
    return make(D, ours_tensor), make(TD, torch_tensor)


CASES = {
    "Exp": (lambda L, t: L.transforms.ExpTransform(), X),
    "Power": (lambda L, t: L.transforms.PowerTransform(t([0.5, 2.0, -1.5])), POS),
    "Sigmoid": (lambda L, t: L.transforms.SigmoidTransform(), X),
    "Softplus": (lambda L, t: L.transforms.SoftplusTransform(), X),
    "Tanh": (lambda L, t: L.transforms.TanhTransform(), X),
    "Abs": (lambda L, t: L.transforms.AbsTransform(), X),
    "Affine": (lambda L, t: L.transforms.AffineTransform(t([1.0, -2.0, 0.5]),
                                                         t([2.0, -0.5, 3.0])), X),
    "AffineScalar": (lambda L, t: L.transforms.AffineTransform(1.5, -2.0), X),
    "AffineEvent": (lambda L, t: L.transforms.AffineTransform(t([1.0, -2.0, 0.5]),
                                                              t([2.0, -0.5, 3.0]), event_dim=1),
                    X),
    "Softmax": (lambda L, t: L.transforms.SoftmaxTransform(), X),
    "StickBreaking": (lambda L, t: L.transforms.StickBreakingTransform(), X),
    "LowerCholesky": (lambda L, t: L.transforms.LowerCholeskyTransform(),
                      RNG.normal(size=(2, 3, 3))),
    "PositiveDefinite": (lambda L, t: L.transforms.PositiveDefiniteTransform(),
                         RNG.normal(size=(2, 3, 3))),
    "CorrCholesky": (lambda L, t: L.transforms.CorrCholeskyTransform(),
                     RNG.normal(size=(4, 6))),
    "Compose": (lambda L, t: L.transforms.ComposeTransform(
        [L.transforms.AffineTransform(0.5, 2.0), L.transforms.ExpTransform(),
         L.transforms.PowerTransform(t([1.5]))]), X),
    "ComposeEvent": (lambda L, t: L.transforms.ComposeTransform(
        [L.transforms.ExpTransform(), L.transforms.StickBreakingTransform()]), X),
    "Independent": (lambda L, t: L.transforms.IndependentTransform(
        L.transforms.SigmoidTransform(), 1), X),
    "Reshape": (lambda L, t: L.transforms.ReshapeTransform((3,), (3, 1)), X),
    "Cat": (lambda L, t: L.transforms.CatTransform(
        [L.transforms.ExpTransform(), L.transforms.SigmoidTransform()], dim=1,
        lengths=[1, 2]), X),
    "Stack": (lambda L, t: L.transforms.StackTransform(
        [L.transforms.ExpTransform(), L.transforms.TanhTransform(),
         L.transforms.AffineTransform(1.0, 3.0)], dim=1), X),
    "CDF": (lambda L, t: L.transforms.CumulativeDistributionTransform(
        L.Normal(t([0.0, 1.0, -1.0]), t([1.0, 2.0, 0.5]))), X),
    "InverseExp": (lambda L, t: L.transforms.ExpTransform().inv, POS),
}


def _tensors(x, device):
    return (ot.tensor(np.asarray(x), device=device).to(dtype_for(device)),
            torch.tensor(np.asarray(x)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_transform_matches_torch(name, device):
    make, x = CASES[name]
    t, tt = _pair(make, device)
    ox, tx = _tensors(x, device)
    y, ty = t(ox), tt(tx)
    close(y, ty, device, what=f"{name} forward")
    close(t.inv(y), tt.inv(ty), device, what=f"{name} inverse")
    if tt.bijective:
        close(t.log_abs_det_jacobian(ox, y), tt.log_abs_det_jacobian(tx, ty), device,
              what=f"{name} log_abs_det_jacobian")
        close(t.inv.log_abs_det_jacobian(y, ox), tt.inv.log_abs_det_jacobian(ty, tx),
              device, what=f"{name} inverse log_abs_det_jacobian")
    assert t.bijective == tt.bijective
    assert t.domain.event_dim == tt.domain.event_dim
    assert t.codomain.event_dim == tt.codomain.event_dim
    assert type(t.domain).__name__ == type(tt.domain).__name__
    assert type(t.codomain).__name__ == type(tt.codomain).__name__
    for shape in (tuple(x.shape), (5,) + tuple(x.shape)):
        assert tuple(t.forward_shape(shape)) == tuple(tt.forward_shape(shape))
        yshape = tuple(tt.forward_shape(shape))
        assert tuple(t.inverse_shape(yshape)) == tuple(tt.inverse_shape(yshape))
    try:
        want_sign = tt.sign
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            t.sign  # noqa: B018
    else:
        got_sign = t.sign
        if isinstance(want_sign, torch.Tensor):
            close(got_sign, want_sign, device)
        else:
            assert got_sign == want_sign
    assert bool(t.codomain.check(y).all())
    assert repr(t).split("(")[0] == repr(tt).split("(")[0]


ELEMENTWISE = ["Exp", "Power", "Sigmoid", "Softplus", "Tanh", "Affine", "AffineScalar",
               "StickBreaking", "CorrCholesky"]


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_log_abs_det_jacobian_is_autograds(name):
    """log|det J| against the Jacobian autograd computes, event by event (float64)."""
    make, x = CASES[name]
    t, _ = _pair(make, "cpu")
    for row in np.asarray(x)[:2]:
        xr = ot.tensor(row)
        jac = ot.autograd.functional.jacobian(lambda v: t(v), xr).numpy()
        if name == "CorrCholesky":  # the free entries: the strict lower triangle
            n = jac.shape[0]
            rows, cols = np.tril_indices(n, -1)
            jac = jac[rows, cols]
        if name == "StickBreaking":  # K-1 free coordinates of a K-simplex point
            jac = jac[:-1]
        ladj = t.log_abs_det_jacobian(xr, t(xr)).numpy()
        want = np.log(np.abs(np.linalg.det(jac))) if jac.ndim == 2 and \
            name in ("StickBreaking", "CorrCholesky") else np.log(np.abs(np.diag(jac)))
        np.testing.assert_allclose(ladj, want, rtol=1e-9, atol=1e-12)


def test_caching_and_inverse_identity():
    x = ot.tensor(X)
    cached = T.ExpTransform(cache_size=1)
    y = cached(x)
    assert cached(x) is y and cached.inv(y) is x
    plain = T.ExpTransform()
    assert plain(x) is not plain(x)
    assert plain.inv.inv is plain and plain.inv is plain.inv
    assert plain.with_cache(1)._cache_size == 1 and plain.with_cache(0) is plain
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)
    tanh = T.TanhTransform(cache_size=1)
    s = tanh(ot.tensor([30.0]))  # saturates to 1: only the cache recovers x
    assert float(tanh.inv(s)) == 30.0
    comp = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)], cache_size=1)
    assert all(p._cache_size == 1 for p in comp.parts)
    assert comp.inv.inv is comp
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.SigmoidTransform()
    assert T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0)
    assert T.identity_transform(x) is x
    with pytest.raises(ValueError, match="different numbers of elements"):
        T.ReshapeTransform((2, 3), (4,))
    with pytest.raises(ValueError, match="Shape mismatch"):
        T.ReshapeTransform((3,), (3, 1)).forward_shape((4, 2))
    with pytest.raises(ValueError, match="flattened lower-diagonal"):
        T.CorrCholeskyTransform().forward_shape((5,))


CONSTRAINT_VALUES = [np.array([-1.0, 0.0, 0.5, 1.0, 2.0, np.nan]),
                     np.array([[0.2, 0.8], [0.5, 0.6]]),
                     np.array([[[1.0, 0.0], [0.5, 2.0]], [[1.0, 0.3], [0.3, -1.0]]]),
                     np.array([[0.0, 1.0, 0.0], [1.0, 1.0, 0.0]]),
                     np.array([[2.0, 3.0], [1.0, 4.0]])]
CONSTRAINTS = {
    "real": lambda c: c.real, "positive": lambda c: c.positive,
    "nonnegative": lambda c: c.nonnegative, "unit_interval": lambda c: c.unit_interval,
    "boolean": lambda c: c.boolean, "nonnegative_integer": lambda c: c.nonnegative_integer,
    "positive_integer": lambda c: c.positive_integer,
    "integer_interval": lambda c: c.integer_interval(0, 3),
    "interval": lambda c: c.interval(-0.5, 1.0),
    "half_open_interval": lambda c: c.half_open_interval(0.0, 1.0),
    "greater_than": lambda c: c.greater_than(0.5),
    "greater_than_eq": lambda c: c.greater_than_eq(0.5),
    "less_than": lambda c: c.less_than(1.0), "real_vector": lambda c: c.real_vector,
    "simplex": lambda c: c.simplex, "one_hot": lambda c: c.one_hot,
    "multinomial": lambda c: c.multinomial(5), "independent": lambda c: c.independent(
        c.positive, 1),
    "lower_triangular": lambda c: c.lower_triangular, "lower_cholesky": lambda c: c.lower_cholesky,
    "corr_cholesky": lambda c: c.corr_cholesky, "square": lambda c: c.square,
    "symmetric": lambda c: c.symmetric, "positive_definite": lambda c: c.positive_definite,
    "positive_semidefinite": lambda c: c.positive_semidefinite,
    "cat": lambda c: c.cat([c.positive, c.real], dim=-1, lengths=[1, 1]),
    "stack": lambda c: c.stack([c.positive, c.unit_interval], dim=-1),
}


@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
def test_constraint_matches_torch(name, device):
    c, tc = CONSTRAINTS[name](C), CONSTRAINTS[name](TC)
    assert c.event_dim == tc.event_dim and c.is_discrete == tc.is_discrete
    assert repr(c) == repr(tc)
    for v in CONSTRAINT_VALUES:
        if v.ndim < c.event_dim or (c.event_dim == 2 and v.ndim < 3) or \
                (name == "stack" and v.shape[-1] != 2) or (name == "cat" and v.shape[-1] != 2):
            continue
        try:
            want = tc.check(torch.tensor(v)).numpy()
        except (RuntimeError, ValueError, IndexError):
            continue
        got = c.check(ot.tensor(v, device=device)).cpu().numpy()
        np.testing.assert_array_equal(got, want, err_msg=f"{name} on {v.tolist()}")
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    with pytest.raises(ValueError, match="dependent constraint"):
        C.dependent.check(ot.zeros(1))


REGISTERED = {
    "real": lambda c: c.real, "independent": lambda c: c.independent(c.positive, 1),
    "positive": lambda c: c.positive, "nonnegative": lambda c: c.nonnegative,
    "greater_than": lambda c: c.greater_than(2.0), "less_than": lambda c: c.less_than(1.0),
    "unit_interval": lambda c: c.unit_interval, "interval": lambda c: c.interval(-1.0, 2.0),
    "half_open_interval": lambda c: c.half_open_interval(0.0, 1.0),
    "simplex": lambda c: c.simplex, "corr_cholesky": lambda c: c.corr_cholesky,
    "lower_cholesky": lambda c: c.lower_cholesky,
    "positive_definite": lambda c: c.positive_definite,
    "positive_semidefinite": lambda c: c.positive_semidefinite,
    "cat": lambda c: c.cat([c.positive, c.real], dim=-1, lengths=[1, 2]),
    "stack": lambda c: c.stack([c.positive, c.unit_interval, c.real], dim=-1),
}
INPUTS = {"corr_cholesky": X[:, :3], "lower_cholesky": RNG.normal(size=(2, 3, 3)),
          "positive_definite": RNG.normal(size=(2, 3, 3)),
          "positive_semidefinite": RNG.normal(size=(2, 3, 3))}


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", sorted(REGISTERED))
def test_constraint_registry_matches_torch(registry, name, device):
    c, tc = REGISTERED[name](C), REGISTERED[name](TC)
    try:
        tt = getattr(TD, registry)(tc)
    except NotImplementedError:
        with pytest.raises(NotImplementedError, match="Cannot transform"):
            getattr(D, registry)(c)
        return
    t = getattr(D, registry)(c)
    assert repr(t) == repr(tt)
    ox, tx = _tensors(INPUTS.get(name, X), device)
    y, ty = t(ox), tt(tx)
    close(y, ty, device, what=f"{registry}({name})")
    assert bool(c.check(y).all())
    if tt.bijective:
        close(t.log_abs_det_jacobian(ox, y), tt.log_abs_det_jacobian(tx, ty), device)


def test_registry_register_and_errors():
    reg = D.constraint_registry.ConstraintRegistry()

    class Mine(C.Constraint):
        pass

    reg.register(Mine, lambda c: T.ExpTransform())
    assert isinstance(reg(Mine()), T.ExpTransform)
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean"):
        D.biject_to(C.boolean)
    with pytest.raises(TypeError, match="Constraint subclass or instance"):
        reg.register(int, lambda c: c)
