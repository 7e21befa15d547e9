"""``omnitensor.utils.deterministic``: torch's switch for filling uninitialized memory.

``fill_uninitialized_memory`` (torch's default True) is read by torch when deterministic
algorithms are on, to fill ``empty`` tensors with NaN or the largest integer. It is kept
here so scripts that set it run; omnitensor's ``empty`` gives zero-filled memory on every
backend, which is deterministic already.
"""
from __future__ import annotations

fill_uninitialized_memory: bool = True
