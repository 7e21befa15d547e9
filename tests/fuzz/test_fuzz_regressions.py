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
