"""``omnitensor.nn``: modules, layers, losses, ``init`` and ``functional`` (torch's nn),
written against the public Tensor API so every layer runs on every device."""
from . import functional, init, utils
from .functional.linear_cross_entropy import LinearCrossEntropyOptions  # torch.nn.LinearCrossEntropyOptions
from .activation import (CELU, ELU, GELU, GLU, SELU, Hardsigmoid, Hardswish, Hardtanh,
                         LeakyReLU, LogSigmoid, LogSoftmax, Mish, MultiheadAttention, ReLU,
                         ReLU6, Sigmoid, SiLU, Softmax, Softmin, Softplus, Softsign, Tanh,
                         Threshold)
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .dropout import Dropout, Dropout1d, Dropout2d
from .linear import Bilinear, Flatten, Identity, Linear, Unflatten
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
                   MSELoss, NLLLoss, SmoothL1Loss)
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from .parameter import Buffer, Parameter
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool2d, AvgPool1d,
                      AvgPool2d, MaxPool1d, MaxPool2d)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .sparse import Embedding
from .transformer import TransformerEncoder, TransformerEncoderLayer

__all__ = [
    "functional", "init", "utils", "Module", "Parameter", "Buffer", "Sequential", "ModuleList",
    "ModuleDict", "ParameterList", "ParameterDict", "Identity", "Linear", "Bilinear",
    "Flatten", "Unflatten", "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d",
    "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "BatchNorm1d", "BatchNorm2d", "LayerNorm",
    "GroupNorm", "Dropout", "Dropout1d", "Dropout2d", "Embedding", "ReLU", "ReLU6",
    "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Tanh", "Sigmoid", "Hardtanh",
    "Hardsigmoid", "Hardswish", "Softplus", "Softsign", "LogSigmoid", "GLU", "Softmax",
    "LogSoftmax", "Softmin", "Threshold", "MultiheadAttention", "TransformerEncoderLayer",
    "TransformerEncoder", "MSELoss", "L1Loss", "HuberLoss", "SmoothL1Loss", "NLLLoss",
    "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss",
    "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
]


# torch's nn.modules (import paths) and nn.parallel, imported on first use
_LAZY_SUBMODULES = ("modules", "parallel")


def __getattr__(name: str) -> object:
    import importlib
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name == "DataParallel":
        from .parallel.data_parallel import DataParallel
        return DataParallel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# N-d convolutions and pools
from .conv import Conv3d, ConvTranspose3d
from .pooling import (AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool3d,
                      AvgPool3d, LPPool1d, LPPool2d, MaxPool3d, MaxUnpool1d, MaxUnpool2d,
                      MaxUnpool3d)

__all__ += ["LinearCrossEntropyOptions", "Conv3d", "ConvTranspose3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
            "AdaptiveMaxPool3d", "AvgPool3d", "LPPool1d", "LPPool2d", "MaxPool3d",
            "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]

# resampling layers
from .upsampling import (PixelShuffle, PixelUnshuffle, Upsample,
                         UpsamplingBilinear2d, UpsamplingNearest2d)

__all__ += ["PixelShuffle", "PixelUnshuffle", "Upsample", "UpsamplingBilinear2d",
            "UpsamplingNearest2d"]

# encoder-decoder transformer
from .transformer import (Transformer, TransformerDecoder,
                          TransformerDecoderLayer)

__all__ += ["Transformer", "TransformerDecoder", "TransformerDecoderLayer"]

# the rest of torch.nn's layers: padding, distances, margin/likelihood/CTC losses, norms,
# shrinkage and parametric activations, SELU dropouts, fold, embedding bags
from . import padding as _padding
from .distance import CosineSimilarity, PairwiseDistance
from .layers_more import (AlphaDropout, ChannelShuffle, CrossMapLRN2d, Dropout3d,
                          EmbeddingBag, FeatureAlphaDropout, Fold, Hardshrink,
                          LocalResponseNorm, LPPool3d, PReLU, RMSNorm, RReLU, Softmax2d,
                          Softshrink, Tanhshrink, Unfold)
from .loss_margin import (CosineEmbeddingLoss, CTCLoss, GaussianNLLLoss,
                          HingeEmbeddingLoss, MarginRankingLoss, MultiLabelMarginLoss,
                          MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss2d,
                          PoissonNLLLoss, SoftMarginLoss, TripletMarginLoss,
                          TripletMarginWithDistanceLoss)
from .normalization import (BatchNorm3d, InstanceNorm1d, InstanceNorm2d,
                            InstanceNorm3d, SyncBatchNorm)

globals().update({name: getattr(_padding, name) for name in _padding.__all__})
__all__ += list(_padding.__all__) + [
    "CosineSimilarity", "PairwiseDistance", "AlphaDropout", "ChannelShuffle", "CrossMapLRN2d",
    "Dropout3d", "EmbeddingBag", "FeatureAlphaDropout", "Fold", "Hardshrink",
    "LocalResponseNorm", "LPPool3d", "PReLU", "RMSNorm", "RReLU", "Softmax2d", "Softshrink",
    "Tanhshrink", "Unfold", "CosineEmbeddingLoss", "CTCLoss", "GaussianNLLLoss",
    "HingeEmbeddingLoss", "MarginRankingLoss", "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss2d", "PoissonNLLLoss",
    "SoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "BatchNorm3d",
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "SyncBatchNorm"]

from .lazy import UninitializedBuffer, UninitializedParameter, make_all as _lazy_all
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .modules_torch_more import (Container, FractionalMaxPool2d,
                                 FractionalMaxPool3d, LinearCrossEntropyLoss, factory_kwargs)

globals().update(_lazy_all())  # LazyLinear, LazyConv2d, LazyBatchNorm1d... (nn/lazy.py)
__all__ += ["UninitializedBuffer", "UninitializedParameter", "Container",
            "LinearCrossEntropyLoss", "factory_kwargs", "FractionalMaxPool2d",
            "FractionalMaxPool3d", "AdaptiveLogSoftmaxWithLoss"] + sorted(_lazy_all())
