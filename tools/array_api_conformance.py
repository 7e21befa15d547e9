"""Run the official Array API test suite (data-apis/array-api-tests) against omnitensor on
each device and print the pass/fail counts.

The suite is not on PyPI: clone it with its pinned spec submodule, then point this script
at the checkout (never commit it here):

    git clone --recurse-submodules https://github.com/data-apis/array-api-tests /tmp/aat
    pip install -r /tmp/aat/requirements.txt
    python tools/array_api_conformance.py /tmp/aat --device cpu --device opencl:0 --device sycl:0

Defaults: 20 hypothesis examples per test, seed 0, PYTHONHASHSEED=0, no Hypothesis
deadline (repeatable on a busy machine).
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time


def run(suite: str, device: str, examples: int, seed: int, extra: list[str]) -> tuple[str, float]:
    env = dict(os.environ, ARRAY_API_TESTS_MODULE="omnitensor", OMNITENSOR_DEVICE=device,
               PYTHONHASHSEED="0")
    cmd = [sys.executable, "-m", "pytest", "array_api_tests", "-q", "-p", "no:cacheprovider",
           "-W", "ignore", f"--max-examples={examples}", f"--hypothesis-seed={seed}",
           # no 800 ms per-example deadline: a first call that JIT-compiles kernels (dpnp,
           # PoCL) or a busy machine would fail a correct op
           "--hypothesis-disable-deadline", *extra]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=suite, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    lines = out.stdout.strip().splitlines()
    failed = [ln.split(" - ")[0] for ln in lines if ln.startswith("FAILED")]
    summary = lines[-1] if lines else out.stderr[-500:]
    return summary + ("\n    " + "\n    ".join(failed) if failed else ""), dt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("suite", help="path to an array-api-tests checkout (with its submodule)")
    ap.add_argument("--device", action="append", help="device(s); default: all devices")
    ap.add_argument("--max-examples", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = ap.parse_args()
    if not os.path.isdir(os.path.join(args.suite, "array_api_tests")):
        ap.error(f"{args.suite} is not an array-api-tests checkout")
    devices = args.device
    if not devices:
        import omnitensor as ot
        devices = [str(d) for d in ot.devices()]
    bad = 0
    for dev in devices:
        summary, dt = run(args.suite, dev, args.max_examples, args.seed, args.pytest_args)
        print(f"{dev:<9} {summary}  ({dt:.0f} s)")
        m = re.search(r"(\d+) failed", summary)
        bad += int(m.group(1)) if m else 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
