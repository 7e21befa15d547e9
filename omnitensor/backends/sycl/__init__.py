"""The SYCL backend (device type ``sycl``), on dpctl and dpnp.

``backend`` (the adapter), ``env`` (finding the SYCL runtime library before dpctl loads),
``ops`` (primitives dpnp lacks, filled on the device) and ``pool`` (a caching allocator for
large results). Importing this package imports nothing vendor-specific: ``env`` must be usable
before dpctl is imported; ``SyclBackend`` (which imports dpctl and dpnp) loads on first access.
"""
from __future__ import annotations

from typing import Any

__all__ = ["SyclBackend"]


def __getattr__(name: str) -> Any:
    if name == "SyclBackend":
        from .backend import SyclBackend
        return SyclBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
