"""``torch.distributed.algorithms.ddp_comm_hooks``: hooks for
``DistributedDataParallel.register_comm_hook`` (``default_hooks``: all-reduce and
float16/bfloat16 compression; ``debugging_hooks``: ``noop_hook``)."""
from . import debugging_hooks, default_hooks

__all__ = ["default_hooks", "debugging_hooks"]
