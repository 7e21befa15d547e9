"""Tensor, dtypes, devices, the op table and its dispatch (see ``ops/``)."""
from . import methods as _methods  # binds Tensor methods and operators
