"""``torch.backends.openmp`` on omnitensor: omnitensor is not built with OpenMP (its cpu
threads are ``omnitensor.set_num_threads``), so not available."""
from __future__ import annotations


def is_available() -> bool:
    return False
