"""Per-op cost of omnitensor ``cpu`` vs raw NumPy vs PyTorch CPU (if installed): a tiny add
(8 elements), a 16M float32 add and a 2048 matmul. Medians of interleaved repeats in one
run; the ratios are the result.

    python benchmarks/overhead.py [--quick] [--json PATH]

``--json PATH`` also writes the medians (seconds) per op and contender, with the date and
versions, for ``benchmarks/chart.py``.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import fmt_time, interleaved, try_import_torch

import omnitensor as ot


def _row(what: str, fns: dict, repeats: int) -> dict:
    r = interleaved(fns, repeats=repeats)
    r["what"] = what
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats (development)")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON here")
    args = ap.parse_args()
    scale = 3 if args.quick else 1
    torch = try_import_torch()
    rows = []
    a8, t8 = np.ones(8, np.float32), ot.ones(8)
    fns = {"numpy": lambda: a8 + a8, "omnitensor": lambda: t8 + t8}
    if torch is not None:
        p8 = torch.ones(8)
        fns["torch"] = lambda: p8 + p8
    rows.append(_row("tiny add (8 el.)", fns, 31 // scale))

    n = 16 * 1024 * 1024
    a, t = np.ones(n, np.float32), ot.ones(n)
    fns = {"numpy": lambda: np.add(a, a), "omnitensor": lambda: t + t}
    if torch is not None:
        p = torch.ones(n)
        fns["torch"] = lambda: p + p
    rows.append(_row("16M float32 add", fns, max(3, 7 // scale)))

    m = np.random.default_rng(0).standard_normal((2048, 2048)).astype(np.float32)
    tm = ot.tensor(m)
    fns = {"numpy": lambda: m @ m, "omnitensor": lambda: tm @ tm}
    if torch is not None:
        pm = torch.from_numpy(m)
        fns["torch"] = lambda: pm @ pm
    rows.append(_row("2048 matmul f32", fns, max(3, 5 // scale)))

    print(f"{'op':<18} {'numpy':>11} {'torch':>11} {'omnitensor':>11}   ot/numpy  ot/torch")
    for r in rows:
        tt = r.get("torch")
        print(f"{r['what']:<18} {fmt_time(r['numpy'])} {fmt_time(tt) if tt else '        -  '} "
              f"{fmt_time(r['omnitensor'])}   {r['omnitensor'] / r['numpy']:7.2f}x "
              f"{(r['omnitensor'] / tt) if tt else float('nan'):7.2f}x")


    if args.json:
        out = {"benchmark": "overhead", "date": datetime.date.today().isoformat(),
               "quick": args.quick, "load": os.getloadavg()[0],
               "versions": {"numpy": np.__version__, "omnitensor": ot.__version__,
                            "torch": getattr(torch, "__version__", None)},
               "rows": rows}
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
