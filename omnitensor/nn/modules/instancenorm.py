"""``omnitensor.nn.modules.instancenorm``: torch's import path for these layers (they live in
:mod:`omnitensor.nn`)."""
from ._reexport import reexport

__all__, __getattr__ = reexport(__name__, [
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
])
