"""``embedding_bag``: sums, means or maxima of bags of embedding rows, without making the
``(indices, dim)`` intermediate a user sees. Written over :func:`embedding` (its padding,
``max_norm``, ``scale_grad_by_freq`` and sparse gradients carry over) and a gather of each
bag's rows into a padded ``(bags, longest, dim)`` block."""
from __future__ import annotations

import numpy as np

from ...core.ops.creation import tensor as _tensor
from ...core.tensor import Tensor
from .misc import embedding

__all__ = ["embedding_bag"]


def _bags(input: Tensor, offsets: Tensor | None, include_last_offset: bool  # noqa: A002
          ) -> tuple[Tensor, list[int], list[int]]:
    """(flat indices, bag starts, bag lengths)."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("embedding_bag: if input is 2D, then offsets has to be None, as "
                             "input is treated as a mini-batch of fixed length sequences")
        b, n = input.shape
        return input.reshape(-1), [i * n for i in range(b)], [n] * b
    if input.ndim != 1:
        raise ValueError(f"embedding_bag: input has to be 1D or 2D Tensor, but got "
                         f"{input.ndim}D")
    if offsets is None or offsets.ndim != 1:
        raise ValueError("embedding_bag: offsets has to be a 1D Tensor but got None"
                         if offsets is None else "embedding_bag: offsets has to be a 1D Tensor")
    starts = [int(v) for v in offsets.tolist()]
    total = input.shape[0]
    if starts and starts[0] != 0:
        raise ValueError(f"embedding_bag: offsets[0] has to be 0, i.e., the first sequence "
                         f"in the mini-batch has to start from position 0; got {starts[0]}")
    ends = starts[1:] + ([] if include_last_offset else [total])
    if include_last_offset:
        starts = starts[:-1]
    if any(e < s for s, e in zip(starts, ends)) or (ends and ends[-1] > total):
        raise ValueError("embedding_bag: offsets must be non-decreasing and within the input")
    return input, starts, [e - s for s, e in zip(starts, ends)]


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,  # noqa: A002
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """``(bags, dim)``: each bag's rows of ``weight`` combined by ``mode`` ('sum', 'mean',
    'max'); ``padding_idx`` rows are left out (a bag of only padding, or an empty bag,
    gives zeros); ``per_sample_weights`` scale the rows (mode 'sum' only)."""
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"embedding_bag: mode has to be one of sum, mean or max, got {mode!r}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    flat, starts, lengths = _bags(input, offsets, include_last_offset)
    if per_sample_weights is not None and tuple(per_sample_weights.shape) != tuple(input.shape):
        raise ValueError("embedding_bag: per_sample_weights has to be of the same shape as "
                         "input")
    rows = embedding(flat, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq,
                     sparse)                                     # (total, dim)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    num = weight.shape[0]
    pad = None if padding_idx is None else padding_idx % num
    longest = max(lengths, default=0)
    bags, dim = len(lengths), weight.shape[1]
    if bags == 0 or longest == 0:
        return weight.new_zeros((bags, dim))
    pos = np.zeros((bags, longest), np.int64)
    valid = np.zeros((bags, longest), bool)
    for b, (s, n) in enumerate(zip(starts, lengths)):
        pos[b, :n] = np.arange(s, s + n)
        valid[b, :n] = True
    keep = _tensor(valid, device=weight.device)
    if pad is not None:
        keep = keep & (flat.index_select(0, _tensor(pos.reshape(-1), device=weight.device))
                       .reshape(bags, longest) != pad)
    block = rows.index_select(0, _tensor(pos.reshape(-1), device=weight.device)).reshape(
        bags, longest, dim)
    mask = keep.unsqueeze(-1)
    if mode == "max":
        lowest = block.detach().amin() - 1 if block.numel() else 0
        best = block.where(mask, lowest).amax(dim=1)
        return best.where(keep.any(dim=1, keepdim=True), 0)
    total = (block * mask.to(block.dtype)).sum(dim=1)
    if mode == "sum":
        return total
    counts = keep.sum(dim=1, keepdim=True).clamp(min=1).to(total.dtype)
    return total / counts
