"""``omnitensor.utils.data``: the torch-style name of :mod:`omnitensor.data` (same objects,
so code written for ``torch.utils.data`` ports by changing the import)."""
from __future__ import annotations

from typing import Any

from ..data import *  # noqa: F401,F403
from ..data import __all__  # noqa: F401


def __getattr__(name: str) -> Any:
    from .. import data
    return getattr(data, name)
