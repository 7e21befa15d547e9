"""``torch._subclasses``: the entry points libraries import (kornia checks ``is_fake``).
omnitensor has no fake tensors: every tensor holds its data."""
from . import fake_tensor
from .fake_tensor import FakeTensor, FakeTensorMode

__all__ = ["fake_tensor", "FakeTensor", "FakeTensorMode"]
