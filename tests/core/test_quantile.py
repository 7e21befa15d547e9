"""quantile's interpolation modes on every device, against NumPy and torch."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot

MODES = ["linear", "lower", "higher", "nearest", "midpoint"]


@pytest.mark.parametrize("mode", MODES)
def test_modes_match_numpy_and_torch(device, mode):
    a = np.random.default_rng(3).standard_normal((4, 9)).astype(np.float32)
    x = ot.tensor(a, device=device)
    for q in (0.0, 0.125, 0.25, 0.5, 0.8, 1.0):
        got = ot.quantile(x, q, dim=1, interpolation=mode).cpu().numpy()
        if mode != "nearest":  # NumPy's nearest breaks ties differently from torch
            np.testing.assert_allclose(got, np.quantile(a, q, axis=1, method=mode), rtol=2e-5, atol=1e-6)
        torch = pytest.importorskip("torch")
        want = torch.quantile(torch.tensor(a), q, dim=1, interpolation=mode).numpy()
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


def test_bad_arguments(device):
    x = ot.ones(5, device=device)
    with pytest.raises(ValueError, match="interpolation"):
        ot.quantile(x, 0.5, interpolation="cubic")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ot.quantile(x, 1.5)
