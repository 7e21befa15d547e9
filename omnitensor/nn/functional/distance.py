"""Distances and similarities: ``cosine_similarity``, ``pairwise_distance``, ``pdist``
(composites of Tensor ops: every device, gradients from autograd)."""
from __future__ import annotations

from ...core.tensor import Tensor

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``x1 . x2 / max(||x1|| ||x2||, eps)`` along ``dim`` (after broadcasting), each norm
    clamped to ``sqrt(eps)`` as torch's."""
    from ...core.ops.shape import broadcast_tensors
    a, b = broadcast_tensors(x1, x2)
    na = (a * a).sum(dim=dim)
    nb = (b * b).sum(dim=dim)
    denom = (na * nb).clamp(min=eps * eps).sqrt()
    return (a * b).sum(dim=dim) / denom


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` along the last dim."""
    d = x1 - x2 + eps
    if x1.ndim == 0 and x2.ndim == 0:
        return d.abs()
    return d.norm(p, -1, keepdim=keepdim)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:  # noqa: A002
    """The ``p``-norm distances between every pair of rows of a 2-D input, in the order
    of the upper triangle (row i against rows j > i)."""
    if input.ndim != 2:
        raise ValueError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    n = input.shape[0]
    if n < 2:
        return input.new_zeros((0,))
    from ...core.ops.creation import triu_indices
    i, j = triu_indices(n, n, 1, device=input.device)
    diff = input.index_select(0, i) - input.index_select(0, j)
    return diff.norm(p, -1)
