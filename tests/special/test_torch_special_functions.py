"""torch.special's whole function list on omnitensor, against real torch (values in float64
and float32, gradients, argument rules) on every device, and its names under the torch face."""
import math

import numpy as np
import pytest

import omnitensor as ot
import omnitensor.special as S

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
#: a wide grid with the branch points of the Cephes approximations and the edges
X = np.concatenate([np.linspace(-30, 30, 241), RNG.normal(0, 3, 60),
                    [0.0, -0.0, 1e-6, 1e-3, 2.0, 2.09, -2.09, 5.0, 8.0, 100.0, 200.0, 700.0,
                     math.inf, -math.inf, math.nan]])

UNARY = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai", "spherical_bessel_j0",
         "i0", "i0e", "i1", "i1e", "modified_bessel_i0", "modified_bessel_i1",
         "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
         "scaled_modified_bessel_k1", "gammaln", "digamma", "psi", "erfcx", "erf", "erfc",
         "ndtr", "log_ndtr", "entr", "expit", "sinc", "exp2", "expm1", "log1p", "round"]
#: functions whose domain is an interval, with their grid
INTERVAL = {"erfinv": np.concatenate([np.linspace(-0.999, 0.999, 41), [-1.0, 1.0, 1.5]]),
            "ndtri": np.concatenate([np.linspace(0.001, 0.999, 41), [0.0, 1.0, 2.0]]),
            "logit": np.concatenate([np.linspace(0.001, 0.999, 41), [0.0, 1.0]])}
POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
               "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
               "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]
TOL = {"float64": dict(rtol=1e-10, atol=1e-13), "float32": dict(rtol=2e-5, atol=2e-6)}


def _dtypes(device):
    return [d for d in ("float64", "float32") if ot.device(device).supports_dtype(getattr(ot, d))]


def _same(got, want, dtype, **tol):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    inf = np.isinf(want)
    np.testing.assert_array_equal(got[inf], want[inf])
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], **(tol or TOL[dtype]))


def _pair(x, dtype, device, requires_grad=False):
    return (ot.tensor(x, dtype=getattr(ot, dtype), device=device, requires_grad=requires_grad),
            torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=requires_grad))


@pytest.mark.parametrize("name", UNARY + sorted(INTERVAL))
def test_unary_values_match_torch(name, device):
    x = INTERVAL.get(name, X)
    for dtype in _dtypes(device):
        ours, theirs = _pair(x, dtype, device)
        got = getattr(S, name)(ours)
        want = getattr(torch.special, name)(theirs)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        _same(got.cpu().numpy(), want.numpy(), dtype)


@pytest.mark.parametrize("name", ["bessel_j0", "i0e", "gammaln", "erfcx", "ndtr", "entr",
                                  "exp2", "chebyshev_polynomial_t"])
def test_integer_and_bool_inputs_promote_to_float(name, device):
    args = (3,) if name.startswith("chebyshev") else ()
    for data in ([0, 1, 2, 5], [True, False]):
        got = getattr(S, name)(ot.tensor(data, device=device), *args)
        want = getattr(torch.special, name)(torch.tensor(data), *args)
        assert got.dtype == ot.float32 and want.dtype == torch.float32
        _same(got.cpu().numpy(), want.numpy(), "float32")


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_match_torch(name, device):
    x = np.concatenate([np.linspace(-1.2, 1.2, 49), [-1.0, 1.0, 0.0, 0.5, 2.0, -3.0]])
    for dtype in _dtypes(device):
        tol = TOL[dtype] if dtype == "float64" else dict(rtol=1e-4, atol=2e-5)
        ours, theirs = _pair(x, dtype, device)
        for n in (-1, 0, 1, 2, 3, 5, 7, 9, 12, 20):
            _same(getattr(S, name)(ours, n).cpu().numpy(),
                  getattr(torch.special, name)(theirs, n).numpy(), dtype, **tol)
        # a degree per element (a tensor, broadcast against x), and a number as x
        degrees = np.arange(len(x)) % 15
        _same(getattr(S, name)(ours, ot.tensor(degrees, device=device)).cpu().numpy(),
              getattr(torch.special, name)(theirs, torch.tensor(degrees)).numpy(), dtype,
              **tol)
        _same(getattr(S, name)(0.3, ot.tensor(degrees[:12], device=device)).cpu().numpy(),
              getattr(torch.special, name)(0.3, torch.tensor(degrees[:12])).numpy(),
              "float32", rtol=1e-4, atol=2e-5)


