"""omnitensor.autograd.forward_ad against torch.autograd.forward_ad, on every device:
tangents of ops, views, in-place ops, no_grad/inference mode, nested levels, mixing with
reverse mode, custom Functions, and torch's op database (``opdb_forward.py``)."""
import numpy as np
import pytest

import omnitensor as ot
import omnitensor.autograd.forward_ad as ofw

torch = pytest.importorskip("torch")
tfw = torch.autograd.forward_ad

RNG = np.random.default_rng(0)
X = RNG.uniform(0.2, 1.5, (3, 4))
T = RNG.standard_normal((3, 4))


def _np(t):
    if isinstance(t, np.ndarray):
        return t
    return t.detach().cpu().numpy() if isinstance(t, ot.Tensor) else t.detach().numpy()


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)


def _both(f_ot, f_torch, device, x=X, t=T):
    """The output tangents of f at (x, t) in omnitensor and in torch."""
    with ofw.dual_level():
        d = ofw.make_dual(ot.tensor(x, device=device), ot.tensor(t, device=device))
        o = ofw.unpack_dual(f_ot(d)).tangent
    with tfw.dual_level():
        d = tfw.make_dual(torch.tensor(x), torch.tensor(t))
        r = tfw.unpack_dual(f_torch(d)).tangent
    return o, r


@pytest.mark.parametrize("name", ["sin", "exp", "log", "tanh", "sigmoid", "sqrt", "abs",
                                  "relu", "reciprocal", "erf"])
def test_unary_tangents(device, name):
    fo = getattr(ot, name) if hasattr(ot, name) else getattr(ot.nn.functional, name)
    ft = getattr(torch, name)
    o, r = _both(fo, ft, device)
    _close(o, r)


def test_composite_tangents(device):
    cases = [
        (lambda d: (d * d.sin()).sum(dim=1), None),
        (lambda d: d @ d.mT, None),
        (lambda d: (d / d.norm()).softmax(-1), None),
        (lambda d: d.reshape(4, 3).permute(1, 0)[1:, ::2].cumsum(0), None),
        (lambda d: d.max(dim=1).values + d.logsumexp(0).sum(), None),
    ]
    for f, _ in cases:
        o, r = _both(f, f, device)
        _close(o, r)
    o, r = _both(lambda d: ot.nn.functional.gelu(d).mean(),
                 lambda d: torch.nn.functional.gelu(d).mean(), device)
    _close(o, r)
    w = RNG.standard_normal((5, 4))
    o, r = _both(lambda d: ot.nn.functional.linear(d, ot.tensor(w, device=device)).tanh(),
                 lambda d: torch.nn.functional.linear(d, torch.tensor(w)).tanh(), device)
    _close(o, r)


def test_api_and_errors(device):
    x = ot.tensor(X, device=device)
    t = ot.tensor(T, device=device)
    with pytest.raises(RuntimeError, match="no dual level is active"):
        ofw.make_dual(x, t)
    with ofw.dual_level() as level:
        d = ofw.make_dual(x, t)
        u = ofw.unpack_dual(d)
        assert isinstance(u, ofw.UnpackedDualTensor) and u.tangent is t  # not copied (torch)
        assert u.primal.shape == x.shape and ofw.unpack_dual(u.primal).tangent is None
        assert ofw.unpack_dual(x).tangent is None  # the primal itself has no tangent
        assert "tangent=" in repr(d)
        assert np.array_equal(d.numpy(), X)  # allowed, as torch
        with pytest.raises(ValueError, match="shape"):
            ofw.make_dual(x, ot.ones(3, device=device))
        with pytest.raises(ValueError, match="floating point"):
            ofw.make_dual(ot.arange(3, device=device), ot.arange(3, device=device))
        with pytest.raises(RuntimeError, match="already has a forward gradient"):
            ofw.make_dual(d, t)
        with pytest.raises(RuntimeError, match="not an active dual level"):
            ofw.unpack_dual(d, level=level + 100)
        y = d.exp()
        assert ofw.unpack_dual(y.detach()).tangent is None  # detach drops it (torch)
        assert ofw.unpack_dual(y.sign()).tangent is not None  # zeros, as torch
    assert ofw.unpack_dual(y).tangent is None  # the level is gone
    assert not y.requires_grad and y.grad_fn is None
    with pytest.raises(RuntimeError, match="no dual level"):
        ofw.exit_dual_level()


