"""Tensor.repeat / tile return a new tensor with its own writable memory, as torch's
(kornia writes into ``eye[None].repeat(B, 1, 1)``; a stride-0 view was read-only)."""
from __future__ import annotations

import numpy as np

import omnitensor as ot


def test_repeat_result_is_writable_and_independent(device):
    e = ot.eye(3, device=device)[None]
    for reps in ((2, 1, 1), (1, 1, 1), (1, 2, 1)):
        r = e.repeat(*reps)
        r[:, :2, 2] = 7.0
        assert float(r[0, 0, 2]) == 7.0
        np.testing.assert_array_equal(e.cpu().numpy()[0], np.eye(3, dtype=np.float32))


def test_tile_values_and_gradient(device):
    x = ot.arange(3.0, device=device, requires_grad=True)
    y = ot.tile(x, (2, 2))
    np.testing.assert_array_equal(y.detach().cpu().numpy(), np.tile(np.arange(3.0), (2, 2)))
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), [4.0, 4.0, 4.0])
