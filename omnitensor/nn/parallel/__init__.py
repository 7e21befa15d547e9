"""``omnitensor.nn.parallel``: ``DistributedDataParallel`` (implemented in
``omnitensor/dist/ddp.py``, next to the collectives it drives)."""
from __future__ import annotations

from ...dist.ddp import DistributedDataParallel

from .data_parallel import DataParallel, data_parallel

DDP = DistributedDataParallel

__all__ = ["DistributedDataParallel", "DDP", "DataParallel", "data_parallel"]