def test_no_grad_and_inference_mode(device):
    with ofw.dual_level():
        d = ofw.make_dual(ot.tensor(X, device=device), ot.tensor(T, device=device))
        with ot.no_grad():
            y = d * 3  # tangents flow under no_grad (torch)
        _close(ofw.unpack_dual(y).tangent, 3 * T)
        with ot.inference_mode():
            z = d * 3
        assert ofw.unpack_dual(z).tangent is None


def test_views_and_inplace_match_torch(device):
    def program(ns, fw, x, t):
        with fw.dual_level():
            d = fw.make_dual(ns.tensor(x).clone(), ns.tensor(t).clone())
            v = d[1:3]
            v.mul_(2)                    # through a view: d's tangent changes too
            d.add_(d.sin())              # in place on the dual itself
            z = ns.zeros(6, 4, dtype=ns.float64)
            z[1:4].copy_(d)              # a view of a plain tensor: z gets a tangent
            w = z[2]
            w.mul_(w.cos())              # a view of z, after z got its tangent
            with ns.no_grad():
                z.add_(1.5)
            return [fw.unpack_dual(a).tangent for a in (d, v, z, w)]
    ours = program(_On(device), ofw, X, T)
    theirs = program(torch, tfw, X, T)
    for a, b in zip(ours, theirs):
        _close(a, b)


class _On:
    """omnitensor's namespace with tensors created on one device (so that one program
    runs through both libraries)."""

    def __init__(self, device):
        self.device = device

    def tensor(self, a):
        return ot.tensor(a, device=self.device)

    def zeros(self, *shape, dtype):
        return ot.zeros(*shape, dtype=dtype, device=self.device)

    def __getattr__(self, name):
        return getattr(ot, name)


def test_nested_levels_are_forward_over_forward(device):
    """Nested dual levels (torch's forward_ad refuses them; torch.func.jvp nests): the
    inner tangent's outer tangent is the second derivative."""
    x = ot.tensor(X, device=device)
    v = ot.tensor(T, device=device)
    with ofw.dual_level() as outer:
        xo = ofw.make_dual(x, v, level=outer)
        with ofw.dual_level() as inner:
            xi = ofw.make_dual(xo, v, level=inner)
            y = (xi.sin() * xi).exp()
            t1 = ofw.unpack_dual(y, level=inner).tangent
            t2 = ofw.unpack_dual(t1, level=outer).tangent
    tx, tv = torch.tensor(X), torch.tensor(T)
    f = lambda a: (a.sin() * a).exp()
    ref = torch.func.jvp(lambda a: torch.func.jvp(f, (a,), (tv,))[1], (tx,), (tv,))[1]
    _close(t2, ref)


def test_reverse_over_forward_and_forward_over_reverse(device):
    xo = ot.tensor(X, device=device, requires_grad=True)
    xt = torch.tensor(X, requires_grad=True)
    f = lambda a: (a.sin() * a.exp()).sum(1).square()
    with ofw.dual_level():
        y = f(ofw.make_dual(xo, ot.tensor(T, device=device)))
        ofw.unpack_dual(y).tangent.sum().backward()  # d(J t)/dx
    with tfw.dual_level():
        y = f(tfw.make_dual(xt, torch.tensor(T)))
        tfw.unpack_dual(y).tangent.sum().backward()
    _close(xo.grad, xt.grad)
    # forward over reverse: the tangent of a gradient is a Hessian-vector product
    g = lambda a: (a.sin() * a.exp()).sum()
    with ofw.dual_level():
        xd = ofw.make_dual(ot.tensor(X, device=device).requires_grad_(),
                           ot.tensor(T, device=device))
        gr, = ot.autograd.grad(g(xd), xd)
        hv = ofw.unpack_dual(gr).tangent
    ref = torch.func.jvp(torch.func.grad(g), (torch.tensor(X),), (torch.tensor(T),))[1]
    _close(hv, ref)


