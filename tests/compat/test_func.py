"""omnitensor.func and autograd.functional against torch.func / torch.autograd.functional."""
import numpy as np
import pytest

import omnitensor as ot
import omnitensor.func as of

torch = pytest.importorskip("torch")
tf = torch.func
X = np.array([0.1, 0.5, 0.9])
Y = np.array([1.0, 2.0, 3.0])


def f(x):
    return (x.sin() * x).sum()


def h(x, y):
    return (x * y).exp()


def _close(a, b):
    a = a if isinstance(a, (tuple, list)) else (a,)
    b = b if isinstance(b, (tuple, list)) else (b,)
    assert len(a) == len(b)
    for u, v in zip(a, b):
        np.testing.assert_allclose(u.cpu().numpy(), v.detach().numpy(), rtol=1e-10, atol=1e-12)


def _args(device):
    return (ot.tensor(X, device=device), ot.tensor(Y, device=device),
            torch.tensor(X), torch.tensor(Y))


def test_grad_and_value(device):
    x, y, tx, ty = _args(device)
    _close(of.grad(f)(x), tf.grad(f)(tx))
    g, v = of.grad_and_value(f)(x)
    tg, tv = tf.grad_and_value(f)(tx)
    _close((g, v), (tg, tv))
    _close(of.grad(lambda a, b: h(a, b).sum(), argnums=(0, 1))(x, y),
           tf.grad(lambda a, b: h(a, b).sum(), argnums=(0, 1))(tx, ty))
    g, aux = of.grad(lambda a: (f(a), a * 2), has_aux=True)(x)
    _close(aux, tx * 2)
    assert not g.requires_grad
    with pytest.raises(RuntimeError, match="single-element"):
        of.grad(lambda a: a * 2)(x)


def test_nested_grad_and_hessian(device):
    x, y, tx, ty = _args(device)
    s = ot.tensor(0.7, dtype=ot.float64, device=device)
    _close(of.grad(of.grad(lambda t: (t ** 3).sin()))(s),
           tf.grad(tf.grad(lambda t: (t ** 3).sin()))(torch.tensor(0.7, dtype=torch.float64)))
    _close(of.hessian(f)(x), tf.hessian(f)(tx))


def test_jacobians_vjp_jvp(device):
    x, y, tx, ty = _args(device)
    _close(of.jacrev(h, argnums=1)(x, y), tf.jacrev(h, argnums=1)(tx, ty))
    _close(of.jacfwd(h)(x, y), tf.jacfwd(h)(tx, ty))
    _close(of.jacrev(h, argnums=(0, 1))(x, y), tf.jacrev(h, argnums=(0, 1))(tx, ty))
    out, fn = of.vjp(h, x, y)
    tout, tfn = tf.vjp(h, tx, ty)
    _close(out, tout)
    _close(fn(ot.ones(3, dtype=ot.float64, device=device)),
           tfn(torch.ones(3, dtype=torch.float64)))
    _close(of.jvp(h, (x, y), (y, x)), tf.jvp(h, (tx, ty), (ty, tx)))


def test_functional_call_and_grad_over_params(device):
    ot.manual_seed(0)
    m = ot.nn.Linear(3, 2).to(device)
    tm = torch.nn.Linear(3, 2).double()
    with torch.no_grad():
        tm.weight.copy_(torch.tensor(m.weight.detach().cpu().numpy()))
        tm.bias.copy_(torch.tensor(m.bias.detach().cpu().numpy()))
    p = {k: v.detach().to(ot.float64) * 2 for k, v in m.named_parameters()}
    m = m.to(ot.float64)
    tp = {k: v.detach() * 2 for k, v in tm.named_parameters()}
    xin = ot.tensor(X[None], device=device)
    _close(of.functional_call(m, p, (xin,)), tf.functional_call(tm, tp, (torch.tensor(X[None]),)))
    assert ot.allclose(m.weight, p["weight"] / 2)  # restored
    g = of.grad(lambda q, a: of.functional_call(m, q, (a,)).sum())(p, xin)
    tg = tf.grad(lambda q, a: tf.functional_call(tm, q, (a,)).sum())(tp, torch.tensor(X[None]))
    _close([g["weight"], g["bias"]], [tg["weight"], tg["bias"]])
    with pytest.raises(AttributeError, match="no parameter or buffer 'nope'"):
        of.functional_call(m, {"nope": p["bias"]}, (xin,))


def test_vmap_loops_and_stacks(device):
    a = np.arange(12.0).reshape(4, 3)
    ta = torch.tensor(a)
    _close(of.vmap(lambda r, s: (r * s).sum())(ot.tensor(a, device=device),
                                               ot.tensor(a + 1, device=device)),
           tf.vmap(lambda r, s: (r * s).sum())(ta, ta + 1))
    _close(of.vmap(lambda r, w: r * w, in_dims=(1, None))(ot.tensor(a, device=device),
                                                         ot.tensor(2.0, device=device)),
           tf.vmap(lambda r, w: r * w, in_dims=(1, None))(ta, torch.tensor(2.0)))
    _close(of.vmap(of.grad(f))(ot.tensor(a, device=device)), tf.vmap(tf.grad(f))(ta))
    with pytest.raises(ValueError, match="different sizes"):
        of.vmap(lambda r, s: r + s)(ot.ones(3), ot.ones(4))


def test_autograd_functional(device):
    x, y, tx, ty = _args(device)
    AF, TAF = ot.autograd.functional, torch.autograd.functional
    g = lambda t: (t ** 3).sin()  # noqa: E731
    _close(AF.jacobian(g, x), TAF.jacobian(g, tx))
    _close(AF.jacobian(h, (x, y)), TAF.jacobian(h, (tx, ty)))
    _close(AF.hessian(f, x), TAF.hessian(f, tx))
    _close(AF.vjp(g, x, y)[1], TAF.vjp(g, tx, ty)[1])
    _close(AF.jvp(g, x, y)[1], TAF.jvp(g, tx, ty)[1])
    _close(AF.hvp(f, x, y)[1], TAF.hvp(f, tx, ty)[1])
    _close(AF.vhp(f, x, y)[1], TAF.vhp(f, tx, ty)[1])
