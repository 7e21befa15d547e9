"""``torch.backends.mkldnn`` (oneDNN) on omnitensor: not used, so not available; ``enabled``
is settable and inert."""
from __future__ import annotations

from typing import Any

from ._flags import flags_context

enabled = True
deterministic = False


def is_available() -> bool:
    return False


def flags(enabled: Any = None, deterministic: Any = None) -> Any:
    return flags_context(__name__, enabled=enabled, deterministic=deterministic)
