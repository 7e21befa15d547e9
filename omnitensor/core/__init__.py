"""Tensor, dtypes, devices, the op table and its dispatch (see ``ops/``)."""
from . import methods as _methods  # noqa: F401  (binds Tensor methods and operators)
