"""Helpers shared by the functional ops: argument normalisation and a small cache of index
tensors (im2col gathers) per device. (Native kernels for composites are optional backend
hooks declared in ``backends/base.py``; none exists for nn's composites today.)"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable

import numpy as np

from ...core.graph import is_grad_enabled
from ...core.tensor import Tensor


def ntuple(value: Any, n: int, name: str) -> tuple[int, ...]:
    """``3 -> (3, 3)``; a sequence must have ``n`` ints."""
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            return (int(value[0]),) * n
        if len(value) != n:
            raise ValueError(f"{name} must be an int or a sequence of {n} ints, got {value}")
        return tuple(int(v) for v in value)
    return (int(value),) * n


def pair(value: Any, name: str = "argument") -> tuple[int, int]:
    """``3 -> (3, 3)``; a pair passes through."""
    return ntuple(value, 2, name)  # type: ignore[return-value]


def differentiable_backward() -> bool:
    """True inside a ``create_graph=True`` backward: formulas must then be built from
    graph-connected tensors (not from values cached in forward under no_grad)."""
    return is_grad_enabled()


class IndexCache:
    """Index tensors by (key, device), built once on the host and kept on the device: an
    im2col gather index costs a host-to-device copy, not a per-step rebuild."""

    def __init__(self, maxsize: int = 64) -> None:
        self._items: "OrderedDict[tuple, Tensor]" = OrderedDict()
        self._max = maxsize

    def get(self, key: tuple, device: Any, build: Callable[[], np.ndarray]) -> Tensor:
        """The cached tensor for ``key`` on ``device``, built on first use."""
        k = key + (str(device),)
        t = self._items.get(k)
        if t is None:
            from ...core.ops.creation import tensor
            t = tensor(build(), device=device)
            self._items[k] = t
            if len(self._items) > self._max:
                self._items.popitem(last=False)
        else:
            self._items.move_to_end(k)
        return t


INDEX_CACHE = IndexCache()


def reduction_check(reduction: str) -> None:
    """Reject unknown reduction names."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction (use 'mean', 'sum' "
                         f"or 'none')")


def reduce(loss: Tensor, reduction: str) -> Tensor:
    """Apply a loss reduction (``mean``, ``sum`` or ``none``)."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss
