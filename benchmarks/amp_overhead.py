"""What autocast costs when it is off: train_mlp.py's MLP step (64-256-256-10, ReLU,
SGD momentum, batch 64, cross entropy) on each device, per-step medians.

* ``hooks vs before``: the plain step (no autocast anywhere) in the tree that added AMP's op
  entry checks against the tree just before it, in alternating child processes (each tree
  exported with ``git archive``): the price of the one thread-local read per listed op.
  Reported on the fastest samples of each (the least disturbed on a shared machine), and on
  medians.
* ``disabled vs plain``: in this process, the step run inside ``autocast(device_type,
  enabled=False)`` (entered every step, as ``autocast(enabled=use_amp)`` scripts do) against
  the plain step, interleaved.
* ``checks``: how many autocast entry checks one step runs (counted by tracing the lines
  that read ``state.active``) times the measured cost of one check, against the step: the
  hooks' price without the noise of comparing processes.
* ``enabled``: the step under autocast in the device's low dtype, for information (on cpu
  NumPy computes bfloat16/float16 by conversion, so it is slower, not faster).

    python benchmarks/amp_overhead.py                        # cpu
    python benchmarks/amp_overhead.py --devices cpu,opencl:0,sycl:0 --rounds 5
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)  # this tree, not an installed omnitensor

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # tiny GEMMs: spinning BLAS threads only add noise

CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2])
import omnitensor as ot
assert ot.__file__.startswith(sys.argv[1]), ot.__file__
step, sync = __import__("amp_overhead").make_step(sys.argv[3])
print(json.dumps(__import__("amp_overhead").step_samples({"s": (step, sync)},
                                                         int(sys.argv[4]))["s"]))
"""


def step_samples(fns: dict, n: int) -> dict[str, list[float]]:
    """Seconds of ``n`` single steps of each function, alternating step by step (so a noisy
    neighbour slows every contender alike), after a warm-up."""
    import time
    for fn, sync in fns.values():
        for _ in range(10):
            fn()
        sync()
    out: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(n):
        for k, (fn, sync) in fns.items():
            t0 = time.perf_counter()
            fn()
            sync()
            out[k].append(time.perf_counter() - t0)
    return out


def count_checks(step) -> int:
    """Autocast entry checks one call of ``step`` runs: line events on source lines that
    read the autocast flag."""
    import linecache
    hits = [0]
    flag_lines: dict[tuple[str, int], bool] = {}

    def is_check(filename: str, lineno: int) -> bool:
        key = (filename, lineno)
        v = flag_lines.get(key)
        if v is None:
            line = linecache.getline(filename, lineno)
            v = flag_lines[key] = "_autocast.active" in line or "_state.active and" in line
        return v

    def tracer(frame, event, arg):
        if event == "line" and is_check(frame.f_code.co_filename, frame.f_lineno):
            hits[0] += 1
        return tracer

    sys.settrace(tracer)
    try:
        step()
    finally:
        sys.settrace(None)
    return hits[0]


def check_cost() -> float:
    """Seconds of one ``if state.active:`` on the thread-local autocast state."""
    import timeit
    from omnitensor.core.autocast_state import state as _autocast
    n = 200000
    body = min(timeit.repeat("if _autocast.active: pass", globals={"_autocast": _autocast},
                             number=n, repeat=5))
    empty = min(timeit.repeat("pass", number=n, repeat=5))
    return max(body - empty, 0.0) / n


def _p10(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 10]


