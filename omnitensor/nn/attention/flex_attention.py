"""``torch.nn.attention.flex_attention``: attention with a user ``score_mod`` and a mask
given as a ``mask_mod`` function.

torch compiles these into a block-sparse kernel; here they run densely with broadcasting:
the mods are called once with index tensors shaped to broadcast over ``(batch, head,
query, key)`` (``b: (B,1,1,1)``, ``h: (1,H,1,1)``, ``q_idx: (1,1,Q,1)``,
``kv_idx: (1,1,1,KV)``), which gives the same scores torch's vmap does for elementwise
mods, then a masked softmax. Results and gradients equal torch's; memory is
``O(B H Q KV)``. A ``BlockMask`` holds its ``mask_mod`` and sizes, and its dense mask.
"""
from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

from ...core import dtypes as _dt
from ...core.ops.creation import arange
from ...core.tensor import Tensor

__all__ = ["BlockMask", "create_block_mask", "create_mask", "flex_attention", "noop_mask",
           "and_masks", "or_masks", "AuxRequest", "AuxOutput"]


class AuxRequest(NamedTuple):
    """Which auxiliary outputs :func:`flex_attention` should return."""
    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """The auxiliary outputs asked for (None where not asked)."""
    lse: Tensor | None = None
    max_scores: Tensor | None = None

_DEFAULT_SPARSE_BLOCK_SIZE = 128


def noop_mask(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
    """Every position is visible."""
    return q_idx.new_ones((), dtype=_dt.bool_)


def and_masks(*mask_mods: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def mod(b: Tensor, h: Tensor, q: Tensor, kv: Tensor) -> Tensor:
        out = noop_mask(b, h, q, kv)
        for m in mask_mods:
            out = out & m(b, h, q, kv)
        return out
    return mod


def or_masks(*mask_mods: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def mod(b: Tensor, h: Tensor, q: Tensor, kv: Tensor) -> Tensor:
        out = ~noop_mask(b, h, q, kv)
        for m in mask_mods:
            out = out | m(b, h, q, kv)
        return out
    return mod


def _indices(B: int, H: int, Q: int, KV: int, device: Any) -> tuple[Tensor, ...]:
    def ax(n: int, pos: int) -> Tensor:
        shape = [1, 1, 1, 1]
        shape[pos] = n
        return arange(n, dtype=_dt.int64, device=device).reshape(shape)
    return ax(B, 0), ax(H, 1), ax(Q, 2), ax(KV, 3)


def create_mask(mod_fn: Callable[..., Tensor], B: int | None, H: int | None, Q_LEN: int,
                KV_LEN: int, device: Any = None) -> Tensor:
    """The dense ``(B, H, Q_LEN, KV_LEN)`` bool mask of ``mod_fn`` (a mask_mod)."""
    b, h, q, kv = _indices(B or 1, H or 1, Q_LEN, KV_LEN, device)
    m = mod_fn(b, h, q, kv)
    return m.to(_dt.bool_).broadcast_to((B or 1, H or 1, Q_LEN, KV_LEN))


class BlockMask:
    """A mask for :func:`flex_attention`: the ``mask_mod``, the sequence lengths and the
    block size torch's kernel would use; the dense mask is kept for the dense path."""

    def __init__(self, mask_mod: Callable[..., Tensor], shape: tuple[int, int, int, int],
                 dense: Tensor, BLOCK_SIZE: Any = _DEFAULT_SPARSE_BLOCK_SIZE) -> None:
        self.mask_mod = mask_mod
        self.shape = shape
        self.seq_lengths = (shape[2], shape[3])
        bs = BLOCK_SIZE if isinstance(BLOCK_SIZE, tuple) else (BLOCK_SIZE, BLOCK_SIZE)
        self.BLOCK_SIZE = bs
        self._dense = dense

    def to_dense(self) -> Tensor:
        """The dense bool mask ``(B, H, Q_LEN, KV_LEN)``."""
        return self._dense

    def sparsity(self) -> float:
        """Percentage of masked-out positions."""
        return 100.0 * (1.0 - float(self._dense.float().mean().item()))

    def __repr__(self) -> str:
        return f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%)"


def create_block_mask(mask_mod: Callable[..., Tensor], B: int | None, H: int | None,
                      Q_LEN: int, KV_LEN: int, device: Any = None,
                      BLOCK_SIZE: Any = _DEFAULT_SPARSE_BLOCK_SIZE, _compile: bool = False,
                      **_: Any) -> BlockMask:
    """A :class:`BlockMask` of ``mask_mod`` over ``(B or 1, H or 1, Q_LEN, KV_LEN)``."""
    dense = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    return BlockMask(mask_mod, (B or 1, H or 1, Q_LEN, KV_LEN), dense, BLOCK_SIZE)


def flex_attention(query: Tensor, key: Tensor, value: Tensor,
                   score_mod: Callable[..., Tensor] | None = None,
                   block_mask: BlockMask | None = None, scale: float | None = None,
                   enable_gqa: bool = False, return_lse: bool = False,
                   kernel_options: Any = None, *, return_aux: AuxRequest | None = None,
                   **_: Any) -> Any:
    """``softmax(score_mod(q k^T * scale) masked) v`` over ``(B, H, L, E)`` inputs; a
    query row with every key masked gives zeros (and ``lse = -inf``), as torch's."""
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
        raise ValueError("flex_attention: query, key and value must be 4-D (B, H, L, E)")
    B, Hq, Lq, E = query.shape
    Hkv, Lkv = key.shape[1], key.shape[2]
    if Hq != Hkv:
        if not enable_gqa or Hq % Hkv:
            raise ValueError(f"flex_attention: {Hq} query heads and {Hkv} key/value heads "
                             f"need enable_gqa=True and a multiple")
        key = key.repeat_interleave(Hq // Hkv, dim=1)
        value = value.repeat_interleave(Hq // Hkv, dim=1)
    s = (1.0 / math.sqrt(E)) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * s
    b, h, q, kv = _indices(B, Hq, Lq, Lkv, query.device)
    if score_mod is not None:
        scores = score_mod(scores, b, h, q, kv)
    if block_mask is not None:
        scores = scores.masked_fill(~block_mask.to_dense(), -math.inf)
    lse = scores.logsumexp(dim=-1)
    visible = ~lse.isinf()
    weights = (scores - lse.where(visible, 0).unsqueeze(-1)).exp()
    out = (weights.where(visible.unsqueeze(-1), 0) @ value)
    if return_aux is not None:
        return out, AuxOutput(lse if return_aux.lse else None,
                              scores.amax(dim=-1) if return_aux.max_scores else None)
    return (out, lse) if return_lse else out
