"""``SGD`` with momentum, dampening, Nesterov momentum and weight decay (torch's update)."""
from __future__ import annotations

from typing import Any, Iterable

from ..core.tensor import Tensor
from .optimizer import Optimizer, required, update_ops

__all__ = ["SGD"]


class SGD(Optimizer):
    """``v = momentum * v + (1 - dampening) * g``; ``p -= lr * (g + momentum * v if
    nesterov else v)``, with ``g`` including ``weight_decay * p`` (torch's formulas).
    The update is one formula run on the trusted ops, or on the checked Tensor ops with
    ``foreach=False`` (see ``optimizer.update_ops``). ``differentiable`` and ``fused`` are
    accepted and kept in the param groups (torch's state-dict layout) but change nothing:
    there is no fused kernel and no autograd through the update."""

    def __init__(self, params: Iterable[Any], lr: float = required,  # type: ignore[assignment]
                 momentum: float = 0.0, dampening: float = 0.0, weight_decay: float = 0.0,
                 nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov,
                                  "maximize": maximize, "foreach": foreach})

    def _step(self) -> None:
        """torch's SGD update of each parameter, in place: one formula, run on the ops
        :func:`~omnitensor.optim.optimizer.update_ops` picks."""
        state = self.state
        for group in self.param_groups:
            trusted = group.get("foreach") is not False
            lr, momentum = group["lr"], group["momentum"]
            dampening, wd = group["dampening"], group["weight_decay"]
            nesterov, maximize = group["nesterov"], group["maximize"]
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                st = state[p]
                buf = st.get("momentum_buffer")
                ops = update_ops(p, g, buf) if trusted else Tensor
                if maximize:
                    g = ops.neg(g)
                if wd:
                    g = ops.add(g, ops.mul(p, wd))
                if momentum:
                    if buf is None:
                        buf = st["momentum_buffer"] = ops.clone(g)
                    else:
                        ops.add_(ops.mul_(buf, momentum), g, alpha=1.0 - dampening)
                    g = ops.add(g, ops.mul(buf, momentum)) if nesterov else buf
                ops.add_(p, g, alpha=-lr)
