"""``torch.distributed.fsdp``: fully sharded data parallelism is not supported by
omnitensor (its parameters are not sharded); the names exist so libraries import, and
wrapping a model raises naming the alternative (DistributedDataParallel)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["FullyShardedDataParallel", "FSDPModule", "fully_shard", "CPUOffloadPolicy",
           "MixedPrecisionPolicy", "ShardingStrategy", "StateDictType"]

_WHY = ("FSDP (sharded parameters) is not supported by omnitensor; wrap the model in "
        "DistributedDataParallel instead")


class FullyShardedDataParallel:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(_WHY)


class FSDPModule:
    """The type of modules ``fully_shard`` returns: none exist in omnitensor."""


def fully_shard(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(_WHY)


@dataclass
class CPUOffloadPolicy:
    pin_memory: bool = True


@dataclass
class MixedPrecisionPolicy:
    param_dtype: Any = None
    reduce_dtype: Any = None
    output_dtype: Any = None
    cast_forward_inputs: bool = True


class ShardingStrategy:
    FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD, _HYBRID_SHARD_ZERO2 = range(5)


class StateDictType:
    FULL_STATE_DICT, LOCAL_STATE_DICT, SHARDED_STATE_DICT = range(3)
