"""More of torch's epoch schedulers: ``MultiplicativeLR``, ``ConstantLR``, ``LinearLR``,
``PolynomialLR``, ``CosineAnnealingWarmRestarts`` and ``CyclicLR`` (re-exported by
:mod:`omnitensor.optim.lr_scheduler`, torch's path).

Each keeps torch's recursive (chainable) ``get_lr`` and, where torch has one, its closed
form for ``step(epoch)``, so values match torch step for step."""
from __future__ import annotations

import math
import types
from typing import Any, Callable, Sequence

from .lr_base import LRScheduler, _lr_lambdas, _lrs, _per_group
from .optimizer import Optimizer

__all__ = ["MultiplicativeLR", "ConstantLR", "LinearLR", "PolynomialLR",
           "CosineAnnealingWarmRestarts", "CyclicLR"]


def _is_initial(s: LRScheduler) -> bool:
    """Whether this ``step`` is the one the constructor makes (torch's ``_is_initial``)."""
    return s._step_count == 1


class MultiplicativeLR(LRScheduler):
    """``lr *= lr_lambda(epoch)`` each step (one function, or one per group)."""

    _exclude_from_state = ("optimizer", "lr_lambdas")

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        self.lr_lambdas = _lr_lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if _is_initial(self):
            return _lrs(self.optimizer)
        return [g["lr"] * f(self.last_epoch)
                for f, g in zip(self.lr_lambdas, self.optimizer.param_groups)]


class ConstantLR(LRScheduler):
    """``lr = base_lr * factor`` until ``total_iters``, then ``base_lr``."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.factor for lr in _lrs(self.optimizer)]
        if self.last_epoch != self.total_iters:
            return _lrs(self.optimizer)
        return [lr * (1.0 / self.factor) for lr in _lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list[float]:
        return [b * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for b in self.base_lrs]


class LinearLR(LRScheduler):
    """The factor goes linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` steps (a warm-up when ``start_factor < 1``)."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 "
                             "and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor, self.total_iters = \
            start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in _lrs(self.optimizer)]
        if _is_initial(self) or self.last_epoch > self.total_iters:
            return _lrs(self.optimizer)
        s, e = self.start_factor, self.end_factor
        ratio = 1.0 + (e - s) / (self.total_iters * s + (self.last_epoch - 1) * (e - s))
        return [lr * ratio for lr in _lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list[float]:
        s, e = self.start_factor, self.end_factor
        return [b * (s + (e - s) * min(self.total_iters, self.last_epoch) / self.total_iters)
                for b in self.base_lrs]


class PolynomialLR(LRScheduler):
    """``lr = base_lr * (1 - min(t, total_iters) / total_iters) ** power``."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if _is_initial(self) or self.last_epoch > self.total_iters:
            return _lrs(self.optimizer)
        t, n = self.last_epoch, self.total_iters
        decay = ((1.0 - t / n) / (1.0 - (t - 1) / n)) ** self.power
        return [lr * decay for lr in _lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list[float]:
        return [b * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for b in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR: cosine from ``base_lr`` to ``eta_min`` over ``T_i`` epochs, then restart,
    with ``T_i`` multiplied by ``T_mult`` after each restart. ``step(epoch)`` accepts a
    fractional epoch (step once per batch with ``epoch + i / iters``)."""

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1,
                 eta_min: float = 0.0, last_epoch: int = -1) -> None:
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur: float = last_epoch  # fractional when step(epoch) gets a float
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        lo = self.eta_min
        return [lo + (b - lo) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for b in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        self._step_count += 1
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = _lrs(self.optimizer)


class CyclicLR(LRScheduler):
    """Cyclical learning rate (step once per batch): between ``base_lr`` and ``max_lr``
    in triangles of ``step_size_up + step_size_down`` iterations; ``mode`` scales the
    amplitude per cycle (``triangular``: constant, ``triangular2``: halved each cycle,
    ``exp_range``: ``gamma ** iteration``) unless ``scale_fn`` is given. With
    ``cycle_momentum`` the momentum (or Adam's beta1) cycles inversely."""

    _exclude_from_state = ("optimizer", "_scale_fn_ref", "_scale_fn_custom")

    def __init__(self, optimizer: Optimizer, base_lr: float | Sequence[float],
                 max_lr: float | Sequence[float], step_size_up: int = 2000,
                 step_size_down: int | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None,
                 scale_mode: str = "cycle", cycle_momentum: bool = True,
                 base_momentum: float | Sequence[float] = 0.8,
                 max_momentum: float | Sequence[float] = 0.9, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        groups = optimizer.param_groups
        base_lrs = _per_group(base_lr, groups, "base_lr")
        if last_epoch == -1:
            for lr, group in zip(base_lrs, groups):
                group["lr"] = lr
        self.max_lrs = _per_group(max_lr, groups, "max_lr")
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group(base_momentum, groups, "base_momentum")
            self.max_momentums = _per_group(max_momentum, groups, "max_momentum")
            if last_epoch == -1:
                for m_max, m_base, group in zip(self.max_momentums, self.base_momentums,
                                                groups):
                    _set_momentum(group, m_max, self.use_beta1)
                    group["max_momentum"], group["base_momentum"] = m_max, m_base
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = lambda x: 1.0
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = lambda x: 1 / (2.0 ** (x - 1))
            self.scale_mode = "cycle"
        else:
            gamma = self.gamma
            self._scale_fn_ref = lambda x: gamma ** x
            self.scale_mode = "iterations"

    def scale_fn(self, x: float) -> float:
        """The amplitude factor at cycle (or iteration) ``x``."""
        f = self._scale_fn_custom if self._scale_fn_custom is not None else self._scale_fn_ref
        return f(x)

    def get_lr(self) -> list[float]:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        frac = x / self.step_ratio if x <= self.step_ratio else \
            (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [b + (m - b) * frac * scale for b, m in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, b, m in zip(self.optimizer.param_groups, self.base_momentums,
                                   self.max_momentums):
                _set_momentum(group, m - (m - b) * frac * scale, self.use_beta1)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        fn = self._scale_fn_custom
        # torch's layout: a plain function is not saved, a callable object's attributes are
        state["_scale_fn_custom"] = None if fn is None or isinstance(
            fn, (types.FunctionType, types.MethodType)) else fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        fn = state.pop("_scale_fn_custom", None)
        super().load_state_dict(state)
        if fn is not None and self._scale_fn_custom is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


def _set_momentum(group: dict, value: float, use_beta1: bool) -> None:
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value
