"""torch.linalg's out= (gpytorch's linear_operator calls cholesky_ex(A, out=...)): results
written into the given tensors, returned, checked by core's one rule."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot


def _spd(device):
    a = np.random.default_rng(0).standard_normal((3, 3))
    return ot.tensor(a @ a.T + 3 * np.eye(3), device=device, dtype=ot.float32), a @ a.T + 3 * np.eye(3)


def test_out_tensors_receive_the_results(device):
    A, a = _spd(device)
    L, info = ot.empty(3, 3, device=device), ot.empty((), dtype=ot.int32, device=device)
    r = ot.linalg.cholesky_ex(A, out=(L, info))
    assert r[0] is L and r[1] is info and int(info) == 0
    np.testing.assert_allclose(L.cpu().numpy(), np.linalg.cholesky(a), rtol=1e-5)
    d = ot.empty(0, device=device)                       # resized, as torch's
    assert ot.linalg.det(A, out=d) is d and d.shape == ()
    np.testing.assert_allclose(float(d), np.linalg.det(a), rtol=1e-4)
    inv = ot.empty(3, 3, device=device)
    ot.linalg.inv(A, out=inv)
    np.testing.assert_allclose(inv.cpu().numpy(), np.linalg.inv(a), rtol=1e-4, atol=1e-6)


def test_out_of_the_wrong_dtype_is_refused(device):
    A, _ = _spd(device)
    with pytest.raises(Exception, match="dtype"):
        ot.linalg.inv(A, out=ot.empty(3, 3, dtype=ot.float64 if device == "cpu" else ot.int32,
                                      device=device))
