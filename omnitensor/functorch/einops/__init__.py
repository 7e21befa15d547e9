"""``functorch.einops``: ``rearrange`` (:func:`omnitensor.func.rearrange`)."""
from ...func import rearrange

__all__ = ["rearrange"]
