"""``torch.distributed._composable.fsdp``: the older path of ``fsdp.fully_shard``."""
from ..fsdp import CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy, fully_shard

__all__ = ["fully_shard", "FSDPModule", "CPUOffloadPolicy", "MixedPrecisionPolicy"]
