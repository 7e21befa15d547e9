"""``torch.distributed.checkpoint``: the state-dict helpers (:mod:`.state_dict`), which on
unsharded models are the modules' and optimizers' own state dicts. Distributed
checkpoint files (``save``/``load`` of a sharded state) are not supported: use
``omnitensor.save`` on rank 0."""
from . import state_dict

__all__ = ["state_dict"]
