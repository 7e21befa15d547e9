"""Custom autograd.Function, checkpoint, gradcheck utilities."""
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
