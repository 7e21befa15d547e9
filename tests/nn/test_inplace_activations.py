"""``inplace=True`` activations train like torch: the in-place op's backward never needs
the overwritten input (issue: ``nn.ReLU6(inplace=True)(x * 1).sum().backward()`` raised "one
of the variables needed for gradient computation has been modified by an inplace
operation"), while torch's version-counter errors still fire where torch raises them."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot
from omnitensor import nn

MODULES = [
    ("ReLU", (), {}), ("ReLU6", (), {}), ("Hardtanh", (-0.5, 0.7), {}),
    ("LeakyReLU", (0.1,), {}), ("ELU", (0.8,), {}), ("SELU", (), {}), ("CELU", (1.3,), {}),
    ("SiLU", (), {}), ("Mish", (), {}), ("Hardsigmoid", (), {}), ("Hardswish", (), {}),
    ("Threshold", (0.1, -2.0), {}),
]


def _data():
    rng = np.random.default_rng(0)
    x = rng.uniform(-8, 8, (4, 5)).astype(np.float32)
    x[0, :3] = [0.0, 6.0, -1.0]  # boundary points of relu6 / hardtanh
    return x, rng.standard_normal((4, 5)).astype(np.float32)


@pytest.mark.parametrize("name,args,kw", MODULES, ids=[m[0] for m in MODULES])
def test_inplace_module_trains_like_torch(device, name, args, kw):
    torch = pytest.importorskip("torch")
    x_np, g_np = _data()
    x = ot.tensor(x_np, device=device, requires_grad=True)
    mod = getattr(nn, name)(*args, inplace=True, **kw)
    y = mod(x * 1.5)
    (y * ot.tensor(g_np, device=device)).sum().backward()
    tx = torch.tensor(x_np, requires_grad=True)
    ty = getattr(torch.nn, name)(*args, inplace=True, **kw)(tx * 1.5)
    (ty * torch.tensor(g_np)).sum().backward()
    np.testing.assert_allclose(y.detach().cpu().numpy(), ty.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(x.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name,args,kw", MODULES, ids=[m[0] for m in MODULES])
def test_inplace_result_is_the_input(device, name, args, kw):
    x = ot.tensor(_data()[0], device=device)
    y = getattr(nn, name)(*args, inplace=True, **kw)(x)
    assert y is x
    ref = getattr(nn, name)(*args, **kw)(ot.tensor(_data()[0], device=device))
    np.testing.assert_allclose(x.cpu().numpy(), ref.cpu().numpy(), rtol=1e-6, atol=1e-7)


def test_inplace_on_a_saved_tensor_still_raises_like_torch(device):
    torch = pytest.importorskip("torch")
    x = ot.randn(5, device=device, requires_grad=True)
    y = x * 1
    z = y * y  # mul saves y
    nn.ReLU6(inplace=True)(y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    tx = torch.randn(5, requires_grad=True)
    ty = tx * 1
    tz = ty * ty
    torch.nn.ReLU6(inplace=True)(ty)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        tz.sum().backward()


def test_inplace_on_a_leaf_that_requires_grad_raises(device):
    x = ot.randn(5, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        nn.ReLU6(inplace=True)(x)


def test_mobilenet_style_block_trains(device):
    ot.manual_seed(0)
    block = nn.Sequential(nn.Linear(8, 16), nn.ReLU6(inplace=True), nn.Linear(16, 16),
                          nn.Hardswish(inplace=True), nn.Linear(16, 2)).to(device)
    opt = ot.optim.SGD(block.parameters(), lr=0.1)
    x = ot.randn(32, 8, device=device)
    y = (x[:, :1] > 0).long().reshape(-1)
    first = None
    for _ in range(30):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(block(x), y)
        loss.backward()
        opt.step()
        first = loss.item() if first is None else first
    assert loss.item() < first
