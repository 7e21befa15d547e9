"""Optimizer-step cost: ``SGD(momentum=0.9)``, ``Adam`` and ``AdamW`` ``step()`` on the
parameters of a 64-256-256-10 MLP (six tensors, 85k elements) with fixed gradients,
omnitensor on each device vs PyTorch CPU (if installed). Medians of interleaved repeats
on the host; medians of repeats (synchronized) on other devices.

    python benchmarks/optim_step.py                 # every device
    python benchmarks/optim_step.py --devices cpu,opencl:0
"""
from __future__ import annotations

import argparse
import os
import sys

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _timing import interleaved, median_time, try_import_torch  # noqa: E402

import omnitensor as ot  # noqa: E402

SHAPES = [(256, 64), (256,), (256, 256), (256,), (10, 256), (10,)]
OPTIMIZERS = {
    "SGD momentum": ("SGD", {"lr": 0.1, "momentum": 0.9}),
    "Adam": ("Adam", {"lr": 1e-3}),
    "AdamW": ("AdamW", {"lr": 1e-3, "weight_decay": 0.01}),
}


def _arrays(seed: int = 0) -> tuple[list[np.ndarray], list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    params = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [rng.standard_normal(s).astype(np.float32) * 1e-2 for s in SHAPES]
    return params, grads


def ot_step_fns(device: str) -> dict[str, Callable[[], None]]:
    """One ``opt.step`` closure per optimizer, on ``device``."""
    params_np, grads_np = _arrays()
    fns = {}
    for name, (cls, kw) in OPTIMIZERS.items():
        params = [ot.tensor(p, device=device, requires_grad=True) for p in params_np]
        for p, g in zip(params, grads_np):
            p.grad = ot.tensor(g, device=device)
        fns[name] = getattr(ot.optim, cls)(params, **kw).step
    return fns


def torch_step_fns(torch: Any) -> dict[str, Callable[[], None]]:
    params_np, grads_np = _arrays()
    fns = {}
    for name, (cls, kw) in OPTIMIZERS.items():
        params = [torch.tensor(p, requires_grad=True) for p in params_np]
        for p, g in zip(params, grads_np):
            p.grad = torch.tensor(g)
        fns[name] = getattr(torch.optim, cls)(params, **kw).step
    return fns


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", default=None, help="comma-separated (default: all)")
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    torch = try_import_torch()
    if torch is not None:
        torch.set_num_threads(1)
    devices = args.devices.split(",") if args.devices else [str(d) for d in ot.devices()]
    print(f"omnitensor {ot.__version__}; torch {torch.__version__ if torch else '-'}; "
          f"devices {devices}")
    per_dev = {dev: ot_step_fns(dev) for dev in devices}
    tfns = torch_step_fns(torch) if torch is not None else {}
    for name in OPTIMIZERS:
        host = {f"omnitensor {d}": f[name] for d, f in per_dev.items() if d == "cpu"}
        if name in tfns:
            host["torch cpu"] = tfns[name]
        res = {k: 1e6 * v for k, v in interleaved(host, repeats=args.repeats).items()}
        for d, f in per_dev.items():
            if d != "cpu":
                res[f"omnitensor {d}"] = 1e6 * median_time(
                    f[name], repeats=max(3, args.repeats // 3),
                    sync=lambda d=d: ot.synchronize(d), min_time=0.1)
        ref = res.get("torch cpu")
        print(f"\n{name} step, 64-256-256-10 MLP parameters")
        for k, v in res.items():
            ratio = f"  {v / ref:5.2f}x torch" if ref else ""
            print(f"  {k:<22} {v:9.1f} us/step{ratio}")


if __name__ == "__main__":
    main()
