"""Findings of the seeded bad-input fuzz (``-m slow``), fixed at their root, kept here as
fast checks against torch."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape,dim,keepdim", [((0, 3), 0, False), ((3, 0), 1, True),
                                                ((0,), 0, False), ((2, 0, 3), (0, 1), False)])
def test_logsumexp_over_an_empty_dim_is_minus_inf(device, shape, dim, keepdim):
    """torch gives -inf (log of an empty sum); the max shift used to refuse the empty
    reduction ("max(): cannot reduce an empty tensor")."""
    want = torch.logsumexp(torch.zeros(shape), dim, keepdim=keepdim)
    got = ot.logsumexp(ot.zeros(shape, device=device), dim, keepdim=keepdim)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


@pytest.mark.parametrize("with_bias", [False, True])
def test_linear_with_a_1d_weight_is_a_dot_product(device, with_bias):
    """torch's F.linear takes a (in_features,) weight: one output feature, its dim dropped."""
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((3, 2, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    tw = torch.tensor(w, requires_grad=True)
    want = torch.nn.functional.linear(torch.tensor(x), tw, torch.tensor(2.0) if with_bias else None)
    want.sum().backward()
    ow = ot.tensor(w, device=device, requires_grad=True)
    got = ot.nn.functional.linear(ot.tensor(x, device=device), ow,
                                  ot.tensor(2.0, device=device) if with_bias else None)
    got.sum().backward()
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(ow.grad.cpu().numpy(), tw.grad.numpy(), rtol=1e-5)


def test_unbatched_cross_entropy_without_classes_is_nan(device):
    """An unbatched input of no classes: torch's mean is 0 / 0 (it gave 0)."""
    got = ot.nn.functional.cross_entropy(ot.zeros(0, device=device), ot.zeros(0, device=device))
    want = torch.nn.functional.cross_entropy(torch.zeros(0), torch.zeros(0))
    assert np.isnan(got.item()) and np.isnan(want.item())
