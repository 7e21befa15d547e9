"""``SGD`` with momentum, dampening, Nesterov momentum and weight decay (torch's update)."""
from __future__ import annotations

from typing import Any, Iterable

from ..core.tensor import Tensor, _make
from . import _fast
from .optimizer import Optimizer, required

__all__ = ["SGD"]


class SGD(Optimizer):
    """``v = momentum * v + (1 - dampening) * g``; ``p -= lr * (g + momentum * v if
    nesterov else v)``, with ``g`` including ``weight_decay * p`` (torch's formulas).
    ``foreach=False`` forces the Tensor-op update path (see ``optim/_fast.py``)."""

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
        state = self.state
        for group in self.param_groups:
            fast = group.get("foreach") is not False
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                be = _fast.backend_for(p, g) if fast else None
                st = state[p]
                buf = st.get("momentum_buffer")
                if be is not None and (buf is None or _fast.state_ok(p, buf)):
                    self._update_fast(be, p, g, st, group)
                else:
                    self._update(p, g, st, group)

    @staticmethod
    def _update(p: Tensor, g: Tensor, st: dict, group: dict) -> None:
        lr, momentum = group["lr"], group["momentum"]
        dampening, wd = group["dampening"], group["weight_decay"]
        if group["maximize"]:
            g = -g
        if wd:
            g = g + p * wd
        if momentum:
            buf = st.get("momentum_buffer")
            if buf is None:
                buf = st["momentum_buffer"] = g.detach().clone()
            else:
                buf.mul_(momentum)
                buf.add_(g if dampening == 0 else g * (1.0 - dampening))
            g = g + buf * momentum if group["nesterov"] else buf
        p.sub_(g * lr)

    @staticmethod
    def _update_fast(be: Any, p: Tensor, grad: Tensor, st: dict, group: dict) -> None:
        lr, momentum = group["lr"], group["momentum"]
        dampening, wd = group["dampening"], group["weight_decay"]
        pd, g = p._data, grad._data
        if group["maximize"]:
            g = be.negative(g)
        if wd:
            g = be.add(g, be.multiply(pd, wd))
        if momentum:
            buf = st.get("momentum_buffer")
            if buf is None:
                buf = st["momentum_buffer"] = _make(be.copy(g), p._device, p._dtype)
                bd = buf._data
            else:
                bd = buf._data
                be.multiply(bd, momentum, out=bd)
                be.add(bd, g if dampening == 0 else be.multiply(g, 1.0 - dampening), out=bd)
                _fast.touched(buf)
            g = be.add(g, be.multiply(bd, momentum)) if group["nesterov"] else bd
        be.subtract(pd, be.multiply(g, lr), out=pd)
        _fast.touched(p)
