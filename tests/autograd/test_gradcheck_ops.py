"""gradcheck (finite differences) of every differentiable op, on every device, in float64
where the device has it (float32 with looser tolerances elsewhere)."""
import numpy as np
import pytest

import omnitensor as ot
from omnitensor.autograd import gradcheck, gradgradcheck


def _inputs(device, shapes, lo=-2.0, hi=2.0, seed=0):
    dt = ot.float64 if ot.device(device).supports_dtype(ot.float64) else ot.float32
    rng = np.random.default_rng(seed)
    return [ot.tensor(rng.uniform(lo, hi, s), dtype=dt, device=device, requires_grad=True)
            for s in shapes], dt


def _tol(dt):
    return dict(eps=1e-6, atol=1e-5, rtol=1e-3) if dt is ot.float64 else \
        dict(eps=1e-3, atol=2e-2, rtol=2e-2)


U = lambda f, lo=-2.0, hi=2.0: (f, [(2, 3)], lo, hi)
B = lambda f, lo=-2.0, hi=2.0, s=((2, 3), (2, 3)): (f, list(s), lo, hi)

OPS = {
    "neg": U(lambda x: -x), "abs": U(ot.abs, 0.2, 2), "exp": U(ot.exp), "expm1": U(ot.expm1),
    "log": U(ot.log, 0.5, 3), "log1p": U(ot.log1p, 0, 2), "log2": U(ot.log2, 0.5, 3),
    "log10": U(ot.log10, 0.5, 3), "sqrt": U(ot.sqrt, 0.5, 3), "rsqrt": U(ot.rsqrt, 0.5, 3),
    "square": U(ot.square), "sin": U(ot.sin), "cos": U(ot.cos), "tan": U(ot.tan, -1, 1),
    "asin": U(ot.asin, -0.9, 0.9), "acos": U(ot.acos, -0.9, 0.9), "atan": U(ot.atan),
    "sinh": U(ot.sinh), "cosh": U(ot.cosh), "tanh": U(ot.tanh), "asinh": U(ot.asinh),
    "acosh": U(ot.acosh, 1.2, 3), "atanh": U(ot.atanh, -0.9, 0.9), "erf": U(ot.erf),
    "sigmoid": U(ot.sigmoid), "relu": U(ot.relu, 0.1, 2), "reciprocal": U(ot.reciprocal, 0.5, 2),
    "clamp": U(lambda x: ot.clamp(x, -1.0, 1.0)),
    "clamp_tensors": B(lambda x, lo: ot.clamp(x, lo, lo + 2)),
    "add": B(ot.add), "sub": B(ot.subtract), "mul": B(ot.multiply),
    "div": B(ot.divide, 0.5, 2), "pow": B(ot.pow, 0.5, 2), "pow_scalar": U(lambda x: x ** 3),
    "rpow": U(lambda x: 2.0 ** x), "maximum": B(ot.maximum), "minimum": B(ot.minimum),
    "atan2": B(ot.atan2, 0.5, 2), "hypot": B(ot.hypot, 0.5, 2), "logaddexp": B(ot.logaddexp),
    "remainder": B(lambda a, b: ot.remainder(a, b), 0.3, 2),
    "broadcast_mul": B(ot.multiply, s=((2, 3), (3,))), "broadcast_add": B(ot.add, s=((2, 1), (1, 3))),
    "where": B(lambda a, b: ot.where(a > 0, a, b)),
    "sum": U(lambda x: x.sum()), "sum_dim": U(lambda x: x.sum(1, keepdim=True)),
    "mean": U(lambda x: x.mean(0)), "prod": U(lambda x: x.prod(1)),
    "prod_with_zero": U(lambda x: (x * ot.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]],
                                                  dtype=x.dtype, device=x.device)).prod(1)),
    "amax": U(lambda x: x.amax(1)), "max_dim": U(lambda x: x.max(1).values),
    "min_all": U(lambda x: x.min()), "var": U(lambda x: x.var(1)), "std": U(lambda x: x.std()),
    "logsumexp": U(lambda x: x.logsumexp(1)), "cumsum": U(lambda x: x.cumsum(1)),
    "cumprod": U(lambda x: x.cumprod(1), 0.5, 1.5), "norm": U(lambda x: x.norm()),
    "norm_dim": U(lambda x: ot.linalg.vector_norm(x, 2, axis=1)),
    "norm_l1": U(lambda x: ot.linalg.vector_norm(x, 1), 0.2, 2),
    "reshape": U(lambda x: x.reshape(3, 2) * ot.arange(6.0, device=x.device).reshape(3, 2).to(
        x.dtype)),
    "permute": U(lambda x: x.t() @ x), "expand": U(lambda x: x[:, :1].expand(2, 4) ** 2),
    "getitem": U(lambda x: x[1, ::2] * x[0, 1:]), "getitem_adv": U(lambda x: x[[0, 1, 1], [2, 2, 0]]),
    "getitem_mask": U(lambda x: x[x > 0] ** 2),
    "cat": B(lambda a, b: ot.cat([a, b * 2], 1)), "stack": B(lambda a, b: ot.stack([a, b], 0) ** 2),
    "split": U(lambda x: x.split(1, 1)[1] * x.split([2, 1], 1)[0][:, :1]),
    "flip": U(lambda x: x.flip(1) * x), "roll": U(lambda x: ot.roll(x, 1, axis=1) * x),
    "tile": U(lambda x: ot.tile(x, (2, 1)) ** 2), "repeat": U(lambda x: ot.repeat(x, 2, axis=1)),
    "gather": U(lambda x: x.gather(1, ot.tensor([[2, 0], [1, 1]], device=x.device))),
    "scatter_add": B(lambda a, b: a.scatter_add(1, ot.tensor([[0, 0, 1], [2, 2, 2]],
                                                            device=a.device), b)),
    "scatter": B(lambda a, b: a.scatter(1, ot.tensor([[0, 1, 2], [2, 0, 1]], device=a.device), b)),
    "index_select": U(lambda x: x.index_select(1, ot.tensor([2, 2, 0], device=x.device))),
    "masked_fill": U(lambda x: x.masked_fill(x > 0.5, 0.0)),
    "matmul": B(ot.matmul, s=((2, 3), (3, 4))), "bmm": B(ot.matmul, s=((2, 2, 3), (3, 2))),
    "matvec": B(ot.matmul, s=((2, 3), (3,))), "dot": B(ot.dot, s=((3,), (3,))),
    "einsum": B(lambda a, b: ot.einsum("ij,kj->ik", a, b)),
    "tensordot": B(lambda a, b: ot.tensordot(a, b, axes=([1], [1]))),
    "sort_values": U(lambda x: ot.sort(x, axis=1) * ot.arange(3.0, device=x.device).to(x.dtype)),
    "topk": U(lambda x: x.topk(2, 1).values), "pad": U(lambda x: ot.nn.functional.pad(x, (1, 2))),
    "diagonal": U(lambda x: x.diagonal(1) ** 2), "tril": U(lambda x: ot.tril(x) ** 2),
    "inv": (lambda a: ot.linalg.inv(a + 3 * ot.eye(3, dtype=a.dtype, device=a.device)),
            [(3, 3)], -1, 1),
    "det": (lambda a: ot.linalg.det(a + 3 * ot.eye(3, dtype=a.dtype, device=a.device)),
            [(3, 3)], -1, 1),
    "solve": (lambda a, b: ot.linalg.solve(a + 3 * ot.eye(3, dtype=a.dtype, device=a.device), b),
              [(3, 3), (3, 2)], -1, 1),
    "cholesky": (lambda a: ot.linalg.cholesky(a @ a.mT + ot.eye(3, dtype=a.dtype, device=a.device)),
                 [(3, 3)], -1, 1),
    "eigh": (lambda a: ot.linalg.eigh(a + a.mT).eigenvalues, [(3, 3)], -1, 1),
    "setitem": U(lambda x: _setitem(x)), "inplace": U(lambda x: _inplace(x)),
}


def _setitem(x):
    y = x * 1
    y[0, 1:] = x[1, :2] ** 2
    return y


def _inplace(x):
    y = x * 2
    y.mul_(x).add_(1)
    y[:, 0].mul_(3)
    return y


@pytest.mark.parametrize("name", sorted(OPS))
def test_gradcheck(device, name):
    fn, shapes, lo, hi = OPS[name]
    inputs, dt = _inputs(device, shapes, lo, hi)
    assert gradcheck(fn, inputs, **_tol(dt))


SECOND_ORDER = ["exp", "log", "sin", "tanh", "sigmoid", "mul", "div", "pow", "matmul", "sum_dim",
                "logsumexp", "norm", "getitem", "cat", "where", "softmax", "inv"]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_gradgradcheck(device, name):
    if name == "softmax":
        fn, shapes, lo, hi = (lambda x: ot.nn.functional.softmax(x, dim=1), [(2, 3)], -2, 2)
    else:
        fn, shapes, lo, hi = OPS[name]
    inputs, dt = _inputs(device, shapes, lo, hi)
    assert gradgradcheck(fn, inputs, **_tol(dt))
