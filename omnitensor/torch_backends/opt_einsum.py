"""``torch.backends.opt_einsum`` on omnitensor: contraction-order optimisation through the
opt_einsum package is not used; ``enabled``/``strategy`` are settable and inert."""
from __future__ import annotations

enabled = False
strategy = None


def is_available() -> bool:
    return False


def get_opt_einsum() -> None:
    return None
