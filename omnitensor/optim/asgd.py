"""``ASGD`` (torch's averaged SGD: ``lambd``, ``alpha``, ``t0``)."""
from __future__ import annotations

from typing import Any, Iterable

from ..core.ops.creation import zeros_like
from ._common import check_ranges, scalar
from .optimizer import Optimizer

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """``p *= 1 - lambd eta``; ``p -= eta g``; the average ``ax += mu (p - ax)`` (a copy
    while ``mu == 1``); then ``eta = lr / (1 + lambd lr t)^alpha`` and
    ``mu = 1 / max(1, t - t0)``.

    State: ``step``, ``eta``, ``mu`` (Python floats here; 0-d tensors in torch) and ``ax``
    (the averaged parameters). ``foreach``, ``capturable``, ``differentiable`` have no
    effect (``optim._common.IGNORED_FLAGS``)."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        check_ranges(learning_rate=lr, weight_decay_value=weight_decay)
        super().__init__(params, {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                                  "weight_decay": weight_decay, "foreach": foreach,
                                  "maximize": maximize, "differentiable": differentiable,
                                  "capturable": capturable})

    def _step(self) -> None:
        for group in self.param_groups:
            lr, lambd, alpha, t0, wd = (group[k] for k in ("lr", "lambd", "alpha", "t0",
                                                           "weight_decay"))
            for p, g in self._grads(group):
                st = self.state[p]
                if not st:
                    st["step"] = 0
                    st["eta"] = float(lr)
                    st["mu"] = 1.0
                    st["ax"] = zeros_like(p)
                step = st["step"] = scalar(st["step"]) + 1
                if wd:
                    g = g + p * wd
                eta, mu = scalar(st["eta"]), scalar(st["mu"])
                p.mul_(1 - lambd * eta)
                p.add_(g, alpha=-eta)
                ax = st["ax"]
                if mu != 1:
                    ax.add_((p - ax).mul_(mu))
                else:
                    ax.copy_(p)
                st["eta"] = lr / ((1 + lambd * lr * step) ** alpha)
                st["mu"] = 1 / max(1, step - t0)
