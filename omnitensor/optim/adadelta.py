"""``Adadelta`` (torch's update: ``rho``, ``eps``, ``lr`` scaling, ``weight_decay``)."""
from __future__ import annotations

from typing import Any, Iterable

from ..core.ops.creation import zeros_like
from ._common import check_ranges, scalar
from .optimizer import Optimizer

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """``v = rho v + (1 - rho) g^2``; ``delta = sqrt(u + eps) / sqrt(v + eps) * g``;
    ``u = rho u + (1 - rho) delta^2``; ``p -= lr * delta``.

    State per parameter: ``step``, ``square_avg`` (v), ``acc_delta`` (u). ``foreach``,
    ``capturable`` and ``differentiable`` are accepted and stored (torch's state-dict
    layout) but have no effect (see ``optim._common.IGNORED_FLAGS``)."""

    def __init__(self, params: Iterable[Any], lr: float = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_ranges(learning_rate=lr, epsilon_value=eps, weight_decay_value=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        super().__init__(params, {"lr": lr, "rho": rho, "eps": eps,
                                  "weight_decay": weight_decay, "maximize": maximize,
                                  "capturable": capturable, "foreach": foreach,
                                  "differentiable": differentiable})

    def _step(self) -> None:
        for group in self.param_groups:
            lr, rho, eps, wd = group["lr"], group["rho"], group["eps"], group["weight_decay"]
            for p, g in self._grads(group):
                st = self.state[p]
                if not st:
                    st["step"] = 0
                    st["square_avg"] = zeros_like(p)
                    st["acc_delta"] = zeros_like(p)
                st["step"] = scalar(st["step"]) + 1
                if wd:
                    g = g + p * wd
                v, u = st["square_avg"], st["acc_delta"]
                v.mul_(rho).addcmul_(g, g, value=1 - rho)
                delta = (u + eps).sqrt_()
                delta.div_((v + eps).sqrt_()).mul_(g)
                u.mul_(rho).addcmul_(delta, delta, value=1 - rho)
                p.add_(delta, alpha=-lr)
