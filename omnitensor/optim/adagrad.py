"""``Adagrad`` (torch's update: ``lr_decay``, ``initial_accumulator_value``)."""
from __future__ import annotations

from typing import Any, Iterable

from ..core.ops.creation import full_like
from ..core.sparse import sparse_coo_tensor
from .optimizer import Optimizer

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """``s += g^2``; ``p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(s) + eps)``."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        for name, v in (("learning rate", lr), ("lr_decay value", lr_decay),
                        ("weight_decay value", weight_decay),
                        ("initial_accumulator_value", initial_accumulator_value),
                        ("epsilon value", eps)):
            if v < 0.0:
                raise ValueError(f"Invalid {name}: {v}")
        super().__init__(params, {"lr": lr, "lr_decay": lr_decay, "eps": eps,
                                  "weight_decay": weight_decay,
                                  "initial_accumulator_value": initial_accumulator_value,
                                  "maximize": maximize})
        for group in self.param_groups:
            for p in group["params"]:
                st = self.state[p]
                st["step"] = 0
                st["sum"] = full_like(p, group["initial_accumulator_value"])

    def _step(self) -> None:
        for group in self.param_groups:
            lr, lr_decay, eps, wd = group["lr"], group["lr_decay"], group["eps"], \
                group["weight_decay"]
            for p, g in self._grads(group):
                st = self.state[p]
                st["step"] = _step_number(st["step"]) + 1
                if g.is_sparse:
                    _sparse_update(p, g, st["sum"], wd, lr / (1 + (st["step"] - 1) * lr_decay),
                                   eps)
                    continue
                if wd:
                    g = g + p * wd
                clr = lr / (1 + (st["step"] - 1) * lr_decay)
                s = st["sum"]
                s.add_(g * g)
                std = s.sqrt()
                std.add_(eps)
                p.sub_(g / std * clr)


def _sparse_update(p: Any, g: Any, s: Any, wd: float, clr: float, eps: float) -> None:
    """torch's Adagrad step for a sparse gradient: the accumulator and the parameter change
    only at the gradient's (coalesced) positions."""
    if wd:
        raise RuntimeError("weight_decay option is not compatible with sparse gradients")
    g = g.coalesce()  # the update is not linear in g: one value per position
    s.add_(g * g)
    std = s.sparse_mask(g)._values().sqrt() + eps
    p.add_(sparse_coo_tensor(g._indices(), g._values() / std, g.shape), alpha=-clr)


def _step_number(step: Any) -> int:
    """The step count as an int (a state dict converted from torch holds a tensor)."""
    return int(step.item()) if hasattr(step, "item") else int(step)
