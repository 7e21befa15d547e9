"""``torch.nn.attention``: the SDPA backend selection (``sdpa_kernel``, ``SDPBackend``) and
:mod:`.flex_attention`.

omnitensor's ``scaled_dot_product_attention`` is one implementation on every device (the
math of torch's MATH backend, fused where the device allows), so choosing a backend changes
no result: ``sdpa_kernel`` accepts any selection and the block runs as written; the fused
kernels torch's flash and memory-efficient backends name do not exist here, which
``can_use_flash_attention`` and ``can_use_efficient_attention`` say.
"""
from __future__ import annotations

import contextlib
import enum
from typing import Any, Iterator

__all__ = ["SDPBackend", "sdpa_kernel", "can_use_flash_attention",
           "can_use_efficient_attention", "flex_attention"]


class SDPBackend(enum.IntEnum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


@contextlib.contextmanager
def sdpa_kernel(backends: Any, set_priority: bool = False) -> Iterator[None]:
    """Select SDPA backends for the block: accepted; omnitensor has one SDPA (see the
    module doc). An unknown backend is still an error, as in torch."""
    chosen = backends if isinstance(backends, (list, tuple)) else [backends]
    for b in chosen:
        if not isinstance(b, SDPBackend):
            raise TypeError(f"sdpa_kernel: expected SDPBackend values, got {b!r}")
    yield


def can_use_flash_attention(params: Any = None, debug: bool = False) -> bool:
    """False: there is no flash-attention kernel on omnitensor's devices."""
    return False


def can_use_efficient_attention(params: Any = None, debug: bool = False) -> bool:
    """False: there is no memory-efficient attention kernel on omnitensor's devices."""
    return False


def __getattr__(name: str) -> Any:
    if name == "flex_attention":
        import importlib
        return importlib.import_module(f"{__name__}.flex_attention")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
