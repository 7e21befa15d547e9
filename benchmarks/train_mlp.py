"""Training-step cost of omnitensor vs PyTorch CPU (and hand-written NumPy), in one run.

MLP 64-256-256-10 (ReLU), SGD(lr=0.1, momentum=0.9), batch 64, 30 epochs on scikit-learn's
digits; and a CNN step (conv 1->16 3x3, ReLU, maxpool 2, linear). Per-step times are
medians of interleaved repeats on one fixed batch (so a noisy neighbour slows every
contender alike); full-training times are medians of alternating runs.

    python benchmarks/train_mlp.py                    # every device
    python benchmarks/train_mlp.py --devices cpu --profile
    python benchmarks/train_mlp.py --epochs 5 --quick # a fast look

BLAS and torch run single-threaded by default (``--threads`` changes it, for all
contenders alike): these GEMMs are tiny (64 x 256 x 256), a second thread buys nothing,
and on a busy 2-core machine spinning BLAS threads make every step ~10x slower.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import sys


def _threads_from_argv() -> str:
    for i, a in enumerate(sys.argv):
        if a == "--threads" and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return "1"


# before NumPy (and its BLAS) is imported
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = _threads_from_argv()
import pstats  # noqa: E402 - after the thread variables are set
import statistics  # noqa: E402
import time  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _timing import interleaved, median_time, try_import_torch  # noqa: E402

import omnitensor as ot  # noqa: E402
from omnitensor import nn  # noqa: E402

BATCH = 64
LR, MOMENTUM = 0.1, 0.9


def load_digits_split() -> tuple[np.ndarray, ...]:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    return tuple(train_test_split(x, d.target.astype(np.int64), test_size=0.2, random_state=0,
                                  stratify=d.target))


def init_weights(seed: int = 0) -> list[np.ndarray]:
    """One set of initial weights (torch's default scheme) shared by every contender."""
    rng = np.random.default_rng(seed)
    out = []
    for fan_in, fan_out in ((64, 256), (256, 256), (256, 10)):
        b = 1 / np.sqrt(fan_in)
        out += [rng.uniform(-b, b, (fan_out, fan_in)).astype(np.float32),
                rng.uniform(-b, b, fan_out).astype(np.float32)]
    return out


# ------------------------------------------------------------------------ omnitensor
def ot_mlp(device: str, weights: list[np.ndarray]) -> nn.Module:
    m = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                      nn.Linear(256, 10))
    with ot.no_grad():
        for p, w in zip(m.parameters(), weights):
            p.copy_(ot.tensor(w))
    return m.to(device)


def ot_step_fn(model: nn.Module, opt: Any, xb: Any, yb: Any) -> Callable[[], None]:
    F = nn.functional

    def step() -> None:
        opt.zero_grad()
        F.cross_entropy(model(xb), yb).backward()
        opt.step()
    return step


def ot_train(device: str, data: tuple, weights: list[np.ndarray], epochs: int
             ) -> tuple[float, float, float]:
    """(total seconds, median ms per step over epochs, test accuracy)."""
    x_tr, x_te, y_tr, y_te = data
    model = ot_mlp(device, weights)
    opt = ot.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    ds = ot.data.TensorDataset(ot.tensor(x_tr, device=device), ot.tensor(y_tr, device=device))
    loader = ot.data.DataLoader(ds, batch_size=BATCH, shuffle=True,
                                generator=ot.Generator().manual_seed(0))
    F = nn.functional
    per_step = []
    t0 = time.perf_counter()
    for _ in range(epochs):
        te = time.perf_counter()
        n = 0
        for xb, yb in loader:
            opt.zero_grad()
            F.cross_entropy(model(xb), yb).backward()
            opt.step()
            n += 1
        ot.synchronize(device)
        per_step.append((time.perf_counter() - te) / n)
    total = time.perf_counter() - t0
    with ot.no_grad():
        acc = (model(ot.tensor(x_te, device=device)).argmax(1).cpu().numpy() == y_te).mean()
    return total, statistics.median(per_step), float(acc)