def test_custom_function(device):
    class Cube(ot.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x * x * g

    class CubeJvp(Cube):
        @staticmethod
        def jvp(ctx, t):
            x, = ctx.saved_tensors
            return 3 * x * x * t

    for fn in (Cube, CubeJvp):  # its backward differentiated, or its own jvp
        with ofw.dual_level():
            d = ofw.make_dual(ot.tensor(X, device=device), ot.tensor(T, device=device))
            _close(ofw.unpack_dual(fn.apply(d)).tangent, 3 * X * X * T)


# ----------------------------------------------------------------- torch's op database
from opdb_forward import check_op  # noqa: E402

#: torch's own forward AD and backward disagree here (its backward gathers the gradient to
#: every input mapped to one output by duplicate indices, its forward AD keeps one): our
#: tangent is the transpose of that (torch-equal) backward, so it follows the backward
TORCH_INCONSISTENT = {"nn.functional.max_unpool1d", "nn.functional.max_unpool2d",
                      "nn.functional.max_unpool3d"}

#: a cross-section of the op database; the whole of it runs in test_op_db_sweep
OPS = ["add", "mul", "div.no_rounding_mode", "pow", "atan2", "sin", "exp", "log1p", "erf",
       "sigmoid", "sum", "mean", "prod", "amax", "logsumexp", "cumsum", "softmax",
       "log_softmax", "matmul", "mm", "bmm", "addmm", "einsum", "linalg.det", "linalg.inv",
       "linalg.solve", "linalg.cholesky", "linalg.eigh", "linalg.svd", "linalg.norm",
       "reshape", "permute", "transpose", "expand", "narrow", "select", "index_select",
       "gather", "scatter_add", "take_along_dim", "cat", "stack", "split", "where",
       "masked_fill", "sort", "topk", "max.reduction_with_dim", "clamp_min", "abs",
       "nn.functional.conv2d", "nn.functional.linear", "nn.functional.layer_norm",
       "nn.functional.batch_norm", "nn.functional.gelu", "nn.functional.silu",
       "nn.functional.cross_entropy", "nn.functional.mse_loss", "nn.functional.max_pool2d",
       "nn.functional.avg_pool2d", "nn.functional.embedding", "nn.functional.pad.constant",
       "fft.fft", "fft.rfft", "complex", "real", "view_as_real", "trace", "diag", "tril",
       "roll", "flip", "repeat"]


@pytest.mark.parametrize("name", OPS)
def test_op_db_tangents(device, name):
    verdict, message = check_op(name, device)
    if verdict == "skip":
        pytest.skip(message)
    if verdict == "gap":
        pytest.xfail(message)
    assert verdict == "pass", f"{name}: {message}"


@pytest.mark.slow
def test_op_db_sweep(device):
    """Every OpInfo that supports forward AD: no tangent may differ from torch's where the
    reverse-mode gradient equals torch's."""
    from opdb_forward import forward_ops
    verdicts = {name: check_op(name, device) for name in forward_ops()}
    fails = {k: v[1] for k, v in verdicts.items()
             if v[0] == "fail" and k not in TORCH_INCONSISTENT}
    assert not fails, fails
    passed = sum(v[0] == "pass" for v in verdicts.values())
    assert passed >= 380, f"only {passed} ops pass"


def test_complex_python_scalar_operand(device):
    """The backward of ``u * 1j`` conjugates the scalar (torch): found by the double-vjp
    (the tangent of ``imag``), wrong in reverse mode too before."""
    for f in (lambda a: a * 1j, lambda a: 1j * a, lambda a: a / (1 + 2j)):
        u = ot.tensor([2.0], dtype=ot.float64, device=device, requires_grad=True)
        tu = torch.tensor([2.0], dtype=torch.float64, requires_grad=True)
        g, = ot.autograd.grad(f(u), u, ot.tensor([1j], dtype=ot.complex128, device=device))
        tg, = torch.autograd.grad(f(tu), tu, torch.tensor([1j], dtype=torch.complex128))
        _close(g, tg)
    z = np.array([1 + 2j, 3 - 1j])
    o, r = _both(ot.imag, lambda d: d.imag, device, z,
                 np.array([0.5 - 1j, 2 + 0.3j]))
    _close(o, r)


def test_random_fill_and_leaf_updates_inside_a_level(device):
    """A random in-place fill zeroes the tangent (torch); a no_grad update of a leaf that
    requires grad (an optimizer step) is allowed inside a dual level, as outside."""
    w = ot.nn.Parameter(ot.ones(3, device=device))
    opt = ot.optim.SGD([w], lr=0.5)
    with ofw.dual_level():
        d = ofw.make_dual(ot.tensor(X, device=device), ot.tensor(T, device=device))
        d.normal_()
        assert not ofw.unpack_dual(d).tangent.abs().sum().item()
        (w * 2).sum().backward()
        opt.step()
        with ot.no_grad():
            w.mul_(2)
        assert w.requires_grad and w.is_leaf and ofw.unpack_dual(w).tangent is None
    _close(w, np.zeros(3))
