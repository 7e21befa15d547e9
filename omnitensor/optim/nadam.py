"""``NAdam`` (torch's update: Nesterov momentum in Adam, ``momentum_decay``,
``decoupled_weight_decay``)."""
from __future__ import annotations

from typing import Any, Iterable

from ..core.ops.creation import zeros_like
from ._common import adam_moments, check_ranges, scalar, weight_decay
from .adamax import check_betas
from .optimizer import Optimizer

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """With ``mu_t = b1 (1 - 0.5 * 0.96^(t psi))`` (``psi = momentum_decay``) and
    ``P_t = prod mu_1..mu_t``: ``m = b1 m + (1 - b1) g``, ``v = b2 v + (1 - b2) g^2``,
    ``d = sqrt(v / (1 - b2^t)) + eps``,
    ``p -= lr (1 - mu_t) / (1 - P_t) g / d + lr mu_{t+1} / (1 - P_t mu_{t+1}) m / d``.

    ``decoupled_weight_decay=True`` decays ``p *= 1 - lr wd`` (NAdamW) instead of adding
    ``wd p`` to the gradient. State: ``step``, ``mu_product`` (P_t, a Python float),
    ``exp_avg``, ``exp_avg_sq``. ``foreach``, ``capturable``, ``differentiable`` have no
    effect (``optim._common.IGNORED_FLAGS``)."""

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_ranges(learning_rate=lr, epsilon_value=eps, weight_decay_value=weight_decay,
                     momentum_decay_value=momentum_decay)
        check_betas(betas)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay,
                                  "momentum_decay": momentum_decay,
                                  "decoupled_weight_decay": decoupled_weight_decay,
                                  "maximize": maximize, "foreach": foreach,
                                  "capturable": capturable, "differentiable": differentiable})

    def _step(self) -> None:
        for group in self.param_groups:
            lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], \
                group["weight_decay"]
            psi = group["momentum_decay"]
            for p, g in self._grads(group):
                st = self.state[p]
                if not st:
                    st["step"] = 0
                    st["mu_product"] = 1.0
                    st["exp_avg"] = zeros_like(p)
                    st["exp_avg_sq"] = zeros_like(p)
                step = st["step"] = scalar(st["step"]) + 1
                g = weight_decay(p, g, lr, wd, group["decoupled_weight_decay"])
                mu = b1 * (1.0 - 0.5 * 0.96 ** (step * psi))
                mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * psi))
                prod = st["mu_product"] = scalar(st["mu_product"]) * mu
                m, v = st["exp_avg"], st["exp_avg_sq"]
                adam_moments(m, v, g, b1, b2)
                denom = (v / (1 - b2 ** step)).sqrt_().add_(eps)
                p.addcdiv_(g, denom, value=-lr * (1.0 - mu) / (1.0 - prod))
                p.addcdiv_(m, denom, value=-lr * mu_next / (1.0 - prod * mu_next))
