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
    with pytest.raises(RuntimeError, match="scalar Tensor"):
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
    # a key naming no parameter or buffer is set as an attribute for the call (torch)
    of.functional_call(m, {"nope": p["bias"]}, (xin,))
    tf.functional_call(tm, {"nope": tp["bias"]}, (torch.tensor(X[None]),))
    assert not hasattr(m, "nope") and not hasattr(tm, "nope")
    with pytest.raises(RuntimeError, match="Unexpected key\\(s\\): 'nope'"):
        of.functional_call(m, {**p, "nope": p["bias"]}, (xin,), strict=True)


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
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        of.vmap(lambda r, s: r + s)(ot.ones(3), ot.ones(4))


def test_autograd_functional(device):
    x, y, tx, ty = _args(device)
    AF, TAF = ot.autograd.functional, torch.autograd.functional
    g = lambda t: (t ** 3).sin()
    _close(AF.jacobian(g, x), TAF.jacobian(g, tx))
    _close(AF.jacobian(h, (x, y)), TAF.jacobian(h, (tx, ty)))
    _close(AF.hessian(f, x), TAF.hessian(f, tx))
    _close(AF.vjp(g, x, y)[1], TAF.vjp(g, tx, ty)[1])
    _close(AF.jvp(g, x, y)[1], TAF.jvp(g, tx, ty)[1])
    _close(AF.hvp(f, x, y)[1], TAF.hvp(f, tx, ty)[1])
    _close(AF.vhp(f, x, y)[1], TAF.vhp(f, tx, ty)[1])


# ------------------------------------------------------------------ pytrees, in full
def _tree_close(a, b, tol=1e-10):
    import omnitensor.utils._pytree as op
    la, sa = op.tree_flatten(a)
    lb, sb = torch.utils._pytree.tree_flatten(b)
    assert len(la) == len(lb) and repr(sa).replace("omnitensor", "torch") == repr(sb), (sa, sb)
    for u, v in zip(la, lb):
        np.testing.assert_allclose(u.detach().cpu().numpy(), v.detach().numpy(), rtol=tol,
                                   atol=tol)


def _same(a, b):
    """torch.equal (omnitensor.equal is the Array API's elementwise one)."""
    return a.shape == b.shape and bool((a == b).all())


def _pair(device, *shapes, seed=0):
    rng = np.random.default_rng(seed)
    arrs = [rng.standard_normal(s) for s in shapes]
    return [ot.tensor(a, device=device) for a in arrs], [torch.tensor(a) for a in arrs]


def test_transforms_over_pytrees(device):
    (a, b, c), (ta, tb, tc) = _pair(device, (3,), (2, 3), (2,))

    def loss(ns):
        return lambda p, x: (ns.tanh(p["w"] @ x + p["b"][0]) * p["b"][1]).sum()
    p, tp = {"w": b, "b": (c, c * 2)}, {"w": tb, "b": (tc, tc * 2)}
    _tree_close(of.grad(loss(ot))(p, a), tf.grad(loss(torch))(tp, ta))
    _tree_close(of.grad(loss(ot), argnums=(0, 1))(p, a),
                tf.grad(loss(torch), argnums=(0, 1))(tp, ta))
    _tree_close(of.jacrev(loss(ot))(p, a), tf.jacrev(loss(torch))(tp, ta))
    _tree_close(of.jacfwd(loss(ot))(p, a), tf.jacfwd(loss(torch))(tp, ta))
    _tree_close(of.hessian(loss(ot), argnums=1)(p, a), tf.hessian(loss(torch), argnums=1)(tp, ta))
    # vjp and jvp with pytree outputs, has_aux
    g = lambda ns: (lambda x, y: ({"s": ns.sin(x) * y.sum()}, [x * 2]))
    out, fn, aux = of.vjp(lambda x, y: (g(ot)(x, y), x.sum()), a, b, has_aux=True)
    tout, tfn, taux = tf.vjp(lambda x, y: (g(torch)(x, y), x.sum()), ta, tb, has_aux=True)
    _tree_close(out, tout)
    _tree_close(aux, taux)
    _tree_close(fn(({"s": ot.ones_like(a)}, [a])), tfn(({"s": torch.ones_like(ta)}, [ta])))
    _tree_close(of.jvp(g(ot), (a, b), (a, b)), tf.jvp(g(torch), (ta, tb), (ta, tb)))
    o, jv, aux = of.jvp(lambda x: (x.exp(), x.cos()), (a,), (c.new_ones(3) if False else a,),
                        has_aux=True)
    to, tjv, taux = tf.jvp(lambda x: (x.exp(), x.cos()), (ta,), (ta,), has_aux=True)
    _tree_close((o, jv, aux), (to, tjv, taux))
    out, lin = of.linearize(lambda x: x.sin() * x, a)
    tout, tlin = tf.linearize(lambda x: x.sin() * x, ta)
    _tree_close((out, lin(b[0])), (tout, tlin(tb[0])))


