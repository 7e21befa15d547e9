"""``Adam`` and ``AdamW`` (torch's updates, including ``amsgrad`` and ``maximize``)."""
from __future__ import annotations

import math
from typing import Any, Iterable

from ..core import capture_hooks
from ..core.ops.creation import tensor, zeros_like
from ..core.tensor import Tensor
from .optimizer import Optimizer, update_ops

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
    (L2), or with ``decoupled_weight_decay=True`` scales ``p`` by ``1 - lr * wd`` first
    (AdamW's decay). ``capturable``, ``differentiable`` and
    ``fused`` are accepted and kept in the param groups (torch's state-dict layout) but
    change nothing: there is no fused kernel or autograd through the update. Inside
    ``omnitensor.compile`` the update is always capturable (the step count becomes a 0-d
    tensor on the parameter's device, so replays update the bias corrections)."""

    _decoupled = False

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        _check(lr, eps, betas, weight_decay)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay, "amsgrad": amsgrad,
                                  "maximize": maximize, "foreach": foreach,
                                  "decoupled_weight_decay": bool(
                                      decoupled_weight_decay or self._decoupled)})

    def _step(self) -> None:
        """torch's Adam/AdamW update of each parameter, in place: one formula, run on the
        ops :func:`~omnitensor.optim.optimizer.update_ops` picks."""
        state = self.state
        capturing = capture_hooks.active() is not None
        for group in self.param_groups:
            trusted = group.get("foreach") is not False
            lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], \
                group["weight_decay"]
            amsgrad, maximize = group["amsgrad"], group["maximize"]
            decoupled = group.get("decoupled_weight_decay", self._decoupled)
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                st = state[p]
                if not st:
                    st["step"] = 0
                    st["exp_avg"] = zeros_like(p)
                    st["exp_avg_sq"] = zeros_like(p)
                    if amsgrad:
                        st["max_exp_avg_sq"] = zeros_like(p)
                step = st["step"]
                # under omnitensor.compile the step count lives on the device (torch's
                # capturable=True), so a replayed step updates the bias corrections; once
                # there it stays there, so eager steps between compiled ones (or a loaded
                # state_dict with tensor steps) keep one representation
                on_device = capturing or (isinstance(step, Tensor) and step.device == p.device)
                if on_device:
                    bc1, bc2_sqrt = _device_bias_corrections(st, p, b1, b2)
                else:
                    step = st["step"] = (step if step.__class__ is int else
                                         int(_as_number(step))) + 1
                    bc1, bc2_sqrt = 1.0 - b1 ** step, math.sqrt(1.0 - b2 ** step)
                m, v = st["exp_avg"], st["exp_avg_sq"]
                vmax = st["max_exp_avg_sq"] if amsgrad else None
                ops = update_ops(p, g, m, v, vmax) if trusted and not on_device else Tensor
                if maximize:
                    g = ops.neg(g)
                if wd:
                    if decoupled:
                        ops.mul_(p, 1.0 - lr * wd)
                    else:
                        g = ops.add(g, ops.mul(p, wd))
                ops.add_(ops.mul_(m, b1), g, alpha=1.0 - b1)
                ops.addcmul_(ops.mul_(v, b2), g, g, value=1.0 - b2)
                if amsgrad:
                    assert vmax is not None  # created with the state when amsgrad
                    ops.copy_(vmax, ops.maximum(vmax, v))
                    v = vmax
                denom = ops.add_(ops.div_(ops.sqrt(v), bc2_sqrt), eps)
                if on_device:
                    ops.sub_(p, ops.mul(ops.div(m, denom), lr / bc1))
                else:
                    ops.addcdiv_(p, m, denom, value=-lr / bc1)


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


def _device_bias_corrections(st: dict, p: Tensor, b1: float, b2: float) -> tuple:
    """Increment ``st["step"]`` as a 0-d float32 tensor on p's device (in place: a
    replay repeats it) and return ``(1 - b1**step, sqrt(1 - b2**step))`` as 0-d tensors
    of p's dtype, computed in float64 where the device has it."""
    step = st["step"]
    if not isinstance(step, Tensor) or step.device != p.device:
        step = st["step"] = tensor(float(_as_number(step)), device=p.device)
    step.add_(1)
    wide = step.double() if p.device.supports_dtype("float64") else step
    bc1 = (1.0 - b1 ** wide).to(p.dtype)
    bc2_sqrt = (1.0 - b2 ** wide).sqrt().to(p.dtype)
    return bc1, bc2_sqrt


def _as_number(step: Any) -> float:
    return step.item() if isinstance(step, Tensor) else step
