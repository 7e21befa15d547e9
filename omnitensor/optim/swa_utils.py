"""``torch.optim.swa_utils``: Stochastic Weight Averaging and exponential moving averages
of a model's parameters (``AveragedModel``), the SWA learning-rate schedule (``SWALR``)
and the batch-norm statistics refresh an averaged model needs (``update_bn``)."""
from __future__ import annotations

import copy
import itertools
import math
from typing import Any, Callable, Iterable

from ..core.graph import no_grad_ctx
from ..core.ops.creation import tensor
from ..core.tensor import Tensor
from .lr_base import LRScheduler, _per_group
from .optimizer import Optimizer

__all__ = ["AveragedModel",  # noqa: F822 - built on first access (module __getattr__)
           "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """In place over lists: ``ema = lerp(ema, current, 1 - decay)``."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         f"[0,1] range.")

    def ema_update(ema_param_list: list, current_param_list: list, _: Any) -> None:
        for e, c in zip(ema_param_list, current_param_list):
            if e.is_floating_point() or e.is_complex():
                e.lerp_(c, 1 - decay)
            else:
                e.copy_(e * decay + c * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """In place over lists: the running mean ``avg += (current - avg) / (n + 1)``."""
    def swa_update(averaged_param_list: list, current_param_list: list,
                   num_averaged: Any) -> None:
        for a, c in zip(averaged_param_list, current_param_list):
            a.add_((c - a) / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """Per tensor: ``decay * ema + (1 - decay) * current``."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         f"[0,1] range.")

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn() -> Callable:
    """Per tensor: ``avg + (current - avg) / (n + 1)``."""
    def swa_update(averaged_param: Tensor, current_param: Tensor,
                   num_averaged: Any) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


def _nn() -> Any:
    # optim and nn are independent layers: the Module class is reached at call time
    # through the package root (the public API), never by importing omnitensor.nn here
    import omnitensor
    return omnitensor.nn


def _averaged_model_class() -> type:
    Module = _nn().Module

    class AveragedModel(Module):  # type: ignore[misc, valid-type]
        """A copy of ``model`` whose parameters (and buffers, with ``use_buffers``) are
        the running average of ``model``'s at each ``update_parameters(model)``: the
        equal-weight mean (SWA) by default, or ``avg_fn(avg, current, n)`` per tensor /
        ``multi_avg_fn(avg_list, current_list, n)`` in place."""

        def __init__(self, model: Any, device: Any = None, avg_fn: Callable | None = None,
                     multi_avg_fn: Callable | None = None, use_buffers: bool = False) -> None:
            super().__init__()
            if avg_fn is not None and multi_avg_fn is not None:
                raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
            self.module = copy.deepcopy(model)
            if device is not None:
                self.module = self.module.to(device)
            self.register_buffer("n_averaged", tensor(0, dtype="int64", device=device))
            self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, \
                use_buffers

        def forward(self, *args: Any, **kwargs: Any) -> Any:
            return self.module(*args, **kwargs)

        def _tensors(self, model: Any) -> list:
            return list(itertools.chain(model.parameters(), model.buffers()
                                        if self.use_buffers else []))

        def update_parameters(self, model: Any) -> None:
            """Fold ``model``'s current values into the average."""
            mine, theirs = self._tensors(self.module), self._tensors(model)
            n = int(self.n_averaged.item())
            with no_grad_ctx():
                for a, c in zip(mine, theirs):
                    c = c.detach().to(a.device)
                    if n == 0:
                        a.detach().copy_(c)
                    elif self.multi_avg_fn is None:
                        fn = self.avg_fn or get_swa_avg_fn()
                        a.detach().copy_(fn(a.detach(), c, tensor(n, device=a.device)))
                if n > 0 and self.multi_avg_fn is not None:
                    self.multi_avg_fn([a.detach() for a in mine],
                                      [c.detach().to(a.device) for a, c in zip(mine, theirs)],
                                      tensor(n, device=mine[0].device) if mine else n)
                if not self.use_buffers:  # keep the buffers in sync with the model's
                    for b, mb in zip(self.module.buffers(), model.buffers()):
                        b.detach().copy_(mb.detach().to(b.device))
                self.n_averaged.add_(1)
    AveragedModel.__qualname__ = "AveragedModel"
    AveragedModel.__module__ = __name__
    return AveragedModel


def update_bn(loader: Iterable, model: Any, device: Any = None) -> None:
    """Recompute every batch-norm layer's running statistics with one pass over
    ``loader`` (a cumulative average: momentum None), the model in training mode."""
    _BatchNorm = _nn().modules.batchnorm._BatchNorm
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to its ``swa_lr`` over ``anneal_epochs`` steps
    (``"cos"`` or ``"linear"``), then hold it there."""

    def __init__(self, optimizer: Optimizer, swa_lr: float, anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        for lr, group in zip(_per_group(swa_lr, optimizer.param_groups, "swa_lr"),
                             optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead "
                             f"got {anneal_strategy}")
        self.anneal_func = (self._cosine_anneal if anneal_strategy == "cos"
                            else self._linear_anneal)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float]:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        groups = self.optimizer.param_groups
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev)]


def __getattr__(name: str) -> Any:
    if name == "AveragedModel":
        cls = _averaged_model_class()
        globals()["AveragedModel"] = cls
        return cls
    raise AttributeError(f"module 'omnitensor.optim.swa_utils' has no attribute {name!r}")
