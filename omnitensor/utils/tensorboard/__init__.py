"""``omnitensor.utils.tensorboard``: torch's ``SummaryWriter``, writing real TensorBoard event
files through the ``tensorboard`` package (``pip install tensorboard``; its event writer and
protocol buffers, nothing re-implemented). Values may be omnitensor tensors on any device,
NumPy arrays or Python numbers."""
from __future__ import annotations

from .writer import SummaryWriter

__all__ = ["SummaryWriter"]
