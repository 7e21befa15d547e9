"""``omnitensor.utils.tensorboard``: not supported yet. ``SummaryWriter(...)`` raises
``NotImplementedError`` (log scalars yourself, or through the ``tensorboard`` package's own
writer with ``tensor.item()`` values) until omnitensor's TensorBoard support lands."""
from __future__ import annotations

from typing import Any

from ..._unsupported import not_supported

__all__ = ["SummaryWriter"]


class SummaryWriter:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        not_supported("omnitensor.utils.tensorboard.SummaryWriter",
                      "log with print/CSV, or tensorboard's own writer on .item() values")
