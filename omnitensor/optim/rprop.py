"""``Rprop`` (torch's resilient backpropagation: ``etas``, ``step_sizes``)."""
from __future__ import annotations

from typing import Any, Iterable

from ..core.ops.creation import full_like, zeros_like
from ..core.ops.elementwise import where
from ._common import check_ranges, scalar
from .optimizer import Optimizer

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Per-element step sizes: where ``g * prev > 0`` the step grows by ``etaplus``,
    where ``< 0`` it shrinks by ``etaminus`` (and that element's gradient counts as 0,
    so it does not move and the next comparison restarts), else unchanged; clamped to
    ``step_sizes``; ``p -= sign(g) * step_size``; ``prev = g``.

    State: ``step``, ``prev``, ``step_size`` (starts at ``lr``). ``foreach``,
    ``capturable``, ``differentiable`` have no effect (``optim._common.IGNORED_FLAGS``)."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_ranges(learning_rate=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, {"lr": lr, "etas": tuple(etas),
                                  "step_sizes": tuple(step_sizes), "foreach": foreach,
                                  "maximize": maximize, "differentiable": differentiable,
                                  "capturable": capturable})

    def _step(self) -> None:
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            lo, hi = group["step_sizes"]
            for p, g in self._grads(group):
                st = self.state[p]
                if not st:
                    st["step"] = 0
                    st["prev"] = zeros_like(p)
                    st["step_size"] = full_like(p, group["lr"])
                st["step"] = scalar(st["step"]) + 1
                prev, size = st["prev"], st["step_size"]
                agree = g * prev
                factor = where(agree > 0, etaplus, where(agree < 0, etaminus, 1.0))
                size.mul_(factor.to(size.dtype)).clamp_(lo, hi)
                g = where(agree < 0, 0.0, g)
                p.addcmul_(g.sign(), size, value=-1)
                prev.copy_(g)
