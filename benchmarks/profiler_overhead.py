"""What the profiler costs: train_mlp.py's MLP step (64-256-256-10, SGD momentum, batch 64)
on each device, per-step medians of interleaved rounds.

* ``off vs before``: the step with the profiler code present but no profiler running,
  against the same tree with the profiler's hot-path edits reverted (``launch.py``'s
  recording check, ``registry.py``'s load listeners), in alternating child processes.
* ``on``: the step while a profiler records (CPU only; CPU + device time), against off.
* OpenCL: the step on a ``PROFILING_ENABLE`` queue without a profiler (what an always-on
  profiling queue would cost) against the plain queue.

    python benchmarks/profiler_overhead.py                   # cpu, opencl:0, sycl:0
    python benchmarks/profiler_overhead.py --devices opencl:0 --rounds 9
    python benchmarks/profiler_overhead.py --clock wall    # on a quiet machine

Times are CPU seconds of the process by default (``--clock process``), which a busy
machine disturbs far less than wall time; ratios are what to read.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable

# one BLAS thread, as train_mlp.py: set before NumPy loads (spinning BLAS threads on a
# busy 2-core machine make every step many times slower)
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
REVERTED = ("omnitensor/backends/opencl/launch.py", "omnitensor/backends/registry.py")


def make_step(device: str) -> tuple[Callable[[], None], Callable[[], None]]:
    sys.path.insert(0, HERE)
    import numpy as np
    import omnitensor as ot
    from train_mlp import init_weights, ot_mlp, ot_step_fn
    model = ot_mlp(device, init_weights())
    opt = ot.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(0)
    xb = ot.tensor(rng.random((64, 64), dtype=np.float32), device=device)
    yb = ot.tensor(rng.integers(0, 10, 64), device=device)
    step = ot_step_fn(model, opt, xb, yb)
    dev = ot.device(device)
    return step, dev.synchronize


#: what a step's time is read from: "process" (CPU seconds of every thread of this
#: process: steady on a shared, busy machine, and it counts PoCL's and SYCL's worker
#: threads) or "wall"
CLOCK = {"fn": time.process_time}


def per_step(step: Callable[[], None], sync: Callable[[], None], n: int) -> float:
    clock = CLOCK["fn"]
    t0 = clock()
    for _ in range(n):
        step()
    sync()
    return (clock() - t0) / n


def child(device: str, rounds: int, n: int) -> None:
    """Median per-step seconds of the plain step (printed as JSON)."""
    step, sync = make_step(device)
    for _ in range(3):
        step()
    sync()
    print(json.dumps([per_step(step, sync, n) for _ in range(rounds)]))


def before_tree() -> str:
    """A copy of this working tree with the profiler's hot-path edits reverted."""
    sha = subprocess.run(["git", "log", "--format=%H", "-n1", "--diff-filter=A", "--",
                          "omnitensor/backends/opencl/profiling.py"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.strip()
    tmp = tempfile.mkdtemp(prefix="ot_before_")
    shutil.copytree(os.path.join(ROOT, "omnitensor"), os.path.join(tmp, "omnitensor"))
    for path in REVERTED:
        old = subprocess.run(["git", "show", f"{sha}^:{path}"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
        with open(os.path.join(tmp, path), "w") as f:
            f.write(old)
    return tmp


def off_vs_before(device: str, rounds: int, n: int, procs: int, before: str) -> float:
    times: dict[str, list[float]] = {"before": [], "off": []}
    pair = (("before", before), ("off", ROOT))
    for i in range(procs):
        for name, tree in pair if i % 2 == 0 else pair[::-1]:  # ABBA: no order bias
            env = dict(os.environ, PYTHONPATH=tree)
            out = subprocess.run([sys.executable, __file__, "--child", device, "--rounds",
                                  str(rounds), "--steps", str(n), "--clock",
                                  "wall" if CLOCK["fn"] is time.perf_counter else "process"],
                                 env=env, cwd=tree,
                                 capture_output=True, text=True, timeout=600)
            if out.returncode:
                raise RuntimeError(out.stderr)
            times[name] += json.loads(out.stdout.strip().splitlines()[-1])
    report("off vs before", times["off"], times["before"])
    return statistics.median(times["off"]) / statistics.median(times["before"])


def report(what: str, xs: list[float], base: list[float]) -> None:
    """Median and minimum per step, and their ratios to ``base`` (on a busy machine the
    minimum is the steadier estimate of what the code itself costs)."""
    mx, mb = statistics.median(xs), statistics.median(base)
    print(f"  {what:30s} median {mx * 1e3:8.3f} ms (x{mx / mb:.3f})   "
          f"min {min(xs) * 1e3:8.3f} ms (x{min(xs) / min(base):.3f})")


def on_vs_off(device: str, rounds: int, n: int) -> dict[str, float]:
    import omnitensor as ot
    from omnitensor.profiler import ProfilerActivity as A, profile
    step, sync = make_step(device)
    for _ in range(3):
        step()
    sync()
    modes: dict[str, Any] = {"off": None, "on (CPU)": [A.CPU],
                             "on (CPU + device)": [A.CPU, A.CUDA]}
    if device.startswith("opencl"):
        import pyopencl as cl
        st = ot.device(device).backend.state(ot.device(device).index)
        plain = st.queue
        profq = cl.CommandQueue(st.ctx,
                                properties=cl.command_queue_properties.PROFILING_ENABLE)
        modes["profiling queue, no profiler"] = ("queue", plain, profq)
    samples: dict[str, list[float]] = {k: [] for k in modes}
    order = list(modes.items())
    for i in range(rounds):
        for name, acts in order if i % 2 == 0 else order[::-1]:
            if acts is None:
                samples[name].append(per_step(step, sync, n))
            elif isinstance(acts, tuple):
                sync()
                st.queue = acts[2]
                samples[name].append(per_step(step, sync, n))
                st.queue = acts[1]
            else:
                with profile(activities=acts, record_shapes=True):
                    samples[name].append(per_step(step, sync, n))
    for k, v in samples.items():
        report(k if k == "off" else f"{k}, vs off", v, samples["off"])
    return {k: statistics.median(v) for k, v in samples.items()}


def launch_micro(device: str, rounds: int) -> float:
    """The only per-op change when off, isolated: ``launch.run`` against its version
    before the profiler (loaded from git), on one trivial kernel, interleaved."""
    import types

    import pyopencl as cl
    import omnitensor as ot
    from omnitensor.backends.opencl import launch
    sha = subprocess.run(["git", "log", "--format=%H", "-n1", "--diff-filter=A", "--",
                          "omnitensor/backends/opencl/profiling.py"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.strip()
    src = subprocess.run(["git", "show", f"{sha}^:{REVERTED[0]}"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    old = types.ModuleType("omnitensor.backends.opencl.launch_before")
    old.__package__ = "omnitensor.backends.opencl"
    exec(compile(src, "launch_before.py", "exec"), old.__dict__)
    st = ot.device(device).backend.state(ot.device(device).index)
    k = cl.Program(st.ctx, "__kernel void nop(__global float *x) { x[0] = 1.0f; }") \
        .build().nop
    buf = cl.Buffer(st.ctx, cl.mem_flags.READ_WRITE, 64)
    k.set_arg(0, buf)
    n = 2000
    samples: dict[str, list[float]] = {"before": [], "now": []}
    pair = (("before", old.run), ("now", launch.run))
    for i in range(rounds):
        for name, run in pair if i % 2 == 0 else pair[::-1]:
            st.queue.finish()
            t0 = CLOCK["fn"]()
            for _ in range(n):
                run(st.queue, k, (1,), (1,))
            samples[name].append((CLOCK["fn"]() - t0) / n)
            st.queue.finish()
    report("launch.run per enqueue, vs before", samples["now"], samples["before"])
    return statistics.median(samples["now"]) / statistics.median(samples["before"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", default="cpu,opencl:0,sycl:0")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--procs", type=int, default=3, help="child-process pairs (before/off)")
    ap.add_argument("--child", default=None)
    ap.add_argument("--clock", choices=("process", "wall"), default="process")
    a = ap.parse_args()
    CLOCK["fn"] = time.process_time if a.clock == "process" else time.perf_counter
    if a.child:  # PYTHONPATH names the tree to measure
        child(a.child, a.rounds, a.steps)
        return
    sys.path.insert(0, ROOT)
    before = before_tree()
    try:
        for dev in a.devices.split(","):
            print(f"{dev}:")
            off_vs_before(dev, a.rounds, a.steps, a.procs, before)
            if dev.startswith("opencl"):
                launch_micro(dev, a.rounds)
            on_vs_off(dev, a.rounds, a.steps)
    finally:
        shutil.rmtree(before, ignore_errors=True)


if __name__ == "__main__":
    main()