# ----------------------------------------------------------------------------- torch
def torch_mlp(torch: Any, weights: list[np.ndarray]) -> Any:
    m = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                            torch.nn.Linear(256, 256), torch.nn.ReLU(),
                            torch.nn.Linear(256, 10))
    with torch.no_grad():
        for p, w in zip(m.parameters(), weights):
            p.copy_(torch.from_numpy(w))
    return m


def torch_train(torch: Any, data: tuple, weights: list[np.ndarray], epochs: int,
                use_loader: bool) -> tuple[float, float, float]:
    x_tr, x_te, y_tr, y_te = data
    model = torch_mlp(torch, weights)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    X, Y = torch.from_numpy(x_tr), torch.from_numpy(y_tr)
    g = torch.Generator().manual_seed(0)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, Y),
                                         batch_size=BATCH, shuffle=True, generator=g)
    F = torch.nn.functional
    per_step = []
    t0 = time.perf_counter()
    for _ in range(epochs):
        te = time.perf_counter()
        if use_loader:
            batches = loader
        else:  # index batches: the fastest idiomatic torch loop
            perm = torch.randperm(len(X), generator=g)
            batches = ((X[perm[i:i + BATCH]], Y[perm[i:i + BATCH]])
                       for i in range(0, len(X), BATCH))
        n = 0
        for xb, yb in batches:
            opt.zero_grad()
            F.cross_entropy(model(xb), yb).backward()
            opt.step()
            n += 1
        per_step.append((time.perf_counter() - te) / n)
    total = time.perf_counter() - t0
    with torch.no_grad():
        acc = (model(torch.from_numpy(x_te)).argmax(1).numpy() == y_te).mean()
    return total, statistics.median(per_step), float(acc)


# ----------------------------------------------------------------------------- NumPy
class NumpyMLP:
    """Hand-written forward, backward and momentum SGD: the floor for this workload."""

    def __init__(self, weights: list[np.ndarray]) -> None:
        self.p = [w.copy() for w in weights]
        self.v = [np.zeros_like(w) for w in weights]

    def step(self, x: np.ndarray, y: np.ndarray) -> None:
        w1, b1, w2, b2, w3, b3 = self.p
        h1 = np.maximum(x @ w1.T + b1, 0)
        h2 = np.maximum(h1 @ w2.T + b2, 0)
        z = h2 @ w3.T + b3
        z -= z.max(1, keepdims=True)
        e = np.exp(z)
        g = e / e.sum(1, keepdims=True)
        g[np.arange(len(y)), y] -= 1
        g /= len(y)
        grads = [None] * 6
        grads[4], grads[5] = g.T @ h2, g.sum(0)
        g = (g @ w3) * (h2 > 0)
        grads[2], grads[3] = g.T @ h1, g.sum(0)
        g = (g @ w2) * (h1 > 0)
        grads[0], grads[1] = g.T @ x, g.sum(0)
        for p, v, gr in zip(self.p, self.v, grads):
            v *= MOMENTUM
            v += gr
            p -= LR * v


def numpy_train(data: tuple, weights: list[np.ndarray], epochs: int
                ) -> tuple[float, float, float]:
    x_tr, x_te, y_tr, y_te = data
    m = NumpyMLP(weights)
    rng = np.random.default_rng(0)
    per_step = []
    t0 = time.perf_counter()
    for _ in range(epochs):
        te = time.perf_counter()
        perm = rng.permutation(len(x_tr))
        n = 0
        for i in range(0, len(x_tr), BATCH):
            idx = perm[i:i + BATCH]
            m.step(x_tr[idx], y_tr[idx])
            n += 1
        per_step.append((time.perf_counter() - te) / n)
    total = time.perf_counter() - t0
    w1, b1, w2, b2, w3, b3 = m.p
    h = np.maximum(np.maximum(x_te @ w1.T + b1, 0) @ w2.T + b2, 0) @ w3.T + b3
    return total, statistics.median(per_step), float((h.argmax(1) == y_te).mean())


# ------------------------------------------------------------------------------- CNN
def ot_cnn_step(device: str) -> Callable[[], None]:
    ot.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(16 * 4 * 4, 10)).to(device)
    opt = ot.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    xb = ot.rand(BATCH, 1, 8, 8, device=device)
    yb = ot.randint(0, 10, (BATCH,), device=device)
    return ot_step_fn(model, opt, xb, yb)


