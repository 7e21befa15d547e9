"""``torch.distributed.fsdp.fully_sharded_data_parallel``: torch's module path of the FSDP
names (see :mod:`omnitensor.distributed.fsdp`: sharding is not supported, so no module is
ever an instance of ``FullyShardedDataParallel``; libraries check for it)."""
from __future__ import annotations

from . import FullyShardedDataParallel, ShardingStrategy, StateDictType

__all__ = ["FullyShardedDataParallel", "ShardingStrategy", "StateDictType"]
