"""``torch.distributed.tensor`` (DTensor): the names libraries import, so that their
``isinstance(x, DTensor)`` checks answer False and their placement types exist.

omnitensor has no sharded tensor: no tensor is a ``DTensor``, and building one
(``distribute_tensor``, ``DTensor.from_local``) raises naming the gap. Data and model
parallelism run through :class:`omnitensor.nn.parallel.DistributedDataParallel`.
"""
from __future__ import annotations

from typing import Any

from .placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "Placement", "Shard", "Replicate", "Partial", "distribute_tensor",
           "distribute_module"]

_WHY = ("sharded tensors (DTensor) are not supported by omnitensor; use DistributedData"
        "Parallel for data parallelism")


class DTensor:
    """The type of sharded tensors: none exist in omnitensor (see the module doc)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> "DTensor":
        raise NotImplementedError(_WHY)

    @staticmethod
    def from_local(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(_WHY)


def distribute_tensor(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(_WHY)


def distribute_module(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(_WHY)
