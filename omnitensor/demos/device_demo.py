"""``omnitensor demo``: the same small computation (a matmul, tanh, a mean and its
gradient) on every device, each checked against cpu.

Each device starts from the same seed, so its inputs are the very numbers cpu draws
(omnitensor's generator is bit-identical across devices: the demo checks that too); the
results may then differ only by float32 rounding in a different summation order."""
from __future__ import annotations

from typing import Any

import numpy as np

#: a loss or gradient norm further from cpu's than this (relative) is a real difference;
#: float32 sums over 64k products in another order differ by ~1e-6
RTOL = 1e-4


def run_one(dev: Any, seed: int = 0) -> dict[str, Any]:
    """Loss and gradient norm of the demo computation on ``dev``, with its inputs."""
    import omnitensor as ot
    ot.manual_seed(seed)
    x = ot.randn(256, 256, device=dev)
    w = ot.randn(256, 64, device=dev, requires_grad=True)
    loss = ((x @ w).tanh() ** 2).mean()
    loss.backward()
    assert w.grad is not None  # backward() just accumulated it
    return {"device": str(dev), "loss": loss.item(), "grad_norm": w.grad.norm().item(),
            "inputs": (x.cpu().numpy(), w.detach().cpu().numpy())}


def _rel(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-30)


def compare(row: dict[str, Any], ref: dict[str, Any]) -> dict[str, Any]:
    """``row`` against the cpu ``ref``: same inputs bit for bit, and the relative
    differences of the loss and the gradient norm; ``ok`` when all hold."""
    same = all(np.array_equal(a, b) for a, b in zip(row["inputs"], ref["inputs"]))
    d_loss, d_grad = _rel(row["loss"], ref["loss"]), _rel(row["grad_norm"], ref["grad_norm"])
    return {"same_inputs": same, "loss_rel": d_loss, "grad_rel": d_grad,
            "ok": same and d_loss <= RTOL and d_grad <= RTOL}


def main() -> int:
    """Print one line per device; exit status 1 when a device differs from cpu."""
    import omnitensor as ot
    ref = run_one("cpu")
    print(f"{'cpu':<9} loss {ref['loss']:.6f}  |grad| {ref['grad_norm']:.6f}  (the reference)")
    bad = 0
    for dev in ot.devices():
        if dev.type == "cpu":
            continue
        row = run_one(dev)
        c = compare(row, ref)
        if c["ok"]:
            verdict = (f"matches cpu (same inputs bit for bit; loss differs by "
                       f"{c['loss_rel']:.1e}, |grad| by {c['grad_rel']:.1e}, relative)")
        elif not c["same_inputs"]:
            verdict = "DIFFERS from cpu: the random inputs are not cpu's (a generator bug)"
        else:
            verdict = (f"DIFFERS from cpu beyond float32 rounding: loss by "
                       f"{c['loss_rel']:.1e}, |grad| by {c['grad_rel']:.1e} (limit {RTOL:g})")
        bad += not c["ok"]
        print(f"{row['device']:<9} loss {row['loss']:.6f}  |grad| {row['grad_norm']:.6f}  "
              f"{verdict}", flush=True)
    return 1 if bad else 0
