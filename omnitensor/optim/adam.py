"""``Adam`` and ``AdamW`` (torch's updates, including ``amsgrad`` and ``maximize``)."""
from __future__ import annotations

import math
from typing import Any, Iterable

from ..core.ops.creation import zeros_like
from ..core.tensor import Tensor
from . import _fast
from .optimizer import Optimizer

__all__ = ["Adam", "AdamW"]


def _check(lr: float, eps: float, betas: tuple[float, float], wd: float) -> None:
    if lr < 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")
    if eps < 0.0:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if wd < 0.0:
        raise ValueError(f"Invalid weight_decay value: {wd}")


class Adam(Optimizer):
    """Adaptive moments: ``m = b1 m + (1 - b1) g``, ``v = b2 v + (1 - b2) g^2``,
    ``p -= lr * m_hat / (sqrt(v_hat) + eps)``; ``weight_decay`` adds ``wd * p`` to ``g``
    (L2; see :class:`AdamW` for decoupled decay)."""

    _decoupled = False

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        _check(lr, eps, betas, weight_decay)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay, "amsgrad": amsgrad,
                                  "maximize": maximize, "foreach": foreach})

    def _step(self) -> None:
        for group in self.param_groups:
            fast = group.get("foreach") is not False
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                st = self.state[p]
                if not st:
                    st["step"] = 0
                    st["exp_avg"] = zeros_like(p)
                    st["exp_avg_sq"] = zeros_like(p)
                    if group["amsgrad"]:
                        st["max_exp_avg_sq"] = zeros_like(p)
                st["step"] = int(_as_number(st["step"])) + 1
                be = _fast.backend_for(p, g) if fast else None
                moments = [st["exp_avg"], st["exp_avg_sq"]] + \
                    ([st["max_exp_avg_sq"]] if group["amsgrad"] else [])
                if be is not None and _fast.state_ok(p, *moments):
                    self._update_fast(be, p, g, st, group)
                else:
                    self._update(p, g, st, group)

    def _update(self, p: Tensor, g: Tensor, st: dict, group: dict) -> None:
        lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], \
            group["weight_decay"]
        step = st["step"]
        if group["maximize"]:
            g = -g
        if wd:
            if self._decoupled:
                p.mul_(1.0 - lr * wd)
            else:
                g = g + p * wd
        m, v = st["exp_avg"], st["exp_avg_sq"]
        m.mul_(b1)
        m.add_(g * (1.0 - b1))
        v.mul_(b2)
        v.add_(g * g * (1.0 - b2))
        if group["amsgrad"]:
            vmax = st["max_exp_avg_sq"]
            vmax.copy_(vmax.maximum(v))
            v = vmax
        denom = v.sqrt()
        denom.div_(math.sqrt(1.0 - b2 ** step))
        denom.add_(eps)
        p.sub_(m / denom * (lr / (1.0 - b1 ** step)))

    def _update_fast(self, be: Any, p: Tensor, grad: Tensor, st: dict, group: dict) -> None:
        lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], \
            group["weight_decay"]
        step = st["step"]
        pd, g = p._data, grad._data
        if group["maximize"]:
            g = be.negative(g)
        if wd:
            if self._decoupled:
                be.multiply(pd, 1.0 - lr * wd, out=pd)
            else:
                g = be.add(g, be.multiply(pd, wd))
        m, v = st["exp_avg"], st["exp_avg_sq"]
        md, vd = m._data, v._data
        be.multiply(md, b1, out=md)
        be.add(md, be.multiply(g, 1.0 - b1), out=md)
        be.multiply(vd, b2, out=vd)
        be.add(vd, be.multiply(be.multiply(g, g), 1.0 - b2), out=vd)
        touched = [m, v]
        if group["amsgrad"]:
            vmax = st["max_exp_avg_sq"]
            be.maximum(vmax._data, vd, out=vmax._data)
            touched.append(vmax)
            vd = vmax._data
        denom = be.sqrt(vd)
        be.divide(denom, math.sqrt(1.0 - b2 ** step), out=denom)
        be.add(denom, eps, out=denom)
        upd = be.divide(md, denom)
        be.subtract(pd, be.multiply(upd, lr / (1.0 - b1 ** step)), out=pd)
        _fast.touched(p, *touched)


class AdamW(Adam):
    """Adam with decoupled weight decay: ``p *= 1 - lr * weight_decay`` before the Adam
    update (default ``weight_decay=0.01``)."""

    _decoupled = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         foreach=foreach)


def _as_number(step: Any) -> float:
    return step.item() if isinstance(step, Tensor) else step
