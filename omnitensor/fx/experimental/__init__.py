"""``torch.fx.experimental``: only the queries libraries import (see ``proxy_tensor``)."""
from . import proxy_tensor

__all__ = ["proxy_tensor"]
