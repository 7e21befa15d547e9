"""DTensor helpers libraries import by name; without sharded tensors they raise."""
from __future__ import annotations

from typing import Any

from . import _WHY

__all__ = ["compute_local_shape_and_global_offset"]


def compute_local_shape_and_global_offset(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(_WHY)
