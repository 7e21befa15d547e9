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

from . import KINDS, TorchUnavailable, as_json, evaluate, figures, gap_lines, print_check, table


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


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    import omnitensor as ot
    try:
        devices = [str(ot.device(d)) for d in (args.device or ["cpu"])]
        samples = bool(args.verbose or args.op)
        results = evaluate(devices, args.op, tuple(args.kind or KINDS),
                           tuple(args.dtype) if args.dtype else None,
                           lambda r: print_check(r, samples))
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
