"""Layers over the functions of ``F`` that have no home of their own: shrinkage and
parametric activations (``Hardshrink``, ``Softshrink``, ``Tanhshrink``, ``PReLU``,
``RReLU``, ``Softmax2d``), ``ChannelShuffle``, ``Fold``/``Unfold``, the SELU dropouts
(``AlphaDropout``, ``FeatureAlphaDropout``), ``Dropout3d``, ``RMSNorm``,
``LocalResponseNorm``/``CrossMapLRN2d``, ``LPPool3d`` and ``EmbeddingBag``."""
from __future__ import annotations

from typing import Any, Sequence

from ..core.ops.creation import empty, full
from ..core.tensor import Tensor
from . import functional as F
from . import init
from .dropout import _DropoutNd
from .module import Module
from .parameter import Parameter

__all__ = ["Hardshrink", "Softshrink", "Tanhshrink", "PReLU", "RReLU", "Softmax2d",
           "ChannelShuffle", "Fold", "Unfold", "AlphaDropout", "FeatureAlphaDropout",
           "Dropout3d", "RMSNorm", "LocalResponseNorm", "CrossMapLRN2d", "LPPool3d",
           "EmbeddingBag"]


class Hardshrink(Module):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.hardshrink(input, self.lambd)


class Softshrink(Hardshrink):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softshrink(input, self.lambd)


class Tanhshrink(Module):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.tanhshrink(input)


class PReLU(Module):
    """``max(0, x) + a * min(0, x)`` with a learned slope (one, or one per channel)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(full((num_parameters,), init, device=device, dtype=dtype))

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)


class Softmax2d(Module):
    """Softmax over the channels of ``(N, C, H, W)`` or ``(C, H, W)``."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             f"instead")
        return F.softmax(input, -3)


class ChannelShuffle(Module):
    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.channel_shuffle(input, self.groups)


class Fold(Module):
    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1,
                 padding: Any = 0, stride: Any = 1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.fold(input, self.output_size, self.kernel_size, self.dilation,
                      self.padding, self.stride)


class Unfold(Module):
    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = \
            kernel_size, dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)


class AlphaDropout(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.feature_alpha_dropout(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout3d(input, self.p, self.training, self.inplace)


class RMSNorm(Module):
    """Root-mean-square normalization over the trailing ``normalized_shape``."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None
                 ) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else \
            tuple(normalized_shape)
        self.normalized_shape, self.eps = shape, eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)


class CrossMapLRN2d(LocalResponseNorm):
    """torch's older LRN over the channels of ``(N, C, H, W)``."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: expected a 4D input, got {input.ndim}D")
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)


class LPPool3d(Module):
    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.lp_pool3d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings (``F.embedding_bag``)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Tensor | None = None,
                 include_last_offset: bool = False, padding_idx: int | None = None,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.mode, self.sparse = scale_grad_by_freq, mode, sparse
        self.include_last_offset = include_last_offset
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError("padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(empty((num_embeddings, embedding_dim), device=device,
                                          dtype=dtype))
            self.reset_parameters()
        else:
            self.weight = Parameter(_weight)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            from ..core.graph import no_grad_ctx
            with no_grad_ctx():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input: Tensor, offsets: Tensor | None = None,  # noqa: A002
                per_sample_weights: Tensor | None = None) -> Tensor:
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, **kwargs: Any
                        ) -> "EmbeddingBag":
        bag = cls(embeddings.shape[0], embeddings.shape[1], _weight=embeddings, **kwargs)
        bag.weight.requires_grad = not freeze
        return bag

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, mode='{self.mode}'"
