"""torch.nn names beside the layers: ``factory_kwargs`` (a module author's helper), the
deprecated ``Container``, ``LinearCrossEntropyLoss`` (``F.linear_cross_entropy`` with
its weight held by a :class:`Linear`) and the ``FractionalMaxPool{2,3}d`` modules over
``F.fractional_max_pool{2,3}d``."""
from __future__ import annotations

import math
import warnings
from typing import Any

from ..core.tensor import Tensor
from . import functional as F
from .linear import Linear
from .loss import _WeightedLoss
from .module import Module

__all__ = ["factory_kwargs", "Container", "LinearCrossEntropyLoss", "FractionalMaxPool2d",
           "FractionalMaxPool3d"]


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


def _ntuple(v: Any, n: int) -> Any:
    return None if v is None else tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _FractionalMaxPoolNd(Module):
    """torch's ``FractionalMaxPool{n}d``: ``F.fractional_max_pool{n}d`` with the module's
    ``kernel_size`` and one of ``output_size``/``output_ratio``; ``_random_samples`` (a
    buffer) fixes the window starts."""

    _n = 2

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Any = None) -> None:
        super().__init__()
        n, name = self._n, type(self).__name__
        self.kernel_size = _ntuple(kernel_size, n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, n)
        self.output_ratio = _ntuple(output_ratio, n)
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a "
                             f"pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        pool = getattr(F, f"fractional_max_pool{self._n}d")
        return pool(input, self.kernel_size, self.output_size, self.output_ratio,
                    self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """torch's ``nn.FractionalMaxPool2d`` (see :class:`_FractionalMaxPoolNd`)."""

    _n = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """torch's ``nn.FractionalMaxPool3d`` (see :class:`_FractionalMaxPoolNd`)."""

    _n = 3
