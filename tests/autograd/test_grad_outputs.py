"""``grad_outputs``/``gradient=`` are checked against their outputs as torch checks them:
the shape must match, the device must be the output's (a 0-d cpu tensor moves there)."""
from __future__ import annotations

import pytest

import omnitensor as ot


def test_grad_output_of_another_shape_is_refused(device):
    x = ot.ones(2, 2, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="mismatch in shape"):
        ot.autograd.grad(x * 2, x, ot.ones(3, 2, device=device))


def test_grad_output_on_another_device_is_refused_with_the_fix(device):
    if device == "cpu":
        pytest.skip("needs a second device")
    x = ot.ones(2, 2, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"expected device .* but got cpu.*\.to\("):
        ot.autograd.grad(x * 2, x, ot.ones(2, 2))


def test_a_cpu_scalar_grad_output_moves_to_the_outputs_device(device):
    x = ot.ones(2, 2, device=device, requires_grad=True)
    (x * 3).sum().backward(ot.tensor(2.0))
    assert str(x.grad.device) == device
    assert x.grad.tolist() == [[6.0, 6.0], [6.0, 6.0]]


def test_the_cotangent_of_a_device_move_flows_back(device):
    """``x.to('cpu')``'s gradient arrives on cpu and returns to ``x``'s device."""
    x = ot.ones(3, device=device, requires_grad=True)
    y = x.to("cpu", ot.float64)
    (g,) = ot.autograd.grad(y, x, ot.full((3,), 2.0, dtype=ot.float64))
    assert str(g.device) == device and g.dtype == ot.float32
    assert g.tolist() == [2.0, 2.0, 2.0]
