"""``torch.backends.mkl`` on omnitensor: omnitensor does not call MKL itself (NumPy may, below
the cpu backend), so not available."""
from __future__ import annotations


def is_available() -> bool:
    return False
