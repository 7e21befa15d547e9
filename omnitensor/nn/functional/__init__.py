"""``omnitensor.nn.functional``: stateless neural-network ops (torch's ``F``), written
with Tensor ops so they run and differentiate on every backend.

Hot ops (``linear``, ``conv2d``, ``max_pool2d``, ``softmax``, ``log_softmax``,
``cross_entropy``) are single graph nodes with explicit backward formulas (themselves
written with differentiable Tensor ops); ``conv2d``, ``softmax`` and ``log_softmax`` first
look for a native backend kernel (see each function's module docstring for the signature).
"""
from .activation import (celu, elu, gelu, glu, hardsigmoid, hardswish, hardtanh,
                         leaky_relu, leaky_relu_, log_softmax, logsigmoid, mish, relu, relu6,
                         relu_, selu, sigmoid, silu, softmax, softmin, softplus, softsign,
                         tanh, threshold)
from .attention import multi_head_attention_forward, scaled_dot_product_attention
from .conv import (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d,
                   fold, unfold)
from .linear import bilinear, linear
from .linear_cross_entropy import LinearCrossEntropyOptions, linear_cross_entropy
from .loss import (binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,
                   huber_loss, kl_div, l1_loss, mse_loss, nll_loss, smooth_l1_loss)
from .misc import dropout, dropout1d, dropout2d, embedding, one_hot, pad
from .normalization import batch_norm, group_norm, instance_norm, layer_norm, normalize
from .pooling import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d,
                      adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d,
                      avg_pool1d, avg_pool2d, avg_pool3d, lp_pool1d, lp_pool2d, max_pool1d,
                      max_pool2d, max_pool3d, max_unpool1d, max_unpool2d, max_unpool3d)

__all__ = [
    "celu", "elu", "gelu", "glu", "hardsigmoid", "hardswish", "hardtanh", "leaky_relu",
    "leaky_relu_", "log_softmax", "logsigmoid", "mish", "relu", "relu6", "relu_", "selu",
    "sigmoid", "silu", "softmax", "softmin", "softplus", "softsign", "tanh", "threshold",
    "multi_head_attention_forward", "scaled_dot_product_attention", "conv1d", "conv2d",
    "conv_transpose1d", "conv_transpose2d", "fold", "unfold", "bilinear", "linear",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy",
    "linear_cross_entropy", "huber_loss", "kl_div", "l1_loss", "mse_loss", "nll_loss", "smooth_l1_loss", "dropout",
    "dropout1d", "dropout2d", "embedding", "one_hot", "pad", "batch_norm", "group_norm",
    "instance_norm", "layer_norm", "normalize", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_max_pool2d", "avg_pool1d", "avg_pool2d", "max_pool1d", "max_pool2d",
    "conv3d", "conv_transpose3d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool3d", "avg_pool3d", "lp_pool1d", "lp_pool2d", "max_pool3d",
    "max_unpool1d", "max_unpool2d", "max_unpool3d",
]

# resampling (interpolate.py)
from .interpolate import (affine_grid, grid_sample, interpolate, pixel_shuffle,
                          pixel_unshuffle, upsample, upsample_bilinear, upsample_nearest)

__all__ += ["interpolate", "pixel_shuffle", "pixel_unshuffle", "upsample",
            "upsample_bilinear", "upsample_nearest", "affine_grid", "grid_sample"]

# activations, norms, pools and dropouts beyond the common ones; distances; margin and
# likelihood losses; embedding bags; CTC (each module says what it holds)
from .activation import (celu_, elu_, gumbel_softmax, hardshrink, hardtanh_,
                         prelu, rrelu, rrelu_, selu_, softshrink, tanhshrink, threshold_)
from .ctc import ctc_loss
from .distance import cosine_similarity, pairwise_distance, pdist
from .embedding_bag import embedding_bag
from .loss_margin import (cosine_embedding_loss, gaussian_nll_loss,
                          hinge_embedding_loss, margin_ranking_loss, multi_margin_loss,
                          multilabel_margin_loss, multilabel_soft_margin_loss,
                          poisson_nll_loss, soft_margin_loss, triplet_margin_loss,
                          triplet_margin_with_distance_loss)
from .misc import (alpha_dropout, channel_shuffle, dropout3d,
                   feature_alpha_dropout, native_channel_shuffle)
from .fractional_pool import (fractional_max_pool2d,
                              fractional_max_pool2d_with_indices, fractional_max_pool3d,
                              fractional_max_pool3d_with_indices)
from .normalization import local_response_norm, rms_norm
from .pooling import (adaptive_max_pool1d_with_indices,
                      adaptive_max_pool2d_with_indices, adaptive_max_pool3d_with_indices,
                      lp_pool3d, max_pool1d_with_indices, max_pool2d_with_indices,
                      max_pool3d_with_indices)

__all__ += ["celu_", "elu_", "gumbel_softmax", "hardshrink", "hardtanh_", "prelu", "rrelu",
            "rrelu_", "selu_", "softshrink", "tanhshrink", "threshold_", "ctc_loss",
            "cosine_similarity", "pairwise_distance", "pdist", "embedding_bag",
            "cosine_embedding_loss", "gaussian_nll_loss", "hinge_embedding_loss",
            "margin_ranking_loss", "multi_margin_loss", "multilabel_margin_loss",
            "multilabel_soft_margin_loss", "poisson_nll_loss", "soft_margin_loss",
            "triplet_margin_loss", "triplet_margin_with_distance_loss", "alpha_dropout",
            "channel_shuffle", "dropout3d", "feature_alpha_dropout", "native_channel_shuffle",
            "local_response_norm", "rms_norm", "adaptive_max_pool1d_with_indices",
            "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
            "lp_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
            "max_pool3d_with_indices", "fractional_max_pool2d",
            "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
            "fractional_max_pool3d_with_indices"]

from .grouped import assert_int_or_pair, conv_tbc, grouped_mm

__all__ += ["grouped_mm", "conv_tbc", "assert_int_or_pair"]

# torch's __torch_function__ guards, as torch.nn.functional re-exports them (omnitensor's
# functionals do not dispatch; these serve library code written in torch's style)
from ...core.torch_function import (handle_torch_function, has_torch_function,
                                    has_torch_function_unary, has_torch_function_variadic)

__all__ += ["handle_torch_function", "has_torch_function", "has_torch_function_unary",
            "has_torch_function_variadic"]
