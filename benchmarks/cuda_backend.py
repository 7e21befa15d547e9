"""omnitensor ``cuda:0`` vs raw CuPy (and PyTorch CUDA when present), medians of
interleaved repeats in one run: tiny-op overhead, 256M float32 add bandwidth, 8192 float32
matmul, and an MLP training step. Needs a GPU (see tools/gpu_check.sh).

    python benchmarks/cuda_backend.py [--small]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _timing import fmt_time, interleaved


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", action="store_true", help="smaller sizes (quick check)")
    args = ap.parse_args()
    import omnitensor as ot
    if not ot.cuda.is_available():
        print("no CUDA device:", ot.cuda.unavailable_reason())
        return
    import cupy
    dev = "cuda:0"
    sync = cupy.cuda.get_current_stream().synchronize
    try:
        import torch
        has_torch = torch.cuda.is_available()
    except ImportError:
        torch, has_torch = None, False
    tsync = torch.cuda.synchronize if has_torch else None
    rows = []

    c8 = cupy.ones(8, cupy.float32)
    t8 = ot.ones(8, device=dev)
    fns = {"cupy": lambda: c8 + c8, "omnitensor": lambda: t8 + t8}
    syncs = {"cupy": sync, "omnitensor": sync}
    if has_torch:
        p8 = torch.ones(8, device="cuda")
        fns["torch"], syncs["torch"] = (lambda: p8 + p8), tsync
    rows.append(("tiny add (8 el.), per op", interleaved(fns, syncs=syncs, repeats=15), None))

    n = (16 if args.small else 256) * 1024 * 1024
    ca = cupy.ones(n, cupy.float32)
    ta = ot.ones(n, device=dev)
    fns = {"cupy": lambda: ca + ca, "omnitensor": lambda: ta + ta}
    syncs = {"cupy": sync, "omnitensor": sync}
    if has_torch:
        pa = torch.ones(n, device="cuda")
        fns["torch"], syncs["torch"] = (lambda: pa + pa), tsync
    r = interleaved(fns, syncs=syncs, repeats=9)
    rows.append((f"{n >> 20}M float32 add", r, {k: 3 * 4 * n / v / 1e9 for k, v in r.items()}))

    m = 2048 if args.small else 8192
    cm = cupy.random.default_rng(0).standard_normal((m, m), dtype=cupy.float32)
    tm = ot.from_dlpack(cm)
    fns = {"cupy": lambda: cm @ cm, "omnitensor": lambda: tm @ tm}
    syncs = {"cupy": sync, "omnitensor": sync}
    if has_torch:
        pm = torch.from_dlpack(cm)
        fns["torch"], syncs["torch"] = (lambda: pm @ pm), tsync
    r = interleaved(fns, syncs=syncs, repeats=7)
    rows.append((f"{m} float32 matmul", r, {k: 2 * m ** 3 / v / 1e12 for k, v in r.items()}))

    # MLP 64-256-256-10 training step, batch 64 (the digits benchmark's model)
    ot.manual_seed(0)
    model = ot.nn.Sequential(ot.nn.Linear(64, 256), ot.nn.ReLU(), ot.nn.Linear(256, 256),
                             ot.nn.ReLU(), ot.nn.Linear(256, 10)).to(dev)
    opt = ot.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    xb = ot.randn(64, 64, device=dev)
    yb = ot.randint(0, 10, (64,), device=dev)

    def ot_step() -> None:
        opt.zero_grad()
        ot.nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
    fns, syncs = {"omnitensor": ot_step}, {"omnitensor": sync}
    if has_torch:
        pmodel = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                                     torch.nn.Linear(256, 256), torch.nn.ReLU(),
                                     torch.nn.Linear(256, 10)).cuda()
        popt = torch.optim.SGD(pmodel.parameters(), lr=0.1, momentum=0.9)
        pxb = torch.randn(64, 64, device="cuda")
        pyb = torch.randint(0, 10, (64,), device="cuda")

        def torch_step() -> None:
            popt.zero_grad()
            torch.nn.functional.cross_entropy(pmodel(pxb), pyb).backward()
            popt.step()
        fns["torch"], syncs["torch"] = torch_step, tsync
    rows.append(("MLP train step (b=64)", interleaved(fns, syncs=syncs, repeats=9), None))

    print(f"GPU: {ot.cuda.get_device_name(0)}; cupy {cupy.__version__}")
    for what, r, rate in rows:
        parts = [f"{k} {fmt_time(v).strip()}" + (f" ({rate[k]:.1f} {'GB/s' if 'add' in what else 'TFLOP/s'})" if rate else "")
                 for k, v in r.items()]
        ratio = ""
        if "cupy" in r:
            ratio = f"  omnitensor/cupy {r['omnitensor'] / r['cupy']:.2f}x"
        if "torch" in r:
            ratio += f"  omnitensor/torch {r['omnitensor'] / r['torch']:.2f}x"
        print(f"{what:<26} " + "; ".join(parts) + ratio)


if __name__ == "__main__":
    main()
