"""``torch.signal``: window functions (:mod:`.windows`)."""
from . import windows

__all__ = ["windows"]
