"""Sorting an 8000-element bool tensor on sycl:0 with a cold kernel cache (issue 32: dpnp's
bool sort kernel segfaulted inside the SYCL runtime's compile). The generated backend sorts
with omnitensor's own kernels, so that kernel is never built; run in a subprocess with an
empty SYCL cache, so a crash fails the test instead of the suite."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import omnitensor as ot

pytestmark = pytest.mark.skipif("sycl:0" not in [str(d) for d in ot.devices()],
                                reason="no sycl:0 device")

PROGRAM = r"""
import numpy as np, omnitensor as ot
g = np.random.default_rng(0)
x = g.random(8000) < 0.5
t = ot.tensor(x, device="sycl:0")
s = t.sort().values.cpu().numpy()
i = ot.argsort(t, stable=True).cpu().numpy()
assert (s == np.sort(x)).all() and (i == np.argsort(x, kind="stable")).all()
d = t.sort(descending=True).values.cpu().numpy()
assert (d == np.sort(x)[::-1]).all()
print("ok")
"""


def test_bool_sort_on_a_cold_cache(tmp_path):
    env = dict(os.environ, SYCL_CACHE_DIR=str(tmp_path), SYCL_CACHE_PERSISTENT="1")
    r = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                       env=env, timeout=600)
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr[-3000:]}"
    assert r.stdout.strip().endswith("ok")
