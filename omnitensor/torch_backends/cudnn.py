"""``torch.backends.cudnn`` on omnitensor: cuDNN is never used (convolutions come from
omnitensor's own kernels on every device), so ``is_available()`` is False and the flags
(``enabled``, ``benchmark``, ``deterministic``, ``allow_tf32``) are settable and inert.
``deterministic = True`` needs no effect: omnitensor's kernels are deterministic already."""
from __future__ import annotations

from typing import Any

from ._flags import flags_context

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """False: omnitensor does not call cuDNN."""
    return False


def version() -> None:
    """None, as torch answers where cuDNN is absent."""
    return None


def is_acceptable(tensor: Any) -> bool:
    return False


def flags(enabled: Any = None, benchmark: Any = None, benchmark_limit: Any = None,
          deterministic: Any = None, allow_tf32: Any = None) -> Any:
    """Set the flags for a ``with`` block (they change nothing here)."""
    return flags_context(__name__, enabled=enabled, benchmark=benchmark,
                         benchmark_limit=benchmark_limit, deterministic=deterministic,
                         allow_tf32=allow_tf32)
