"""``Muon`` (torch's update, Jordan et al. 2024): momentum SGD whose update matrix is
orthogonalized by a Newton-Schulz iteration; for 2-D parameters only."""
from __future__ import annotations

import math
from typing import Any, Iterable

from ..core.ops.creation import zeros_like
from ..core.tensor import Tensor
from .optimizer import Optimizer

__all__ = ["Muon"]

_COEFFICIENTS = (3.4445, -4.775, 2.0315)


def zeropower_via_newtonschulz(grad: Tensor, ns_coefficients: tuple[float, float, float],
                               ns_steps: int, eps: float) -> Tensor:
    """An approximate orthogonalization ``U S' V^T`` (``S'`` near 1) of the matrix
    ``grad = U S V^T``: ``ns_steps`` quintic Newton-Schulz steps in bfloat16, as torch's."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = grad.bfloat16()
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    x = x / x.norm().clamp(min=eps)
    for _ in range(ns_steps):
        gram = x @ x.T
        poly = gram * b + (gram @ gram) * c
        x = x * a + poly @ x
    return x.T if tall else x


def _adjusted_lr(lr: float, adjust_lr_fn: str | None, shape: Any) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    return lr * 0.2 * math.sqrt(max(rows, cols))  # "match_rms_adamw"


class Muon(Optimizer):
    """``buf = lerp(buf, g, 1 - momentum)``; the update is ``lerp(g, buf, momentum)``
    (``nesterov``) or ``buf``, orthogonalized (:func:`zeropower_via_newtonschulz`);
    ``p *= 1 - lr * weight_decay``; ``p -= adjusted_lr * update`` where ``adjust_lr_fn``
    ``"original"`` (default) scales ``lr`` by ``sqrt(max(1, rows / cols))`` and
    ``"match_rms_adamw"`` by ``0.2 * sqrt(max(rows, cols))``."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = _COEFFICIENTS,
                 eps: float = 1e-7, ns_steps: int = 5, adjust_lr_fn: str | None = None,
                 ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, {"lr": lr, "weight_decay": weight_decay,
                                  "momentum": momentum, "nesterov": nesterov,
                                  "ns_coefficients": ns_coefficients, "eps": eps,
                                  "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn})
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _step(self) -> None:
        for group in self.param_groups:
            lr, wd, mom = group["lr"], group["weight_decay"], group["momentum"]
            for p, g in self._grads(group):
                if g.is_complex():
                    raise ValueError("Complex parameters are not supported")
                st = self.state[p]
                if "momentum_buffer" not in st:
                    st["momentum_buffer"] = zeros_like(g)
                buf = st["momentum_buffer"]
                buf.lerp_(g, 1 - mom)
                update = g.lerp(buf, mom) if group["nesterov"] else buf
                update = zeropower_via_newtonschulz(update, group["ns_coefficients"],
                                                    group["ns_steps"], group["eps"])
                p.mul_(1 - lr * wd)
                p.add_(update, alpha=-_adjusted_lr(lr, group["adjust_lr_fn"], p.shape))