def test_polygamma_and_zeta_match_torch(device):
    xp = np.concatenate([np.linspace(-5.5, 10, 41), [0.5, 1.0, 2.0, 30.0]])
    q = np.concatenate([np.linspace(-3.5, 10, 28), [1.0, 2.0]])
    for dtype in _dtypes(device):
        ours, theirs = _pair(xp, dtype, device)
        for n in range(5):
            _same(S.polygamma(n, ours).cpu().numpy(),
                  torch.special.polygamma(n, theirs).numpy(), dtype)
        oq, tq = _pair(q, dtype, device)
        for s in (1.0, 1.5, 2.0, 3.0, 4.5, 0.5):
            os_, ts = _pair(s, dtype, device)
            _same(S.zeta(os_, oq).cpu().numpy(), torch.special.zeta(ts, tq).numpy(), dtype)
            _same(S.zeta(s, oq).cpu().numpy(), torch.special.zeta(s, tq).numpy(), dtype)
        ox, tx = _pair([2.0, 3.5, 6.0], dtype, device)
        _same(S.zeta(ox, 2.5).cpu().numpy(), torch.special.zeta(tx, 2.5).numpy(), dtype)
        for p in (1, 2, 4):
            ours, theirs = _pair([2.6, 4.0, 7.25], dtype, device)
            _same(S.multigammaln(ours, p).cpu().numpy(),
                  torch.special.multigammaln(theirs, p).numpy(), dtype)


def test_incomplete_gamma_and_binary_functions_match_torch(device):
    a = np.array([0.5, 1.0, 2.5, 10.0, 30.0, 0.1])
    x = np.array([0.2, 1.0, 3.0, 8.0, 40.0, 0.0])
    for dtype in _dtypes(device):
        tol = TOL[dtype] if dtype == "float64" else dict(rtol=1e-5, atol=1e-6)
        (oa, ta), (ox, tx) = _pair(a, dtype, device), _pair(x, dtype, device)
        for name in ("gammainc", "gammaincc", "xlogy", "xlog1py"):
            _same(getattr(S, name)(oa, ox).cpu().numpy(),
                  getattr(torch.special, name)(ta, tx).numpy(), dtype, **tol)
        m = RNG.normal(size=(3, 5))
        om, tm = _pair(m, dtype, device)
        for name in ("softmax", "log_softmax"):
            _same(getattr(S, name)(om, 1).cpu().numpy(),
                  getattr(torch.special, name)(tm, 1).numpy(), dtype, **tol)
        _same(S.logsumexp(om, 0).cpu().numpy(), torch.special.logsumexp(tm, 0).numpy(), dtype,
              **tol)
        _same(S.logit(om.sigmoid(), eps=1e-3).cpu().numpy(),
              torch.special.logit(tm.sigmoid(), eps=1e-3).numpy(), dtype, **tol)


# ------------------------------------------------------------------------- gradients
#: (name, grid) of the functions torch differentiates, one argument
DIFFERENTIABLE = [("gammaln", [0.3, 2.5, 11.0, -1.5, -3.7]), ("digamma", [0.3, 2.5, 11.0, -1.5]),
                  ("i0", [-3.0, 0.0, 0.4, 9.0, 31.0]), ("i0e", [-3.0, 0.0, 0.4, 9.0, 31.0]),
                  ("i1", [-3.0, 0.0, 0.4, 9.0, 31.0]), ("i1e", [-3.0, 0.0, 0.4, 9.0, 31.0]),
                  ("erfcx", [-3.0, 0.0, 0.5, 3.9, 4.1, 20.0]), ("erfinv", [-0.9, 0.0, 0.7]),
                  ("ndtri", [0.01, 0.5, 0.97]), ("log_ndtr", [-20.0, -3.0, 0.0, 4.0]),
                  ("ndtr", [-3.0, 0.1, 2.0]), ("entr", [0.2, 1.0, 3.0]),
                  ("sinc", [-2.3, 0.4, 1.7]), ("expit", [-2.0, 0.5]), ("exp2", [-1.0, 3.2]),
                  ("logit", [0.2, 0.6])]


@pytest.mark.parametrize("name,grid", DIFFERENTIABLE)
def test_gradients_match_torch_and_finite_differences(name, grid, device):
    ours, theirs = _pair(grid, "float64", device, requires_grad=True)
    getattr(S, name)(ours).sum().backward()
    getattr(torch.special, name)(theirs).sum().backward()
    np.testing.assert_allclose(ours.grad.cpu().numpy(), theirs.grad.numpy(), rtol=1e-8,
                               atol=1e-12)
    assert ot.autograd.gradcheck(getattr(S, name), (ours.detach().requires_grad_(),),
                                 atol=1e-6, rtol=1e-5)