def make_step(device: str, mode: str = "plain"):
    """(step, sync) for the MLP on ``device``; ``mode``: plain, disabled, enabled."""
    import omnitensor as ot
    from omnitensor import nn
    ot.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 10)).to(device)
    opt = ot.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = ot.randn(64, 64, device=device)
    y = ot.randint(0, 10, (64,), device=device)
    loss_fn = nn.CrossEntropyLoss()
    dev = ot.device(device)
    dt = dev.type
    low = None
    for name in (("bfloat16", "float16") if dt == "cpu" else ("float16", "bfloat16")):
        d = getattr(ot, name, None)
        if d is not None and dev.supports_dtype(d):
            low = d
            break

    def plain() -> None:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    def disabled() -> None:
        opt.zero_grad()
        with ot.autocast(dt, enabled=False):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    def enabled() -> None:
        opt.zero_grad()
        with ot.autocast(dt, dtype=low):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    if mode == "enabled" and low is None:
        return None, None
    if low is not None:
        enabled.__name__ = low.name
    return {"plain": plain, "disabled": disabled, "enabled": enabled}[mode], \
        (lambda: dev.synchronize())


def _export(rev: str, dest: str) -> str:
    os.makedirs(dest, exist_ok=True)
    arch = subprocess.run(["git", "-C", ROOT, "archive", rev, "omnitensor"],
                          capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", dest], input=arch, check=True)
    return dest


def _amp_commit() -> str:
    out = subprocess.run(["git", "-C", ROOT, "log", "--diff-filter=A", "--format=%H", "--",
                          "omnitensor/core/autocast_state.py"], capture_output=True, text=True,
                         check=True).stdout.split()
    if not out:
        sys.exit("amp_overhead: no commit adds omnitensor/core/autocast_state.py")
    return out[-1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", default="cpu")
    ap.add_argument("--rounds", type=int, default=3, help="child processes per tree")
    ap.add_argument("--steps", type=int, default=200, help="timed steps per process")
    args = ap.parse_args()
    devices = [d.strip() for d in args.devices.split(",") if d.strip()]
    commit = _amp_commit()
    from _timing import fmt_time
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"before": _export(f"{commit}^", os.path.join(tmp, "before")),
                 "hooks": _export(commit, os.path.join(tmp, "hooks"))}
        print(f"AMP commit {commit[:10]}; MLP 64-256-256-10 step, batch 64; 10th percentiles "
              f"of single steps")
        for device in devices:
            per: dict[str, list[float]] = {k: [] for k in trees}
            for _ in range(args.rounds):
                for name, tree in trees.items():
                    out = subprocess.run([sys.executable, "-c", CHILD, tree, HERE, device,
                                          str(args.steps)], capture_output=True, text=True,
                                         cwd=tmp, timeout=300)
                    if out.returncode:
                        sys.exit(out.stderr[-2000:])
                    per[name] += json.loads(out.stdout.strip().splitlines()[-1])
            # the machine is shared: the fast tail (10th percentile) is the least disturbed
            before, hooks = (_p10(per[k]) for k in ("before", "hooks"))
            med = statistics.median(per["hooks"]) / statistics.median(per["before"])
            fns = {}
            for mode in ("plain", "disabled", "enabled"):
                fn, sync = make_step(device, mode)
                if fn is not None:
                    fns[mode] = (fn, sync)
            t = step_samples(fns, args.steps)
            checks = count_checks(fns["plain"][0])
            cost = check_cost()
            p = {k: _p10(v) for k, v in t.items()}
            m = {k: statistics.median(v) for k, v in t.items()}
            print(f"{device:<9} plain step, hooks vs before: {fmt_time(before)} -> "
                  f"{fmt_time(hooks)}  ratio {hooks / before:5.3f} (medians {med:5.3f})")
            print(f"{'':<9} autocast(enabled=False) vs plain: {fmt_time(p['plain'])} -> "
                  f"{fmt_time(p['disabled'])}  ratio {p['disabled'] / p['plain']:5.3f} "
                  f"(medians {m['disabled'] / m['plain']:5.3f})"
                  + (f"; autocast {fns['enabled'][0].__name__} {fmt_time(p['enabled'])}"
                     if "enabled" in p else ""))
            print(f"{'':<9} {checks} autocast checks per step x {cost * 1e9:.0f} ns = "
                  f"{checks * cost * 1e6:.2f} us = {checks * cost / p['plain'] * 100:.3f}% "
                  f"of the step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
