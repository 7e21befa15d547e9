"""``omnitensor.nn.modules.loss``: torch's import path for these layers (they live in
:mod:`omnitensor.nn`)."""
from ._reexport import reexport

__all__, __getattr__ = reexport(__name__, [
    "L1Loss",
    "NLLLoss",
    "PoissonNLLLoss",
    "GaussianNLLLoss",
    "KLDivLoss",
    "MSELoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "HingeEmbeddingLoss",
    "MultiLabelMarginLoss",
    "SmoothL1Loss",
    "HuberLoss",
    "SoftMarginLoss",
    "CrossEntropyLoss",
    "MultiLabelSoftMarginLoss",
    "CosineEmbeddingLoss",
    "MarginRankingLoss",
    "MultiMarginLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
    "CTCLoss",
])

from ..loss import _Loss, _WeightedLoss  # noqa: E402,F401  (torch's base classes, subclassed by scripts)
