"""Custom autograd.Function, checkpoint, gradcheck utilities."""
import numpy as np
import pytest

import omnitensor as ot
from omnitensor import autograd
from omnitensor.autograd import Function, once_differentiable


class Cube(Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x ** 3 * scale

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2 * ctx.scale, None


class SplitTwo(Function):
    @staticmethod
    def forward(ctx, x):
        idx = x.argmax()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(x)
        return x * 2, idx

    @staticmethod
    @once_differentiable
    def backward(ctx, g, g_idx):
        return g * 2


def test_function_forward_backward(device):
    x = ot.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = Cube.apply(x, 2.0)
    assert y.grad_fn.name() == "CubeBackward"
    assert ctx_needs(y) == (True, False)
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 24.0]


def ctx_needs(y):
    return y.grad_fn.needs_input_grad


def test_function_double_backward(device):
    x = ot.tensor([2.0], device=device, requires_grad=True, dtype=ot.float32)
    (g,) = autograd.grad(Cube.apply(x, 1.0), x, create_graph=True)
    (gg,) = autograd.grad(g, x)
    assert gg.item() == 12.0


def test_non_differentiable_and_materialize(device):
    x = ot.tensor([1.0, 5.0], device=device, requires_grad=True)
    y, idx = SplitTwo.apply(x)
    assert idx.grad_fn is None and y.requires_grad
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_gradcheck_catches_wrong_backward(device):
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    dt = ot.float64 if ot.device(device).supports_dtype(ot.float64) else ot.float32
    x = ot.ones(3, dtype=dt, device=device, requires_grad=True)
    with pytest.raises(autograd.GradcheckError, match="Jacobian mismatch"):
        autograd.gradcheck(Wrong.apply, (x,), eps=1e-3, atol=1e-2)


def test_checkpoint_matches_plain(device):
    w = ot.tensor([[0.5, -1.0], [2.0, 0.25]], device=device, requires_grad=True)
    x = ot.tensor([[1.0, 2.0]], device=device, requires_grad=True)

    def block(inp):
        return (inp @ w).tanh() @ w

    block(x).sum().backward()
    ref_w, ref_x = w.grad.clone(), x.grad.clone()
    w.grad = x.grad = None
    out = autograd.checkpoint(block, x)
    assert out.grad_fn is not None
    out.sum().backward()
    assert ot.allclose(w.grad, ref_w) and ot.allclose(x.grad, ref_x)


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_variants_like_torch(device, reentrant):
    w = ot.tensor([1.0, 2.0], device=device, requires_grad=True)
    x = ot.tensor([3.0, 4.0], device=device)  # requires no grad
    out = autograd.checkpoint(lambda a: (a * w).sin(), x, use_reentrant=reentrant)
    if reentrant:  # torch: no argument requires grad -> nothing recorded
        assert not out.requires_grad
    else:  # torch: the parameter inside gets its gradient anyway
        out.sum().backward()
        np.testing.assert_allclose(w.grad.cpu().numpy(), [3 * np.cos(3.0), 4 * np.cos(8.0)],
                                   rtol=1e-5)
    w.grad = None
    xg = ot.tensor([3.0, 4.0], device=device, requires_grad=True)
    loss = autograd.checkpoint(lambda a: a * w, xg, use_reentrant=reentrant).sum()
    if reentrant:
        with pytest.raises(RuntimeError, match="not compatible with autograd.grad"):
            autograd.grad(loss, xg)
    else:
        (gx,) = autograd.grad(loss, xg)
        assert gx.tolist() == [1.0, 2.0] and w.grad is None  # no .grad side effects
    plain = autograd.checkpoint(lambda a: a * 2, ot.ones(2, device=device),
                                use_reentrant=reentrant)
    assert not plain.requires_grad and plain.tolist() == [2.0, 2.0]
    with ot.no_grad():
        assert autograd.checkpoint(lambda a: a * w, xg).grad_fn is None
