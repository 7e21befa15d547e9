"""``RMSprop`` (torch's update: ``alpha``, ``centered``, ``momentum``)."""
from __future__ import annotations

from typing import Any, Iterable

from ..core.ops.creation import zeros_like
from .optimizer import Optimizer

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """``s = alpha s + (1 - alpha) g^2``; ``p -= lr g / (sqrt(s - centered mean^2) +
    eps)`` (with optional momentum on the scaled step)."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum: float = 0.0,
                 centered: bool = False, capturable: bool = False, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        for name, v in (("learning rate", lr), ("epsilon value", eps), ("momentum value",
                        momentum), ("weight_decay value", weight_decay), ("alpha value",
                        alpha)):
            if v < 0.0:
                raise ValueError(f"Invalid {name}: {v}")
        super().__init__(params, {"lr": lr, "alpha": alpha, "eps": eps,
                                  "weight_decay": weight_decay, "momentum": momentum,
                                  "centered": centered, "maximize": maximize})

    def _step(self) -> None:
        for group in self.param_groups:
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            wd, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
            for p, g in self._grads(group):
                st = self.state[p]
                if not st:
                    st["step"] = 0
                    st["square_avg"] = zeros_like(p)
                    if momentum > 0:
                        st["momentum_buffer"] = zeros_like(p)
                    if centered:
                        st["grad_avg"] = zeros_like(p)
                st["step"] = _step_number(st["step"]) + 1
                if wd:
                    g = g + p * wd
                sq = st["square_avg"]
                sq.mul_(alpha)
                sq.add_(g * g * (1.0 - alpha))
                if centered:
                    ga = st["grad_avg"]
                    ga.mul_(alpha)
                    ga.add_(g * (1.0 - alpha))
                    avg = (sq - ga * ga).sqrt()
                else:
                    avg = sq.sqrt()
                avg.add_(eps)
                if momentum > 0:
                    buf = st["momentum_buffer"]
                    buf.mul_(momentum)
                    buf.add_(g / avg)
                    p.sub_(buf * lr)
                else:
                    p.sub_(g / avg * lr)


def _step_number(step: Any) -> int:
    """The step count as an int (a state dict converted from torch holds a tensor)."""
    return int(step.item()) if hasattr(step, "item") else int(step)
