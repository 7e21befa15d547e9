"""``omnitensor.utils.data.sampler``: torch's path to :mod:`omnitensor.data.sampler`."""
from __future__ import annotations

from typing import Any

from ...data import sampler as _impl
from ...data.sampler import *  # noqa: F403
from ...data.sampler import __all__  # noqa: F401


def __getattr__(name: str) -> Any:
    return getattr(_impl, name)
