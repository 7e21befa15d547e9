"""Autograd overhead: ``(a + b).sum().backward()`` on 8 elements, and a 20-op elementwise
chain on 1M float32 elements (forward + backward), omnitensor ``cpu`` vs PyTorch CPU, medians
of interleaved repeats in one run.

    python benchmarks/autograd.py
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _timing import fmt_time, interleaved, try_import_torch

import omnitensor as ot


def chain(x, lib):
    y = x
    for _ in range(5):
        y = (y * 1.01 + 0.1).tanh()
        y = y * y - 0.5 * y
    return y.sum()


def main() -> None:
    torch = try_import_torch()
    a = ot.ones(8, requires_grad=True)
    b = ot.ones(8, requires_grad=True)

    def ot_tiny() -> None:
        (a + b).sum().backward()
    fns = {"omnitensor": ot_tiny}
    if torch is not None:
        ta = torch.ones(8, requires_grad=True)
        tb = torch.ones(8, requires_grad=True)
        fns["torch"] = lambda: (ta + tb).sum().backward()
    tiny = interleaved(fns, repeats=21)

    x = ot.rand(1 << 20, requires_grad=True)
    fns = {"omnitensor": lambda: chain(x, ot).backward()}
    if torch is not None:
        tx = torch.rand(1 << 20, requires_grad=True)
        fns["torch"] = lambda: chain(tx, torch).backward()
        threads = torch.get_num_threads()

        def torch_one_thread() -> None:
            torch.set_num_threads(1)  # NumPy's ufuncs (the cpu backend's kernels) are serial
            try:
                chain(tx, torch).backward()
            finally:
                torch.set_num_threads(threads)
        fns["torch 1 thread"] = torch_one_thread
    big = interleaved(fns, repeats=7)

    print(f"omnitensor cpu: {ot.get_num_threads()} threads; torch: "
          f"{torch.get_num_threads() if torch else '-'} threads")
    print(f"{'graph':<34} {'torch':>11} {'omnitensor':>11}   ot/torch")
    for what, r, ref in (("(a + b).sum().backward(), 8 el.", tiny, "torch"),
                         ("20-op chain fwd+bwd, 1M float32", big, "torch"),
                         ("  same, torch on 1 thread", big, "torch 1 thread")):
        t = r.get(ref)
        print(f"{what:<34} {fmt_time(t) if t else '        -  '} {fmt_time(r['omnitensor'])}"
              f"   {(r['omnitensor'] / t) if t else float('nan'):7.2f}x")


if __name__ == "__main__":
    main()
