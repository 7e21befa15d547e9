"""``torch.backends.mha``: the MultiheadAttention fast path switch (inert: omnitensor has
one attention path)."""
from __future__ import annotations

_fastpath = [True]


def get_fastpath_enabled() -> bool:
    return _fastpath[0]


def set_fastpath_enabled(value: bool) -> None:
    _fastpath[0] = bool(value)
