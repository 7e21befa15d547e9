"""``autograd.NestedIOFunction`` (torch's legacy instance-method Function with nested
inputs and outputs): values and gradients against torch's autograd of the same formulas
(torch's own NestedIOFunction fails on its first call in torch 2.x), on every device."""
import numpy as np
import pytest
import torch

import omnitensor as ot
from omnitensor.autograd import NestedIOFunction


class MulAdd(NestedIOFunction):
    """(x, [y, z]) -> (x * y, [x + z, x.sum()]), x.sum() marked non-differentiable."""

    def forward_extended(self, x, pair):
        y, z = pair
        self.save_for_backward(x, [y])
        s = x.sum()
        self.mark_non_differentiable(s)
        return x * y, [x + z, s]

    def backward_extended(self, g_prod, g_list):
        x, (y,) = self.saved_tensors
        g_sum, _g_s = g_list
        self.seen_needs = self.needs_input_grad
        return g_prod * y + g_sum, [g_prod * x, g_sum]


W = np.random.default_rng(3).standard_normal((3, 3, 4))


def test_nested_values_and_gradients_equal_torch(device):
    x, y, z = (ot.tensor(w, dtype=ot.float32, device=device, requires_grad=True) for w in W)
    tx, ty, tz = (torch.tensor(w, dtype=torch.float32, requires_grad=True) for w in W)
    fn = MulAdd()
    prod, (plus, s) = fn(x, [y, z])
    assert not s.requires_grad
    np.testing.assert_allclose(prod.detach().cpu().numpy(), (tx * ty).detach().numpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(plus.detach().cpu().numpy(), (tx + tz).detach().numpy(),
                               rtol=1e-6)
    c = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
    ((prod * ot.tensor(c, device=device)).sum() + plus.sum()).backward()
    ((tx * ty * torch.tensor(c)).sum() + (tx + tz).sum()).backward()
    for ours, theirs in ((x, tx), (y, ty), (z, tz)):
        np.testing.assert_allclose(ours.grad.cpu().numpy(), theirs.grad.numpy(), rtol=1e-5)
    assert fn.seen_needs == (True, True, True)


def test_needs_input_grad_and_no_grad_call(device):
    x = ot.ones(3, device=device, requires_grad=True)
    y, z = ot.ones(3, device=device), ot.ones(3, device=device)
    fn = MulAdd()
    prod, _ = fn(x, (y, z))
    prod.sum().backward()
    assert fn.seen_needs == (True, False, False)
    with ot.no_grad():
        prod, (plus, _s) = MulAdd()(x, [y, z])
    assert not prod.requires_grad and not plus.requires_grad


def test_unknown_input_objects_are_refused():
    with pytest.raises(ValueError, match="Auto nesting"):
        MulAdd()(ot.ones(2), [ot.ones(2), 3])
