"""``Adamax`` (torch's update: Adam with the infinity norm)."""
from __future__ import annotations

from typing import Any, Iterable

from ..core.ops.creation import zeros_like
from ._common import check_ranges, scalar, weight_decay
from .optimizer import Optimizer

__all__ = ["Adamax"]


def check_betas(betas: tuple[float, float]) -> None:
    """torch's range checks of ``betas`` (shared by Adamax, NAdam and RAdam)."""
    for i, b in enumerate(betas):
        if not 0.0 <= b < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {b}")


class Adamax(Optimizer):
    """``m = b1 m + (1 - b1) g``; ``u = max(b2 u, |g| + eps)``;
    ``p -= lr / (1 - b1^t) * m / u``.

    State: ``step``, ``exp_avg`` (m), ``exp_inf`` (u). ``foreach``, ``capturable`` and
    ``differentiable`` are stored but have no effect (``optim._common.IGNORED_FLAGS``)."""

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        check_ranges(learning_rate=lr, epsilon_value=eps, weight_decay_value=weight_decay)
        check_betas(betas)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay, "foreach": foreach,
                                  "maximize": maximize, "differentiable": differentiable,
                                  "capturable": capturable})

    def _step(self) -> None:
        for group in self.param_groups:
            lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], \
                group["weight_decay"]
            for p, g in self._grads(group):
                st = self.state[p]
                if not st:
                    st["step"] = 0
                    st["exp_avg"] = zeros_like(p)
                    st["exp_inf"] = zeros_like(p)
                step = st["step"] = scalar(st["step"]) + 1
                g = weight_decay(p, g, lr, wd, False)
                m, u = st["exp_avg"], st["exp_inf"]
                m.lerp_(g, 1 - b1)
                u.mul_(b2).maximum_(g.abs().add_(eps))
                p.addcdiv_(m, u, value=-lr / (1 - b1 ** step))
