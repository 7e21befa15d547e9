"""``torch.backends.mps`` on omnitensor: there is no Metal backend, so MPS is neither built nor
available (Apple GPUs are reached through OpenCL where the system provides it)."""
from __future__ import annotations


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False


def is_macos_or_newer(major: int, minor: int) -> bool:
    return False
