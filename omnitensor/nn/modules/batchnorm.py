"""``omnitensor.nn.modules.batchnorm``: torch's import path for these layers (they live in
:mod:`omnitensor.nn`)."""
from ._reexport import reexport

__all__, __getattr__ = reexport(__name__, [
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "SyncBatchNorm",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
])

from ..normalization import _BatchNorm  # noqa: E402,F401
