"""``torch.distributed.algorithms.ddp_comm_hooks``: hooks for
``DistributedDataParallel.register_comm_hook`` (``default_hooks``: all-reduce and
float16/bfloat16 compression; ``debugging_hooks``: ``noop_hook``; ``powerSGD_hook``:
PowerSGD)."""
from . import debugging_hooks, default_hooks, powerSGD_hook

__all__ = ["default_hooks", "debugging_hooks", "powerSGD_hook"]
