"""``Adafactor`` (torch's update, Shazeer & Stern 2018): second moments of a matrix kept
as row and column factors instead of a full tensor."""
from __future__ import annotations

import math
from typing import Any, Iterable

from ..core.dtypes import finfo
from ..core.ops.creation import zeros, zeros_like
from ._common import scalar
from .optimizer import Optimizer

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Per step ``t``: ``beta2_t = 1 - t**beta2_decay``, ``rho = min(lr, 1/sqrt(t))``,
    ``alpha = max(eps2, rms(p)) * rho``. A parameter of 2+ dims keeps row and column
    means of ``g**2`` (``row_var``, ``col_var``) and estimates the variance as their outer
    product over the mean row factor; a vector keeps ``variance`` itself. The update
    ``g / sqrt(max(var, eps1**2))`` is clipped to RMS ``d``; ``weight_decay`` is
    decoupled (``p *= 1 - lr * wd``). ``eps=(None, eps2)`` uses the dtype's machine
    epsilon as ``eps1``."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                                  "weight_decay": weight_decay, "foreach": foreach,
                                  "maximize": maximize})

    def _state(self, p: Any, g: Any) -> dict:
        st = self.state[p]
        if not st:
            st["step"] = 0.0
            if g.ndim > 1:
                st["row_var"] = zeros((*g.shape[:-1], 1), dtype=g.dtype, device=g.device)
                st["col_var"] = zeros((*g.shape[:-2], 1, g.shape[-1]), dtype=g.dtype,
                                      device=g.device)
            else:
                st["variance"] = zeros_like(g)
        return st

    def _step(self) -> None:
        for group in self.param_groups:
            lr, decay, (eps1, eps2), d, wd = group["lr"], group["beta2_decay"], \
                group["eps"], group["d"], group["weight_decay"]
            for p, g in self._grads(group):
                if g.is_complex():
                    raise RuntimeError("Adafactor does not support complex parameters")
                st = self._state(p, g)
                step = st["step"] = scalar(st["step"]) + 1
                e1 = finfo(p.dtype).eps if eps1 is None else eps1
                beta2_t = step ** decay
                rho = min(lr, 1 / math.sqrt(step))
                alpha = max(eps2, float(p.norm()) / math.sqrt(p.numel())) * rho
                if wd:
                    p.mul_(1 - lr * wd)
                if g.ndim > 1:
                    row, col = st["row_var"], st["col_var"]
                    row.lerp_(g.square().mean(-1, keepdim=True), beta2_t)
                    col.lerp_(g.square().mean(-2, keepdim=True), beta2_t)
                    var = (row @ col).div_(row.mean(-2, keepdim=True).clamp_(min=e1))
                else:
                    st["variance"].lerp_(g * g, beta2_t)
                    var = st["variance"].clone()
                update = var.clamp_(min=e1 * e1).rsqrt_().mul_(g)
                denom = max(1.0, float(update.norm()) / (math.sqrt(update.numel()) * d))
                p.add_(update, alpha=-alpha / denom)
