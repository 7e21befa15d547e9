"""The SYCL backend (device type ``sycl``), on dpctl (and dpnp for oneMKL).

``kernel_backend`` (the adapter: omnitensor's generated kernels, launched through dpctl by
``runtime``; oneMKL through dpnp in ``library``), ``backend`` (the fallback adapter on
dpnp's own kernels, for devices dpctl cannot build OpenCL C for), ``devices`` (finding
devices and choosing between the two), ``env`` (finding the SYCL runtime library before
dpctl loads), ``ops``/``pool``/``sync`` (the dpnp adapter's helpers). Importing this
package imports nothing vendor-specific; ``SyclBackend`` loads on first access.
"""
from __future__ import annotations

from typing import Any

__all__ = ["SyclBackend"]


def __getattr__(name: str) -> Any:
    if name == "SyclBackend":
        from .devices import choice
        kind, _why = choice()
        if kind == "dpnp":
            from .backend import SyclBackend as DpnpBackend
            return DpnpBackend
        from .kernel_backend import SyclBackend
        return SyclBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
