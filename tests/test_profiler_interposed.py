"""The profiler and compile interpose at the same backend (``backends/interpose.py``):
the profiler's wrappers on the instance, capture's and a segmented replay's stand-in on
the device. Under a profile a compiled call (captured, replayed, split at a break) gives
eager's values, its ops are timed, and both leave the backend as they found it."""
from __future__ import annotations

import numpy as np

import omnitensor as ot
from omnitensor.profiler import ProfilerActivity, profile


def _step(x, w):
    h = ot.relu(x @ w + 1.0)
    return (h * h).sum()


def _with_break(x, w):
    h = x @ w
    s = h.sum().item()            # a graph break: two segments
    return h * (2.0 if s > 0 else 3.0)


def test_compiled_calls_under_a_profile_equal_eager_and_are_timed(device):
    rng = np.random.default_rng(0)
    x = ot.tensor(rng.standard_normal((4, 8)).astype(np.float32), device=device)
    w = ot.tensor(rng.standard_normal((8, 3)).astype(np.float32), device=device)
    be = ot.device(device).backend
    before = dict(be.__dict__)
    eager, eager_b = _step(x, w).numpy(), _with_break(x, w).numpy()
    f, g = ot.compile(_step), ot.compile(_with_break)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(3):   # capture, then replays
            np.testing.assert_allclose(f(x, w).numpy(), eager, rtol=1e-5)
            np.testing.assert_allclose(g(x, w).numpy(), eager_b, rtol=1e-5)
        assert type(ot.device(device).backend).__name__ != "Interposer"
    # f's Python runs once (its capture), g's every call (the segments): 4 matmuls at the
    # torch level; f's two replays run the primitive through the profiler's wrappers
    matmuls = [e for e in prof.events() if e.name == "aten::matmul"]
    assert len(matmuls) >= 6, sorted({e.name for e in prof.events()})
    assert be.__dict__.keys() == before.keys()
    assert ot.device(device).backend is be
    np.testing.assert_allclose(f(x, w).numpy(), eager, rtol=1e-5)
    np.testing.assert_allclose(g(x, w).numpy(), eager_b, rtol=1e-5)
