"""torch.nn names beside the layers: ``factory_kwargs`` (a module author's helper), the
deprecated ``Container`` and ``LinearCrossEntropyLoss`` (``F.linear_cross_entropy`` with
its weight held by a :class:`Linear`)."""
from __future__ import annotations

import math
import warnings
from typing import Any

from ..core.tensor import Tensor
from . import functional as F
from .linear import Linear
from .loss import _WeightedLoss
from .module import Module

__all__ = ["factory_kwargs", "Container", "LinearCrossEntropyLoss"]


def factory_kwargs(kwargs: dict | None) -> dict:
    """torch's ``nn.factory_kwargs``: the ``device``, ``dtype`` and ``memory_format`` of
    ``kwargs`` (and of its ``factory_kwargs`` entry) for a factory call; any other key,
    or one given twice, is a TypeError."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    expected = simple | {"factory_kwargs"}
    if not kwargs.keys() <= expected:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected}")
    out = dict(kwargs.get("factory_kwargs", {}))
    for k in simple:
        if k in kwargs:
            if k in out:
                raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
            out[k] = kwargs[k]
    return out


class Container(Module):
    """torch's deprecated ``nn.Container``: a Module holding the modules given by
    keyword."""

    def __init__(self, **kwargs: Any) -> None:
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now "
                      "implemented in `nn.Module`. Subclass that instead.", FutureWarning,
                      stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class LinearCrossEntropyLoss(_WeightedLoss):
    """torch's ``nn.LinearCrossEntropyLoss``: cross entropy of ``input @ W^T (+ b)``
    without materializing the logits in torch (``F.linear_cross_entropy``); ``W`` is a
    :class:`Linear`'s ``(num_classes * prod(out_features), in_features)`` weight."""

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple = (),
                 bias: bool = False, device: Any = None, dtype: Any = None,
                 reduction: str = "mean", weight: Tensor | None = None,
                 ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: Any = None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        super().__init__(weight=weight, reduction=reduction)
        self.num_classes, self.out_features = num_classes, tuple(out_features)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes),
                             bias=bias, device=device, dtype=dtype)
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        shape = (self.num_classes, *self.out_features)
        w = self.linear.weight.reshape(shape + (self.linear.in_features,))
        b = None if self.linear.bias is None else self.linear.bias.reshape(shape)
        return F.linear_cross_entropy(input, w, target, linear_bias=b, weight=self.weight,
                                      reduction=self.reduction,
                                      ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing,
                                      options=self.options)