def test_gradients_of_polygamma_zeta_and_binary_functions(device):
    x, tx = _pair([0.4, 1.5, 6.0, -2.5], "float64", device, requires_grad=True)
    for n in (1, 2, 3):
        x.grad = tx.grad = None
        S.polygamma(n, x).sum().backward()
        torch.special.polygamma(n, tx).sum().backward()
        np.testing.assert_allclose(x.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-8)
    # zeta: differentiable in q (torch's), not in s
    s, ts = _pair([2.0, 3.5, 5.0], "float64", device)
    q, tq = _pair([0.7, 2.0, 4.5], "float64", device, requires_grad=True)
    S.zeta(s, q).sum().backward()
    torch.special.zeta(ts, tq).sum().backward()
    np.testing.assert_allclose(q.grad.cpu().numpy(), tq.grad.numpy(), rtol=1e-8)
    with pytest.raises(NotImplementedError, match="zeta"):
        S.zeta(s.detach().requires_grad_(), q.detach()).sum().backward()
    m, tm = _pair([2.6, 4.0], "float64", device, requires_grad=True)
    S.multigammaln(m, 3).sum().backward()
    torch.special.multigammaln(tm, 3).sum().backward()
    np.testing.assert_allclose(m.grad.cpu().numpy(), tm.grad.numpy(), rtol=1e-9)
    # gammainc/gammaincc in x, xlog1py in both
    for name in ("gammainc", "gammaincc", "xlog1py"):
        (a, ta), (y, ty) = (_pair([0.5, 2.5, 10.0], "float64", device, requires_grad=True),
                            _pair([0.3, 3.0, 12.0], "float64", device, requires_grad=True))
        getattr(S, name)(a if name == "xlog1py" else a.detach(), y).sum().backward()
        getattr(torch.special, name)(ta if name == "xlog1py" else ta.detach(), ty).sum().backward()
        np.testing.assert_allclose(y.grad.cpu().numpy(), ty.grad.numpy(), rtol=1e-8)
        if name == "xlog1py":
            np.testing.assert_allclose(a.grad.cpu().numpy(), ta.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("name", ["bessel_j0", "bessel_y1", "airy_ai", "modified_bessel_i0",
                                  "modified_bessel_k1", "scaled_modified_bessel_k0",
                                  "spherical_bessel_j0", "chebyshev_polynomial_t",
                                  "hermite_polynomial_h"])
def test_functions_torch_does_not_differentiate_return_no_grad(name, device):
    x = ot.tensor([0.5, 1.5], dtype=ot.float64, device=device, requires_grad=True)
    args = (2,) if "polynomial" in name else ()
    out = getattr(S, name)(x, *args)
    assert out.requires_grad is getattr(torch.special, name)(
        torch.tensor([0.5, 1.5], requires_grad=True), *args).requires_grad is False


# ------------------------------------------------------------------ argument errors
def test_bad_arguments_are_refused_as_torch(device):
    x = ot.tensor([1.0, 2.0], device=device)
    with pytest.raises(RuntimeError, match="negative n"):
        S.polygamma(-1, x)
    with pytest.raises(TypeError, match="must be int"):
        S.polygamma(1.5, x)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        S.multigammaln(x, 0)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        torch.special.multigammaln(torch.tensor([1.0, 2.0]), 0)
    for name, args in (("zeta", (2.0, 3.0)), ("chebyshev_polynomial_t", (0.5, 2)),
                       ("xlog1py", (1, 2))):
        with pytest.raises(TypeError, match="invalid combination"):
            getattr(S, name)(*args)
        with pytest.raises(TypeError):
            getattr(torch.special, name)(*args)
    with pytest.raises(TypeError, match="must be a Tensor or a number"):
        S.zeta(x, "2")


# -------------------------------------------------------------------- torch's names
def test_every_torch_special_function_exists_under_its_name():
    import omnitensor.torch_face as tf
    theirs = {n for n in dir(torch.special) if not n.startswith("_") and
              callable(getattr(torch.special, n)) and n != "Tensor"}
    missing = sorted(n for n in theirs if not hasattr(S, n))
    assert missing == [], missing
    assert tf.special is S
    assert set(S.__all__) >= theirs


def test_top_level_torch_aliases(device):
    import omnitensor.torch_face as tf
    x = np.array([0.5, 2.0, 7.5])
    ours, theirs = _pair(x, "float64", device)
    for top, special in (("i0", "i0"), ("lgamma", "gammaln"), ("digamma", "digamma"),
                         ("erfinv", None)):
        fn = getattr(tf, top)
        want = getattr(torch, top)(theirs if top != "erfinv" else theirs / 10)
        got = fn(ours if top != "erfinv" else ours / 10)
        _same(got.cpu().numpy(), want.numpy(), "float64")
        if special:
            assert fn is getattr(S, special)


#: the points each function's second derivative is compared at (inside its domain)
_SECOND_DERIVATIVE_GRIDS = {
    **{n: [0.7, 2.5, -1.3] for n in ("gammaln", "digamma")},
    **{n: [0.7, 2.5, -1.3, 12.0] for n in ("i0", "i0e", "i1", "i1e", "erfcx")},
    "erfinv": [-0.9, 0.1, 0.7], "ndtri": [0.01, 0.4, 0.97],
}


@pytest.mark.parametrize("name", list(_SECOND_DERIVATIVE_GRIDS))
def test_second_derivatives_match_torch(name, device):
    grid = _SECOND_DERIVATIVE_GRIDS[name]
    x, tx = _pair(grid, "float64", device, requires_grad=True)
    (g,) = ot.autograd.grad(getattr(S, name)(x).sum(), x, create_graph=True)
    (h,) = ot.autograd.grad(g.sum(), x)
    (tg,) = torch.autograd.grad(getattr(torch.special, name)(tx).sum(), tx, create_graph=True)
    (th,) = torch.autograd.grad(tg.sum(), tx)
    np.testing.assert_allclose(h.cpu().numpy(), th.numpy(), rtol=1e-8, atol=1e-12)


def test_out_argument_as_torch(device):
    x = np.array([0.5, 1.5, 3.0])
    ours, theirs = _pair(x, "float64", device)
    for name, args in (("bessel_j0", ()), ("gammaln", ()), ("erfcx", ()),
                       ("chebyshev_polynomial_t", (3,)), ("multigammaln", (2,)),
                       ("logsumexp", (0,))):
        out = ot.empty(0, dtype=ot.float64, device=device)  # resized to the result
        got = getattr(S, name)(ours, *args, out=out)
        want = getattr(torch.special, name)(theirs, *args)
        assert got is out
        _same(out.cpu().numpy(), want.numpy(), "float64")
    out = ot.empty(3, dtype=ot.float64, device=device)
    assert S.polygamma(2, ours, out=out) is out
    _same(out.cpu().numpy(), torch.special.polygamma(2, theirs).numpy(), "float64")
    with pytest.raises(Exception, match="dtype"):
        S.i0(ours, out=ot.empty(3, dtype=ot.float32, device=device))
    import inspect
    assert "out" in inspect.signature(S.zeta).parameters


def test_top_level_gamma_family_aliases(device):
    import omnitensor.torch_face as tf
    (a, ta), (x, tx) = (_pair([0.5, 2.5, 10.0], "float64", device),
                        _pair([0.3, 3.0, 12.0], "float64", device))
    for top in ("igamma", "igammac"):
        _same(getattr(tf, top)(a, x).cpu().numpy(), getattr(torch, top)(ta, tx).numpy(),
              "float64")
    _same(tf.mvlgamma(x + 2.0, p=3).cpu().numpy(), torch.mvlgamma(tx + 2.0, p=3).numpy(),
          "float64")
    assert tf.mvlgamma is S.multigammaln


@pytest.mark.parametrize("name", ["erfinv", "ndtri"])
def test_float32_tails_as_accurate_as_torchs(name, device):
    """Near |y| = 1 (erfinv) and far in the tails (ndtri, p down to 1e-30) the float32
    result stays within twice torch's float32 error of the float64 value (Newton on erf
    there lost 8e-7 in x: erf(x) - y differs two numbers near 1); so does the gradient,
    which reads it, up to what one float32 rounding of x costs it (exp(x^2) in it turns
    x's relative error into x^2 times that)."""
    grid = ([-0.99999, -0.999, -0.98, -0.9, 0.5, 0.9, 0.98, 0.997, 0.99999]
            if name == "erfinv" else [1e-30, 1e-12, 1e-6, 3e-4, 0.02, 0.7, 0.999, 0.9999999])
    ref = getattr(torch.special, name)(torch.tensor(grid, dtype=torch.float64)).numpy()
    t32 = torch.tensor(grid, dtype=torch.float32, requires_grad=True)
    theirs = getattr(torch.special, name)(t32)
    (tg,) = torch.autograd.grad(theirs.sum(), t32)
    x = ot.tensor(np.asarray(grid, np.float32), device=device, requires_grad=True)
    ours = getattr(S, name)(x)
    (g,) = ot.autograd.grad(ours.sum(), x)
    t64 = torch.tensor(np.asarray(grid, np.float32).astype(np.float64), requires_grad=True)
    (gref,) = torch.autograd.grad(getattr(torch.special, name)(t64).sum(), t64)
    x2 = ref * ref * (1.0 if name == "erfinv" else 0.5)
    for got, want, exact, slack in ((ours, theirs, ref, 4e-7),
                                    (g, tg, gref.numpy(), 4e-7 + 2 * x2 * 6e-8)):
        err = np.abs(got.detach().cpu().numpy() - exact)
        err_t = np.abs(want.detach().numpy() - exact)
        assert (err <= 2 * err_t + slack * np.abs(exact)).all(), (err, err_t)


