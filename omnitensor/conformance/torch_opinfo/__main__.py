"""``python -m omnitensor.conformance.torch_opinfo``: run torch's OpInfo checks here.

    python -m omnitensor.conformance.torch_opinfo --op addmm --device cpu   # each sample
    python -m omnitensor.conformance.torch_opinfo --device opencl:0 --json out.json
    python -m omnitensor.conformance.torch_opinfo --device cpu --gaps-out gaps.txt

``--op`` takes OpInfo keys (``addmm``, ``addmm.decomposed``, ``nn.functional.*``); with
``--op`` (or ``-v``) every sample is printed with its diff, otherwise one line per failing
check. Exit status 1 when a check fails, 2 on a bad argument or without torch.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from . import (KINDS, CheckResult, TorchUnavailable, as_json, figures, gap_lines,
               run_checks, select, table)


def _print(r: CheckResult, samples: bool) -> None:
    if r.status in ("skip", "missing"):
        if samples:
            print(f"{r.status:<7} {r.op} {r.kind} {r.dtype} {r.device}: {r.reason}")
        return
    if r.status == "pass" and not samples:
        return
    n = r.count("pass") + r.count("fail")
    print(f"{r.status.upper():<7} {r.op} {r.kind} {r.dtype} {r.device}: "
          f"{r.count('pass')}/{n} samples pass ({r.seconds:.2f} s)")
    for s in r.samples:
        if samples or s.status == "fail":
            tail = f"{s.cause}: {s.message}" if s.status == "fail" else s.message
            print(f"    [{s.index}] {s.status:<4} {s.sample}")
            if tail:
                print(f"           {tail}")


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m omnitensor.conformance.torch_opinfo",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--op", action="append", help="OpInfo key or fnmatch pattern (repeat)")
    p.add_argument("--device", action="append", help="device(s) (default: cpu)")
    p.add_argument("--kind", action="append", choices=KINDS, help="forward, grad, errors")
    p.add_argument("--dtype", action="append", help="only these dtypes")
    p.add_argument("-v", "--verbose", action="store_true", help="print every sample")
    p.add_argument("--json", metavar="PATH", help="figures and failures as JSON ('-': stdout)")
    p.add_argument("--gaps-out", metavar="PATH", help="write known-gaps lines for failures")
    return p.parse_args(argv)


def evaluate(devices: list[str], patterns: list[str] | None = None,
             kinds: tuple[str, ...] = KINDS, dtypes: tuple[str, ...] | None = None,
             progress: Any = None) -> list[CheckResult]:
    """Every check of the selected OpInfos on each device."""
    ops = select(patterns)
    out: list[CheckResult] = []
    for dev in devices:
        out.extend(run_checks(ops, dev, kinds, dtypes, progress))
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    import omnitensor as ot
    try:
        devices = [str(ot.device(d)) for d in (args.device or ["cpu"])]
        samples = bool(args.verbose or args.op)
        results = evaluate(devices, args.op, tuple(args.kind or KINDS),
                           tuple(args.dtype) if args.dtype else None,
                           lambda r: _print(r, samples))
    except TorchUnavailable as e:
        print(f"torch_opinfo: {e}", file=sys.stderr)
        return 2
    except (ValueError, ot.OmnitensorError) as e:
        print(f"torch_opinfo: {e}", file=sys.stderr)
        return 2
    print(table(figures(results)))
    if args.json:
        text = json.dumps(as_json(results), indent=1)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w", encoding="utf-8") as f:
                f.write(text + "\n")
    if args.gaps_out:
        with open(args.gaps_out, "w", encoding="utf-8") as f:
            f.write("\n".join(gap_lines(results)) + "\n")
    return 1 if any(r.status == "fail" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
