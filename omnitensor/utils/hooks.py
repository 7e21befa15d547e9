"""torch's ``torch.utils.hooks`` name: the hook handle lives in ``omnitensor.core.hooks``
(core's tensors and graph nodes hand it out); this module is its public face."""
from ..core.hooks import RemovableHandle

__all__ = ["RemovableHandle"]
