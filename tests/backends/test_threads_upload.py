"""Threads that each upload NumPy arrays (``ot.tensor(np_array, device=...)``) and run a few
ops, eager and compiled, finish with one thread's values (issue 32: on sycl:0, 4 threads
deadlocked in 5 of 5 runs: two threads' first oneMKL calls at once, ``sycl/sync.py``'s
``ONEMKL_LOCK``; the dpnp fallback then still hung in 5 of 6 runs: two threads' first calls
into a dpctl/dpnp extension at once, ``sync.DPNP_LOCK``). Each program runs in a subprocess
under a timeout, so a hang fails instead of blocking the suite. And a program build on a
thread lets the other threads run (``sycl/build.py``: the GIL released while the driver
compiles)."""
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
    b = g.standard_normal((256, 256)).astype(np.float32)
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


def _run(device: str, threads: int, mode: str, **env: str) -> None:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", **env)
    try:
        r = subprocess.run([sys.executable, "-c", PROGRAM, device, str(threads), mode],
                           capture_output=True, text=True, env=env, timeout=240)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{threads} threads on {device} ({mode}, {env}) hung")
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip().endswith("ok"), r.stdout[-2000:]


@pytest.mark.parametrize("mode", ["eager", "compiled"])
@pytest.mark.parametrize("threads", [2, 4])
def test_threads_uploading_and_computing_finish(device, mode, threads):
    _run(device, threads, mode)


@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_threads_on_the_dpnp_fallback_finish(device, mode):
    """The sycl backend on dpnp's kernels (forced): 4 threads, twice (it hung in 5 of 6
    runs before the fallback's primitives took turns inside dpnp)."""
    if not device.startswith("sycl"):
        pytest.skip("the dpnp fallback is a sycl backend")
    for _ in range(2):
        _run(device, 4, mode, OMNITENSOR_SYCL_KERNELS="dpnp")


def _kernel_state(device: str):
    """The generated-kernel sycl backend's device state for ``device`` (else skip)."""
    if not device.startswith("sycl"):
        pytest.skip("program builds through dpctl are the sycl backend's")
    import omnitensor as ot
    from omnitensor.backends.sycl import kernel_backend
    d = ot.device(device)
    if not isinstance(d.backend, kernel_backend.SyclBackend):
        pytest.skip("the dpnp fallback builds no programs")
    return d.backend.state(d.index or 0)


#: 16 kernels of transcendental loops: Intel's OpenCL CPU compiler takes ~0.3-1 s
_SOURCE = "\n".join(
    f"__kernel void k{i}(__global float *o, __global const float *a) {{ size_t j = "
    f"get_global_id(0); float x = a[j]; for (int r = 0; r < {i % 7 + 2}; ++r) x = sin(x) * "
    f"cos(x + {i}.0f) + exp(x * 0.5f); o[j] = x; }}" for i in range(16))


def test_a_program_build_on_a_thread_lets_the_other_threads_run(device):
    """``sycl/build.py``: the driver compiles with the GIL released, so while a thread
    builds (compile's fused programs build so), the main thread keeps running Python (with
    dpctl's own function it stood still for the whole build)."""
    import threading
    import time

    from omnitensor.backends.sycl import build
    st = _kernel_state(device)
    assert build.RELEASES_GIL, "this dpctl lacks the entry points sycl/build.py calls"
    done, span, progs = threading.Event(), [], []

    def work() -> None:
        t = time.perf_counter()
        try:
            progs.append(build.build(st.queue, _SOURCE, ""))
        finally:
            span.append(time.perf_counter() - t)
            done.set()
    th = threading.Thread(target=work)
    last, stall = time.perf_counter(), 0.0
    th.start()
    while not done.is_set():
        now = time.perf_counter()
        stall, last = max(stall, now - last), now
    th.join()
    assert progs and progs[0].get_sycl_kernel("k15") is not None
    assert span[0] > 0.05, f"the build took {span[0]:.3f} s: too short to tell"
    assert stall < 0.5 * span[0], f"the main thread stood still {stall:.3f} s of a " \
                                  f"{span[0]:.3f} s build"


def test_a_failed_program_build_raises_dpctls_compilation_error(device):
    """A build the driver rejects raises dpctl's ``SyclProgramCompilationError``."""
    from dpctl.program import SyclProgramCompilationError

    from omnitensor.backends.sycl import build
    st = _kernel_state(device)
    with pytest.raises(SyclProgramCompilationError):
        build.build(st.queue, "__kernel void k(__global float *o) { o[0] = no_such; }", "")
