"""torch's ``torch.utils.model_zoo``: ``load_url`` is :func:`omnitensor.hub.load_state_dict_from_url`
(torchvision's older code imports it from here)."""
from __future__ import annotations

from ..hub import load_state_dict_from_url as load_url

__all__ = ["load_url"]
