"""``omnitensor.utils.tensorboard``: torch's ``SummaryWriter``, writing real TensorBoard event
files through the ``tensorboard`` package (``pip install tensorboard``; its event writer and
protocol buffers, nothing re-implemented). Values may be omnitensor tensors on any device,
NumPy arrays or Python numbers. ``add_graph`` writes a model's graph of torch ops in their
module scopes (``graph.py``)."""
from __future__ import annotations

from .writer import SummaryWriter

__all__ = ["SummaryWriter"]
