"""``torch.distributed.algorithms.ddp_comm_hooks``: hooks for
``DistributedDataParallel.register_comm_hook`` (``default_hooks``: all-reduce and
float16/bfloat16 compression)."""
from . import default_hooks

__all__ = ["default_hooks"]
