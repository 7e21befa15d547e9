"""Draw the benchmark results as one PNG (``docs/img/benchmarks.png``, shown by
``docs/benchmarks.md``) from the JSON the benchmarks write:

    python benchmarks/overhead.py --quick --json /tmp/overhead.json
    python benchmarks/compile.py --rows mlp --json /tmp/compile.json
    python benchmarks/chart.py --overhead /tmp/overhead.json --compile /tmp/compile.json \\
        --note "shared 2-core VM, load 6"

Left: per-op cost of omnitensor on cpu relative to NumPy and to torch (``overhead.py``).
Right: the MLP training step per contender, eager and compiled, per device
(``compile.py``). The figure states each file's date and load, and ``--note`` (say when the
machine was shared: the numbers are then indicative only). Needs matplotlib
(``pip install 'omnitensor[bench]'``).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _load(path: str | None) -> dict[str, Any] | None:
    if not path:
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _stamp(res: dict[str, Any]) -> str:
    quick = ", quick settings" if res.get("quick") else ""
    return f"{res['benchmark']}.py, {res['date']}, load {res.get('load', 0):.1f}{quick}"


def overhead_panel(ax: Any, res: dict[str, Any]) -> None:
    """Bars of omnitensor's time over NumPy's and torch's per op (1.0 = as fast)."""
    labels = [r["what"] for r in res["rows"]]
    width = 0.38
    for k, (base, color) in enumerate((("numpy", "#4c72b0"), ("torch", "#dd8452"))):
        ratios = [r["omnitensor"] / r[base] if r.get(base) else 0.0 for r in res["rows"]]
        xs = [i + (k - 0.5) * width for i in range(len(labels))]
        bars = ax.bar(xs, ratios, width, label=f"omnitensor / {base}", color=color)
        ax.bar_label(bars, fmt="%.2fx", fontsize=8)
    ax.axhline(1.0, color="gray", lw=0.8, ls="--")
    ax.set_xticks(range(len(labels)), labels, fontsize=8)
    ax.set_ylabel("time ratio (lower is better)")
    ax.set_title(f"cpu per-op cost\n{_stamp(res)}", fontsize=9)
    ax.legend(fontsize=8)


def compile_panel(ax: Any, res: dict[str, Any]) -> None:
    """Horizontal bars of the MLP step time (ms) per contender, fastest first."""
    times = sorted(res["mlp_step_seconds"].items(), key=lambda kv: kv[1])
    names = [k for k, _ in times]
    ms = [v * 1e3 for _, v in times]
    colors = ["#55a868" if k.startswith("compiled") else "#8172b3" if k.startswith("ot")
              else "#c44e52" for k in names]
    bars = ax.barh(range(len(names)), ms, color=colors)
    ax.bar_label(bars, fmt="%.2f ms", fontsize=8, padding=2)
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("MLP 64-256-256-10 training step, ms (lower is better)")
    ax.set_xlim(0, max(ms) * 1.3)
    ax.set_title(f"omnitensor.compile vs eager and peers\n{_stamp(res)}", fontsize=9)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--overhead", help="JSON of benchmarks/overhead.py --json")
    ap.add_argument("--compile", help="JSON of benchmarks/compile.py --json")
    ap.add_argument("--note", default="", help="a line about the machine and its load")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "img", "benchmarks.png"))
    args = ap.parse_args(argv)
    try:
        import matplotlib
        matplotlib.use("Agg")  # files only, no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        print("chart.py needs matplotlib: pip install 'omnitensor[bench]'", file=sys.stderr)
        return 2
    panels = [(fn, res) for fn, res in ((overhead_panel, _load(args.overhead)),
                                        (compile_panel, _load(args.compile))) if res]
    if not panels:
        print("chart.py: give --overhead and/or --compile (JSON files)", file=sys.stderr)
        return 2
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.2), squeeze=False)
    for ax, (fn, res) in zip(axes[0], panels):
        fn(ax, res)
    if args.note:
        fig.text(0.5, 0.005, args.note, ha="center", va="bottom", fontsize=8, color="#444")
    fig.tight_layout(rect=(0, 0.04 if args.note else 0, 1, 1))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