def torch_cnn_step(torch: Any) -> Callable[[], None]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                                torch.nn.Linear(16 * 4 * 4, 10))
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    xb, yb = torch.rand(BATCH, 1, 8, 8), torch.randint(0, 10, (BATCH,))

    def step() -> None:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
    return step


# --------------------------------------------------------------------------- profile
_CATEGORIES = (
    ("backend calls (NumPy kernels)", ("omnitensor/backends/", "numpy/", "{method 'reduce'",
                                       "{built-in method numpy", "{method 'astype'",
                                       "{method 'copy'", "{method 'reshape'",
                                       "{method 'transpose'")),
    ("autograd engine + recording", ("omnitensor/autograd/", "omnitensor/core/graph.py")),
    ("core op dispatch", ("omnitensor/core/",)),
    ("nn (modules, functional)", ("omnitensor/nn/",)),
    ("optim", ("omnitensor/optim/",)),
    ("data loading", ("omnitensor/data/",)),
)


def profile(fn: Callable[[], None], steps: int, title: str) -> None:
    fn()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        fn()
    prof.disable()
    stats = pstats.Stats(prof)
    totals: dict[str, float] = {}
    total = 0.0
    rows = []
    for (filename, line, func), (_cc, nc, tt, _ct, _callers) in stats.stats.items():
        where = f"{filename}:{line}({func})"
        key = filename if not filename.startswith("~") else func
        cat = "other Python"
        for name, patterns in _CATEGORIES:
            if any(p in key.replace(os.sep, "/") for p in patterns):
                cat = name
                break
        totals[cat] = totals.get(cat, 0.0) + tt
        total += tt
        rows.append((tt, nc, where))
    print(f"\nprofile: {title}, {steps} steps under cProfile "
          f"({1e3 * total / steps:.2f} ms/step profiled; cProfile inflates Python-heavy "
          f"parts)")
    for cat, tt in sorted(totals.items(), key=lambda kv: -kv[1]):
        print(f"  {cat:<32} {100 * tt / total:5.1f}%  {1e3 * tt / steps:7.3f} ms/step")
    print("  top functions by own time:")
    for tt, nc, where in sorted(rows, reverse=True)[:12]:
        short = where.replace(os.path.dirname(os.path.dirname(ot.__file__)) + os.sep, "")
        print(f"    {1e6 * tt / steps:8.1f} us/step  {nc // steps:4d} calls/step  {short}")


