"""``omnitensor.utils.data.distributed``: torch's path to :mod:`omnitensor.data.distributed`."""
from __future__ import annotations

from typing import Any

from ...data import distributed as _impl
from ...data.distributed import *  # noqa: F403
from ...data.distributed import __all__  # noqa: F401


def __getattr__(name: str) -> Any:
    return getattr(_impl, name)
