"""``torch.fx._symbolic_trace``'s tracing queries: no FX tracing ever runs here."""
from __future__ import annotations

__all__ = ["is_fx_tracing", "is_fx_symbolic_tracing"]


def is_fx_tracing() -> bool:
    return False


def is_fx_symbolic_tracing() -> bool:
    return False
