"""Threads that each upload NumPy arrays (``ot.tensor(np_array, device=...)``) and run a few
ops, eager and compiled, finish with one thread's values (issue 32: on sycl:0, 4 threads
deadlocked in 5 of 5 runs: two threads' first oneMKL calls at once, ``sycl/sync.py``'s
``ONEMKL_LOCK``). Each program runs in a subprocess under a timeout, so a hang
fails instead of blocking the suite."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROGRAM = r"""
import sys, threading
import numpy as np
import omnitensor as ot
device, threads, compiled = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "compiled"

def step(a, b):
    return ((a * 2 + 1).tanh() @ b).relu().sum(0) + a.mean()

fn = ot.compile(step) if compiled else step

def work(seed):
    g = np.random.default_rng(seed)
    a = g.standard_normal((256, 256)).astype(np.float32)  # oneMKL-sized on sycl
    b = g.standard_normal((256, 64)).astype(np.float32)
    r = fn(ot.tensor(a, device=device), ot.tensor(b, device=device))
    return r.cpu().numpy(), (np.maximum(np.tanh(a * 2 + 1) @ b, 0).sum(0) + a.mean())

errors = []

def worker(seed):
    try:
        for i in range(15):
            got, want = work(seed * 100 + i)
            if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
                errors.append(f"thread {seed} step {i}: {got} != {want}")
    except Exception as e:  # noqa: BLE001
        errors.append(f"thread {seed}: {e!r}")

ts = [threading.Thread(target=worker, args=(s,)) for s in range(threads)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("errors:", errors[:3])
print("ok" if not errors else "failed")
"""


@pytest.mark.parametrize("mode", ["eager", "compiled"])
@pytest.mark.parametrize("threads", [2, 4])
def test_threads_uploading_and_computing_finish(device, mode, threads):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    try:
        r = subprocess.run([sys.executable, "-c", PROGRAM, device, str(threads), mode],
                           capture_output=True, text=True, env=env, timeout=240)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{threads} threads on {device} ({mode}) hung")
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip().endswith("ok"), r.stdout[-2000:]