def test_transform_errors(device):
    x = ot.ones(3, dtype=ot.float64, device=device)
    with pytest.raises(RuntimeError, match="primals to be a tuple"):
        of.jvp(ot.sin, x, x)
    with pytest.raises(RuntimeError, match="same python structure"):
        of.jvp(ot.sin, (x,), (x, x))
    with pytest.raises(RuntimeError, match="same shape"):
        of.jvp(ot.sin, (x,), (ot.ones(2, dtype=ot.float64, device=device),))
    with pytest.raises(ValueError, match="argnums"):
        of.grad(lambda a: a.sum(), argnums=3)(x)
    with pytest.raises(RuntimeError, match="floating point"):
        of.grad(lambda a: a.sum())(ot.arange(3, device=device))
    with pytest.raises(RuntimeError, match=r"\(output, aux\)"):
        of.grad(lambda a: a.sum(), has_aux=True)(x)
    _, fn = of.vjp(ot.sin, x)
    with pytest.raises(RuntimeError, match="pytree structure of cotangents"):
        fn((x, x))


def test_vmap_in_out_dims_and_nesting(device):
    (a, b, c), (ta, tb, tc) = _pair(device, (4, 3), (3, 4), (5,))

    def fn(ns):
        return lambda d, s, k=1.0: {"y": d["x"] * s + d["z"][0] * k, "n": (d["x"] ** 2).sum()}
    args = ({"x": a, "z": [b]}, c[:3])
    targs = ({"x": ta, "z": [tb]}, tc[:3])
    dims = ({"x": 0, "z": [1]}, None)
    _tree_close(of.vmap(fn(ot), in_dims=dims, out_dims={"y": 1, "n": 0})(*args, k=2.0),
                tf.vmap(fn(torch), in_dims=dims, out_dims={"y": 1, "n": 0})(*targs, k=2.0))
    # nested vmap: an outer product; vmap of jacrev; negative dims
    outer = lambda ns: ns.func.vmap(ns.func.vmap(lambda u, v: u * v, (None, 0)), (0, None))
    _tree_close(outer(ot)(a[:, 0], b[0]), outer(torch)(ta[:, 0], tb[0]))
    _tree_close(of.vmap(of.jacrev(ot.sin), in_dims=-1)(b), tf.vmap(tf.jacrev(torch.sin),
                                                               in_dims=-1)(tb))
    _tree_close(of.vmap(lambda r: r.sum(), chunk_size=2)(a), tf.vmap(lambda r: r.sum(),
                                                                     chunk_size=2)(ta))
    # a zero-size mapped dimension, and an unbatched output
    _tree_close(of.vmap(lambda r: r * 2)(ot.ones(0, 3, device=device)),
                tf.vmap(lambda r: r * 2)(torch.ones(0, 3)))
    assert of.vmap(lambda r, w: w, in_dims=(0, None), out_dims=(None))(a, c) is c


def test_vmap_errors(device):
    a = ot.ones(2, 3, device=device)
    with pytest.raises(ValueError, match="non-Tensor arguments"):
        of.vmap(lambda x, y: x + y, in_dims=(0, 0))(a, 1.0)
    with pytest.raises(ValueError, match="must only return Tensors"):
        of.vmap(lambda x: 1)(a)
    with pytest.raises(ValueError, match="not compatible with the structure"):
        of.vmap(lambda x: x, in_dims=(0, 0))(a)
    with pytest.raises(ValueError, match="expected in_dim to satisfy"):
        of.vmap(lambda x: x, in_dims=3)(a)
    with pytest.raises(ValueError, match="can not return a BatchedTensor"):
        of.vmap(lambda x: x * 2, out_dims=None)(ot.arange(6.0, device=device).reshape(2, 3))
    with pytest.raises(RuntimeError, match="randomness"):
        of.vmap(lambda x: x, randomness="sometimes")
    with pytest.raises(ValueError, match="chunk_size"):
        of.vmap(lambda x: x, chunk_size=0)


