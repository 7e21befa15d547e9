"""``torch._dynamo._trace_wrapped_higher_order_op``: ``TransformGetItemToIndex``, the mode
torch's vmap and flex attention enter so that ``x[i]`` with a 0-d integer tensor ``i``
indexes with the tensor instead of reading it back as a Python int. omnitensor's indexing
already treats a 0-d integer tensor as an index tensor (no host read), so the mode has
nothing to change and the block runs as written."""
from __future__ import annotations

from typing import Any

__all__ = ["TransformGetItemToIndex"]


class TransformGetItemToIndex:
    def __enter__(self) -> "TransformGetItemToIndex":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None
