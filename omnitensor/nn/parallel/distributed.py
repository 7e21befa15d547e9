"""``torch.nn.parallel.distributed``: torch's module path of ``DistributedDataParallel``
(implemented in ``omnitensor/dist/ddp.py``); libraries import the class from here."""
from __future__ import annotations

from ...dist.ddp import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
