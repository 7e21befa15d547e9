"""``omnitensor.utils.data``: torch's path to :mod:`omnitensor.data` (the same objects, so
code written for ``torch.utils.data`` ports by changing ``torch`` to ``omnitensor``).

The submodules torch programs import by path (``dataloader``, ``dataset``, ``sampler``,
``distributed``) are modules of this package too, each re-exporting its counterpart in
``omnitensor.data``."""
from __future__ import annotations

from typing import Any

from ...data import *
from ...data import __all__
from . import _utils, dataloader, dataset, distributed, sampler


def __getattr__(name: str) -> Any:
    from ... import data
    return getattr(data, name)
