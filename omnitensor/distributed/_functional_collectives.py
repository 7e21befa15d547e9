"""``torch.distributed._functional_collectives``: out-of-place collectives that return
their result (torch's tracing-friendly forms), over :mod:`omnitensor.distributed.nn`'s
differentiable ones. omnitensor's collectives complete before they return, so
``wait_tensor`` has nothing to wait for."""
from __future__ import annotations

from typing import Any

from ..core.tensor import Tensor
from .nn import functional as _F
from .types import ReduceOp

__all__ = ["wait_tensor", "all_reduce", "all_gather_tensor", "reduce_scatter_tensor",
           "all_to_all_single", "all_to_all_single_autograd", "broadcast"]


def wait_tensor(tensor: Tensor) -> Tensor:
    """The tensor itself: the collective that made it has already completed."""
    return tensor


def _op(reduce_op: Any) -> Any:
    if isinstance(reduce_op, str):
        return {"sum": ReduceOp.SUM, "avg": ReduceOp.AVG, "product": ReduceOp.PRODUCT,
                "min": ReduceOp.MIN, "max": ReduceOp.MAX}[reduce_op.lower()]
    return reduce_op


def all_reduce(self: Tensor, reduceOp: Any, group: Any = None, tag: str = "") -> Tensor:
    return _F.all_reduce(self, _op(reduceOp), group)


def all_gather_tensor(self: Tensor, gather_dim: int, group: Any = None, tag: str = "") -> Tensor:
    from ..core.ops.join import cat
    return cat(list(_F.all_gather(self, group)), gather_dim)


def reduce_scatter_tensor(self: Tensor, reduceOp: Any, scatter_dim: int,
                          group: Any = None, tag: str = "") -> Tensor:
    from .group import get_world_size
    parts = list(self.chunk(get_world_size(group), scatter_dim))
    return _F.reduce_scatter(parts[0].new_empty(tuple(parts[0].shape)), parts, _op(reduceOp),
                             group)


def all_to_all_single(self: Tensor, output_split_sizes: Any, input_split_sizes: Any,
                      group: Any = None, tag: str = "") -> Tensor:
    out_rows = sum(output_split_sizes) if output_split_sizes is not None else self.shape[0]
    out = self.new_empty((out_rows,) + tuple(self.shape[1:]))
    return _F.all_to_all_single(out, self, output_split_sizes, input_split_sizes, group)


all_to_all_single_autograd = all_to_all_single


def broadcast(self: Tensor, src: int, group: Any = None, tag: str = "") -> Tensor:
    return _F.broadcast(self, src, group)
