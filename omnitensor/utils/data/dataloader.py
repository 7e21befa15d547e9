"""``omnitensor.utils.data.dataloader``: torch's path to :mod:`omnitensor.data.dataloader`."""
from __future__ import annotations

from typing import Any

from ...data import dataloader as _impl
from ...data.dataloader import *  # noqa: F403
from ...data.dataloader import __all__  # noqa: F401


def __getattr__(name: str) -> Any:
    return getattr(_impl, name)