def test_vmap_randomness(device):
    a = ot.zeros(4, 3, device=device)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        of.vmap(lambda r: ot.rand(3, device=device) + r)(a)
    ot.manual_seed(0)
    same = of.vmap(lambda r: ot.rand(3, device=device) + r, randomness="same")(a)
    after = ot.rand(1, device=device)
    ot.manual_seed(0)
    first = ot.rand(3, device=device)
    assert _same(same, first.expand(4, 3)) and _same(after, ot.rand(1, device=device))
    diff = of.vmap(lambda r: ot.rand(3, device=device) + r, randomness="different")(a)
    assert not _same(diff[0], diff[1])
    with pytest.raises(RuntimeError, match="randomness error mode"):
        of.jacfwd(lambda r: r * ot.rand(3, device=device))(ot.ones(3, device=device))


def test_functional_call_dicts_ties_strict(device):
    class Tied(ot.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = ot.nn.Linear(2, 2)
            self.b = ot.nn.Linear(2, 2)
            self.b.weight = self.a.weight
            self.register_buffer("scale", ot.ones(1))

        def forward(self, x):
            return self.b(self.a(x)) * self.scale
    m = Tied().to(device)
    x = ot.ones(1, 2, device=device)
    w0 = ot.zeros(2, 2, device=device)
    out = of.functional_call(m, ({"a.weight": w0}, {"scale": ot.full((1,), 3.0, device=device)}),
                             x)
    assert ot.allclose(out, (m.b.bias * 3).reshape(1, 2))  # b.weight followed a.weight
    untied = of.functional_call(m, {"a.weight": w0}, (x,), tie_weights=False)
    assert ot.allclose(untied, m.b(m.a.bias.reshape(1, 2)))
    assert not _same(m.a.weight, w0) and m.b.weight is m.a.weight  # restored
    with pytest.raises(ValueError, match="which are tied"):
        of.functional_call(m, {"a.weight": w0, "b.weight": w0.clone()}, (x,))
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        of.functional_call(m, ({"scale": w0}, {"scale": w0}), (x,))
    with pytest.raises(RuntimeError, match="Missing key\\(s\\)"):
        of.functional_call(m, {"a.weight": w0}, (x,), strict=True)
    with pytest.raises(ValueError, match="which are tied"):  # state_dict detaches each name
        of.functional_call(m, m.state_dict(), (x,))
    full = {**dict(m.named_parameters()), **dict(m.named_buffers())}  # b.weight follows
    assert _same(of.functional_call(m, full, (x,), strict=True), m(x))
    with pytest.raises(ValueError, match="does not match weight"):  # restored after errors too
        of.functional_call(m, {"a.weight": w0}, (ot.ones(1, 5, device=device),))
    assert not _same(m.a.weight, w0)


def test_stack_module_state_and_batch_norm(device):
    ot.manual_seed(0)
    models = [ot.nn.Sequential(ot.nn.Linear(3, 4), ot.nn.BatchNorm1d(4)).to(device)
              for _ in range(3)]
    params, buffers = of.stack_module_state(models)
    assert params["0.weight"].shape == (3, 4, 3) and params["0.weight"].is_leaf
    assert params["0.weight"].requires_grad and buffers["1.running_mean"].shape == (3, 4)
    assert _same(params["0.bias"][1], models[1][0].bias)
    with pytest.raises(RuntimeError, match="at least one model"):
        of.stack_module_state([])
    models[2].eval()
    with pytest.raises(RuntimeError, match="same training/eval mode"):
        of.stack_module_state(models)
    root = of.replace_all_batch_norm_modules_(models[0])
    bn = root[1]
    assert bn.running_mean is None and bn.running_var is None and not bn.track_running_stats
    assert root(ot.ones(5, 3, device=device)).shape == (5, 4)


def test_functorch_alias_and_make_functional(device, tmp_path):
    import subprocess
    import sys
    script = tmp_path / "ft.py"
    script.write_text(
        "import torch, functorch\n"
        "import torch.utils._pytree as pt\n"
        "m = torch.nn.Linear(3, 2)\n"
        "fm, ps = functorch.make_functional(m)\n"
        "x = torch.ones(4, 3)\n"
        "assert torch.allclose(fm(ps, x), m(x))\n"
        "g = functorch.grad(lambda p: fm(p, x).sum())(ps)\n"
        "assert torch.allclose(g[0], torch.ones(2, 4) @ x)\n"
        "fmb, p, b = functorch.combine_state_for_ensemble([torch.nn.Linear(3, 2)] * 2)\n"
        "assert functorch.vmap(fmb, (0, 0, None))(p, b, x).shape == (2, 4, 2)\n"
        "assert pt.tree_leaves({'a': [x, 1]})[1] == 1\n"
        "print('PASS')\n")
    out = subprocess.run([sys.executable, "-m", "omnitensor.as_torch", str(script)],
                         capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "OMNITENSOR_DEVICE": device})
    assert out.stdout.strip().endswith("PASS"), out.stdout + out.stderr
