"""Optional backend-contract methods with a default in ``backends/base.py``: every
backend's override must behave like the default."""
import numpy as np
import pytest

import omnitensor as ot
from omnitensor.backends.base import Backend


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64"])
def test_assign_from_host_contiguous_and_views(device, dtype):
    be = ot.device(device).backend
    base = np.arange(60).reshape(5, 12).astype(dtype)
    t = ot.zeros(5, 12, dtype=getattr(ot, dtype), device=device)
    host = base.copy()
    be.assign_from_host(t._data, host)
    host[...] = 0  # reusable at once: the copy has read it
    np.testing.assert_array_equal(t.cpu().numpy(), base)
    exp = base.copy()
    for view, region in ((t[1:3], (slice(1, 3),)),              # offset, contiguous
                         (t[:, 2:9:3], (slice(None), slice(2, 9, 3))),  # strided
                         (t.t()[3], (slice(None), 3))):             # column of a transpose
        vals = (np.arange(view.numel()).reshape(view.shape) + 100).astype(dtype)
        be.assign_from_host(view._data, vals)
        exp[region] = vals
        np.testing.assert_array_equal(t.cpu().numpy(), exp)
    empty = ot.zeros(0, 3, dtype=getattr(ot, dtype), device=device)
    be.assign_from_host(empty._data, np.zeros((0, 3), dtype))


def test_assign_from_host_orders_after_pending_work(device):
    be = ot.device(device).backend
    t = ot.zeros(1 << 16, device=device)
    for _ in range(5):
        t.add_(1)  # enqueued (asynchronous backends)
    be.assign_from_host(t[::2]._data, np.full(1 << 15, -1, np.float32))
    got = t.cpu().numpy()
    assert (got[::2] == -1).all() and (got[1::2] == 5).all()


def test_default_assign_from_host_matches(device):
    """The base class's path (device temporary + assign) gives the same result."""
    be = ot.device(device).backend
    t = ot.zeros(4, 6, device=device)
    vals = np.arange(12, dtype=np.float32).reshape(4, 3)
    Backend.assign_from_host(be, t[:, ::2]._data, vals)
    exp = np.zeros((4, 6), np.float32)
    exp[:, ::2] = vals
    np.testing.assert_array_equal(t.cpu().numpy(), exp)
