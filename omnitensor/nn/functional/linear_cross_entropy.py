"""torch's ``F.linear_cross_entropy`` (a linear projection, then cross entropy) and its
chunking options, ``nn.LinearCrossEntropyOptions``.

torch's chunked path only changes how much memory the logits take; omnitensor computes the
reference path (``cross_entropy(linear(input, weight), target)``) for every ``options``.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from ...core.ops.linalg_ops import tensordot
from ...core.tensor import Tensor
from .linear import linear
from .loss import cross_entropy

_ACC_POLICIES = ("accurate", "balanced", "compact", "auto")


@dataclasses.dataclass
class LinearCrossEntropyOptions:
    """torch's chunking options of :func:`linear_cross_entropy` (accepted, with torch's
    fields and checks; the loss and its gradients are the reference path's)."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: Any = None

    def __post_init__(self) -> None:
        if self.acc_policy not in _ACC_POLICIES:
            raise ValueError(f"LinearCrossEntropyOptions: acc_policy must be one of "
                             f"{_ACC_POLICIES}, got {self.acc_policy!r}")
        if self.batch_chunk_size is not None and (
                not isinstance(self.batch_chunk_size, int) or self.batch_chunk_size < 1):
            raise ValueError(f"LinearCrossEntropyOptions: batch_chunk_size must be a "
                             f"positive int or None, got {self.batch_chunk_size!r}")


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,  # noqa: A002
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)`` (torch's);
    a weight of shape ``(C, d_1, ..., d_K, in_features)`` gives K-dimensional logits
    ``(N, C, d_1, ..., d_K)`` from a batched ``(N, in_features)`` input."""
    if not isinstance(input, Tensor) or not isinstance(linear_weight, Tensor):
        raise TypeError("linear_cross_entropy: input and linear_weight must be tensors")
    if ignore_index is not None and isinstance(target, Tensor) and target.dtype.kind in "fc":
        raise ValueError("linear_cross_entropy: ignore_index cannot be specified when target "
                         "contains probabilities (a floating target); leave it None")
    if linear_weight.ndim <= 2:
        logits = linear(input, linear_weight, linear_bias)
    else:
        if input.ndim != 2:
            raise ValueError(f"linear_cross_entropy: a {linear_weight.ndim}-D linear_weight "
                             f"(K-dimensional loss) needs a batched (N, in_features) input, "
                             f"got shape {tuple(input.shape)}")
        logits = tensordot(input, linear_weight, axes=([1], [linear_weight.ndim - 1]))
        if linear_bias is not None:
            logits = logits + linear_bias
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)
