"""``rearrange``: torch.func's einops-style reshaping (``'b (h w) c -> b c h w'``).

The pattern language is einops' and so is its parser: the call goes through
``einops.array_api``, which works on any tensor with ``__array_namespace__`` by calling that
namespace's reshape/permute ops, so the result is an ordinary, differentiable omnitensor
tensor on the input's device. einops is imported on the first call only.
"""
from __future__ import annotations

from typing import Any

from ..core.ops.join import stack
from ..core.tensor import Tensor

__all__ = ["rearrange"]


def rearrange(tensor: Any, pattern: str, **axes_lengths: int) -> Tensor:
    """``tensor`` (or a list/tuple of same-shaped tensors, stacked along a new first
    dimension) rearranged by the einops ``pattern``; ``axes_lengths`` give the sizes of
    axes a pattern splits (``'(c d) -> c d', d=2``). Bad patterns raise ``ValueError``, as
    torch's."""
    if isinstance(tensor, (list, tuple)):
        if not tensor or not all(isinstance(t, Tensor) for t in tensor):
            raise TypeError("rearrange: expected a Tensor or a non-empty list/tuple of "
                            "Tensors")
        tensor = stack(list(tensor))
    if not isinstance(tensor, Tensor):
        raise TypeError(f"rearrange: expected a Tensor or a list/tuple of Tensors, got "
                        f"{type(tensor).__name__}")
    if not isinstance(pattern, str):
        raise TypeError(f"rearrange: pattern must be a str, got {type(pattern).__name__}")
    try:
        from einops import EinopsError
        from einops.array_api import rearrange as _rearrange
    except ImportError:
        raise ImportError("omnitensor.func.rearrange parses the pattern with einops, which "
                          "is not installed: pip install einops") from None
    try:
        return _rearrange(tensor, pattern, **axes_lengths)
    except EinopsError as e:
        raise ValueError(f"rearrange: {e}".strip()) from None
