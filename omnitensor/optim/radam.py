"""``RAdam`` (torch's update: rectified Adam, ``decoupled_weight_decay``)."""
from __future__ import annotations

import math
from typing import Any, Iterable

from ..core.ops.creation import zeros_like
from ._common import adam_moments, check_ranges, scalar, weight_decay
from .adamax import check_betas
from .optimizer import Optimizer

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """``m``, ``v`` as in Adam; with ``rho_inf = 2 / (1 - b2) - 1`` and
    ``rho_t = rho_inf - 2 t b2^t / (1 - b2^t)``: when ``rho_t > 5``,
    ``p -= lr m_hat r_t sqrt(1 - b2^t) / (sqrt(v) + eps)`` with the rectification
    ``r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))``,
    else ``p -= lr m_hat`` (SGD with momentum while the variance estimate is unreliable).

    State: ``step``, ``exp_avg``, ``exp_avg_sq``. ``foreach``, ``capturable``,
    ``differentiable`` have no effect (``optim._common.IGNORED_FLAGS``)."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_ranges(learning_rate=lr, epsilon_value=eps, weight_decay_value=weight_decay)
        check_betas(betas)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay, "maximize": maximize,
                                  "foreach": foreach, "capturable": capturable,
                                  "decoupled_weight_decay": decoupled_weight_decay,
                                  "differentiable": differentiable})

    def _step(self) -> None:
        for group in self.param_groups:
            lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], \
                group["weight_decay"]
            rho_inf = 2 / (1 - b2) - 1
            for p, g in self._grads(group):
                st = self.state[p]
                if not st:
                    st["step"] = 0
                    st["exp_avg"] = zeros_like(p)
                    st["exp_avg_sq"] = zeros_like(p)
                step = st["step"] = scalar(st["step"]) + 1
                g = weight_decay(p, g, lr, wd, group["decoupled_weight_decay"])
                m, v = st["exp_avg"], st["exp_avg_sq"]
                adam_moments(m, v, g, b1, b2)
                bc1, bc2 = 1 - b1 ** step, 1 - b2 ** step
                rho_t = rho_inf - 2 * step * (b2 ** step) / bc2
                if rho_t > 5.0:
                    rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf /
                                     ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                    p.addcdiv_(m, v.sqrt().add_(eps),
                               value=-lr / bc1 * math.sqrt(bc2) * rect)
                else:
                    p.add_(m, alpha=-lr / bc1)
