"""``omnitensor.utils.data.dataset``: torch's path to :mod:`omnitensor.data.dataset`."""
from __future__ import annotations

from typing import Any

from ...data import dataset as _impl
from ...data.dataset import *  # noqa: F403
from ...data.dataset import __all__  # noqa: F401


def __getattr__(name: str) -> Any:
    return getattr(_impl, name)