# ------------------------------------------------------------------------------ main
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", default=None, help="comma-separated (default: all)")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3, help="alternating full runs on cpu")
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--profile", action="store_true", help="cProfile the cpu steps")
    ap.add_argument("--threads", type=int, default=1, help="BLAS/torch threads (default 1)")
    args = ap.parse_args()
    torch = try_import_torch()
    if torch is not None:
        torch.set_num_threads(args.threads)
    devices = args.devices.split(",") if args.devices else [str(d) for d in ot.devices()]
    data = load_digits_split()
    weights = init_weights()
    repeats = 5 if args.quick else 15
    print(f"omnitensor {ot.__version__}; numpy {np.__version__}; torch "
          f"{torch.__version__ if torch else 'not installed'} "
          f"({torch.get_num_threads() if torch else '-'} threads); devices {devices}")

    # ---- per-step cost on one fixed batch (interleaved medians)
    xb_np, yb_np = data[0][:BATCH], data[2][:BATCH]
    fns: dict[str, Callable[[], None]] = {}
    syncs: dict[str, Callable[[], None]] = {}
    for dev in devices:
        m = ot_mlp(dev, weights)
        opt = ot.optim.SGD(m.parameters(), lr=LR, momentum=MOMENTUM)
        fns[f"omnitensor {dev}"] = ot_step_fn(m, opt, ot.tensor(xb_np, device=dev),
                                              ot.tensor(yb_np, device=dev))
        syncs[f"omnitensor {dev}"] = (lambda d=dev: ot.synchronize(d))
    npm = NumpyMLP(weights)
    fns["numpy (hand-written)"] = lambda: npm.step(xb_np, yb_np)
    if torch is not None:
        tm = torch_mlp(torch, weights)
        topt = torch.optim.SGD(tm.parameters(), lr=LR, momentum=MOMENTUM)
        txb, tyb = torch.from_numpy(xb_np), torch.from_numpy(yb_np)

        def torch_step() -> None:
            topt.zero_grad()
            torch.nn.functional.cross_entropy(tm(txb), tyb).backward()
            topt.step()
        fns["torch cpu"] = torch_step
    cpu_fns = {k: v for k, v in fns.items() if "omnitensor" not in k or k.endswith(" cpu")}
    step_ms = {k: 1e3 * v for k, v in interleaved(cpu_fns, repeats=repeats).items()}
    for k, fn in fns.items():
        if k not in step_ms:
            step_ms[k] = 1e3 * median_time(fn, repeats=3 if args.quick else 5,
                                           sync=syncs.get(k), min_time=0.2)
    print(f"\nMLP training step, batch {BATCH} (median of interleaved repeats)")
    ref = step_ms.get("torch cpu")
    for k, v in step_ms.items():
        ratio = f"  {v / ref:5.2f}x torch" if ref else ""
        print(f"  {k:<22} {v:8.3f} ms/step{ratio}")

    # ---- full training runs: 30 epochs, alternating rounds on the host
    print(f"\nMLP, {args.epochs} epochs ({-(-len(data[0]) // BATCH)} steps each), "
          f"median of {args.rounds} alternating runs on cpu, one run per other device")
    runs: dict[str, list[tuple[float, float, float]]] = {}
    contenders: dict[str, Callable[[], tuple[float, float, float]]] = {}
    if "cpu" in devices:
        contenders["omnitensor cpu"] = lambda: ot_train("cpu", data, weights, args.epochs)
    contenders["numpy (hand-written)"] = lambda: numpy_train(data, weights, args.epochs)
    if torch is not None:
        contenders["torch cpu"] = lambda: torch_train(torch, data, weights, args.epochs, False)
        contenders["torch cpu DataLoader"] = lambda: torch_train(torch, data, weights,
                                                                 args.epochs, True)
    for _ in range(args.rounds):
        for k, fn in contenders.items():
            runs.setdefault(k, []).append(fn())
    for dev in devices:
        if dev != "cpu":
            runs[f"omnitensor {dev}"] = [ot_train(dev, data, weights, args.epochs)]
    tref = statistics.median(r[0] for r in runs["torch cpu"]) if "torch cpu" in runs else None
    for k, rs in runs.items():
        total = statistics.median(r[0] for r in rs)
        per = statistics.median(r[1] for r in rs)
        acc = statistics.median(r[2] for r in rs)
        ratio = f"  {total / tref:5.2f}x torch" if tref else ""
        print(f"  {k:<22} total {total:7.3f} s  {1e3 * per:7.3f} ms/step  test acc "
              f"{100 * acc:5.1f}%{ratio}")

    # ---- CNN step
    cnn = {f"omnitensor {dev}": ot_cnn_step(dev) for dev in devices}
    if torch is not None:
        cnn["torch cpu"] = torch_cnn_step(torch)
    cpu_cnn = {k: v for k, v in cnn.items() if "omnitensor" not in k or k.endswith(" cpu")}
    cnn_ms = {k: 1e3 * v for k, v in interleaved(cpu_cnn, repeats=repeats).items()}
    for k, fn in cnn.items():
        if k not in cnn_ms:
            dev = k.split()[-1]
            cnn_ms[k] = 1e3 * median_time(fn, repeats=3 if args.quick else 5,
                                          sync=lambda d=dev: ot.synchronize(d), min_time=0.2)
    print(f"\nCNN training step (conv 1->16 3x3, ReLU, maxpool 2, linear), batch {BATCH}")
    cref = cnn_ms.get("torch cpu")
    for k, v in cnn_ms.items():
        ratio = f"  {v / cref:5.2f}x torch" if cref else ""
        print(f"  {k:<22} {v:8.3f} ms/step{ratio}")

    if args.profile and "cpu" in devices:
        profile(fns["omnitensor cpu"], 300, "omnitensor cpu MLP step")
        profile(cnn["omnitensor cpu"], 200, "omnitensor cpu CNN step")


if __name__ == "__main__":
    main()
