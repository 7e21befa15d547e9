"""Learning-rate schedulers (torch's ``lr_scheduler``): ``StepLR``, ``MultiStepLR``,
``ExponentialLR``, ``CosineAnnealingLR``, ``LambdaLR``, ``OneCycleLR`` here;
``MultiplicativeLR``, ``ConstantLR``, ``LinearLR``, ``PolynomialLR``,
``CosineAnnealingWarmRestarts``, ``CyclicLR`` in ``lr_more.py``; ``ReduceLROnPlateau``,
``SequentialLR``, ``ChainedScheduler`` in ``lr_chain.py`` (all importable from here).

Each writes ``group["lr"]`` of its optimizer on ``step()`` with torch's (chainable)
formulas, so schedules match torch step for step."""
from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from typing import Any, Callable, Sequence

from .lr_base import LRScheduler, _lr_lambdas, _lrs, _per_group

from .lr_chain import ChainedScheduler, ReduceLROnPlateau, SequentialLR
from .lr_more import (ConstantLR, CosineAnnealingWarmRestarts, CyclicLR, LinearLR,
                      MultiplicativeLR, PolynomialLR)
from .optimizer import Optimizer

_LRScheduler = LRScheduler  # torch's older name, still subclassed by libraries (skorch)

__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
           "LambdaLR", "OneCycleLR",
           # defined in lr_more.py / lr_chain.py (the base class in lr_base.py)
           "MultiplicativeLR", "ConstantLR", "LinearLR", "PolynomialLR",
           "CosineAnnealingWarmRestarts", "CyclicLR", "ReduceLROnPlateau", "SequentialLR",
           "ChainedScheduler"]


class StepLR(LRScheduler):
    """Multiply the rate by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _lrs(self.optimizer)
        return [lr * self.gamma for lr in _lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list[float]:
        return [b * self.gamma ** (self.last_epoch // self.step_size) for b in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the rate by ``gamma`` at each milestone epoch."""

    def __init__(self, optimizer: Optimizer, milestones: Sequence[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones, self.gamma = Counter(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch not in self.milestones:
            return _lrs(self.optimizer)
        return [lr * self.gamma ** self.milestones[self.last_epoch]
                for lr in _lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list[float]:
        ms = sorted(self.milestones.elements())
        return [b * self.gamma ** bisect_right(ms, self.last_epoch) for b in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the rate by ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return _lrs(self.optimizer)
        return [lr * self.gamma for lr in _lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list[float]:
        return [b * self.gamma ** self.last_epoch for b in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine from the base rate down to ``eta_min`` over ``T_max`` epochs (torch's
    recursive form, which restarts upward after ``T_max``)."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        e, t, lo = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if e == 0:
            return _lrs(self.optimizer)
        if self._step_count == 1 and e > 0:
            return [lo + (b - lo) * (1 + math.cos(e * math.pi / t)) / 2 for b in self.base_lrs]
        if (e - 1 - t) % (2 * t) == 0:
            return [g["lr"] + (b - lo) * (1 - math.cos(math.pi / t)) / 2
                    for b, g in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * e / t)) / (1 + math.cos(math.pi * (e - 1) / t)) *
                (g["lr"] - lo) + lo for g in groups]

    def _get_closed_form_lr(self) -> list[float]:
        e, t, lo = self.last_epoch, self.T_max, self.eta_min
        return [lo + (b - lo) * (1 + math.cos(math.pi * e / t)) / 2 for b in self.base_lrs]


class LambdaLR(LRScheduler):
    """``lr = base_lr * lr_lambda(epoch)`` (one function, or one per group)."""

    _exclude_from_state = ("optimizer", "lr_lambdas")

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        self.lr_lambdas = _lr_lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [b * f(self.last_epoch) for f, b in zip(self.lr_lambdas, self.base_lrs)]


class OneCycleLR(LRScheduler):
    """The 1cycle policy (step once per batch): warm up from ``max_lr / div_factor`` to
    ``max_lr`` over ``pct_start`` of ``total_steps``, then anneal to ``initial_lr /
    final_div_factor``; momentum (or Adam's beta1) cycles inversely."""

    def __init__(self, optimizer: Optimizer, max_lr: float | Sequence[float],
                 total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float | Sequence[float] = 0.85,
                 max_momentum: float | Sequence[float] = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("You must define either total_steps OR (epochs AND "
                                 "steps_per_epoch)")
            if epochs <= 0 or steps_per_epoch <= 0:
                raise ValueError("epochs and steps_per_epoch must be positive integers")
            total_steps = epochs * steps_per_epoch
        elif total_steps <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        if not 0.0 <= pct_start <= 1.0:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self.total_steps = total_steps
        self._anneal = anneal_strategy
        self._schedule_phases: list[dict[str, Any]]
        if three_phase:
            self._schedule_phases = [
                {"end_step": float(pct_start * total_steps) - 1, "start_lr": "initial_lr",
                 "end_lr": "max_lr", "start_momentum": "max_momentum",
                 "end_momentum": "base_momentum"},
                {"end_step": float(2 * pct_start * total_steps) - 2, "start_lr": "max_lr",
                 "end_lr": "initial_lr", "start_momentum": "base_momentum",
                 "end_momentum": "max_momentum"},
                {"end_step": total_steps - 1, "start_lr": "initial_lr", "end_lr": "min_lr",
                 "start_momentum": "max_momentum", "end_momentum": "max_momentum"}]
        else:
            self._schedule_phases = [
                {"end_step": float(pct_start * total_steps) - 1, "start_lr": "initial_lr",
                 "end_lr": "max_lr", "start_momentum": "max_momentum",
                 "end_momentum": "base_momentum"},
                {"end_step": total_steps - 1, "start_lr": "max_lr", "end_lr": "min_lr",
                 "start_momentum": "base_momentum", "end_momentum": "max_momentum"}]
        groups = optimizer.param_groups
        max_lrs = _per_group(max_lr, groups, "max_lr")
        if last_epoch == -1:
            for lr, group in zip(max_lrs, groups):
                group["initial_lr"] = lr / div_factor
                group["max_lr"] = lr
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            bases = _per_group(base_momentum, groups, "base_momentum")
            maxes = _per_group(max_momentum, groups, "max_momentum")
            if last_epoch == -1:
                for m_max, m_base, group in zip(maxes, bases, groups):
                    if self.use_beta1:
                        group["betas"] = (m_max, *group["betas"][1:])
                    else:
                        group["momentum"] = m_max
                    group["max_momentum"] = m_max
                    group["base_momentum"] = m_base
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, start: float, end: float, pct: float) -> float:
        if self._anneal == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps "
                             f"is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            lr = momentum = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end = phase["end_step"]
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    lr = self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        momentum = self._anneal_func(group[phase["start_momentum"]],
                                                     group[phase["end_momentum"]], pct)
                    break
                start = phase["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs
