"""Attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``
(torch's math path, written with Tensor ops)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...core.autocast_state import autocast_operands, state as _autocast
from ...core.capture_hooks import composite
from ...core.ops.creation import zeros
from ...core.ops.join import cat
from ...core.tensor import Tensor
from ._utils import INDEX_CACHE
from .activation import softmax
from .linear import linear
from .misc import dropout, pad

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


def _causal(l_: int, s: int, device: Any) -> Tensor:
    return INDEX_CACHE.get(("causal", l_, s), device,
                           lambda: np.tril(np.ones((l_, s), dtype=bool)))


@composite("scaled_dot_product_attention")
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(q k^T * scale + mask) v`` over ``(..., L, E)`` queries and ``(..., S, E)``
    keys. A boolean ``attn_mask`` marks positions that *take part* (True), a float mask is
    added; ``is_causal`` masks the upper triangle."""
    if _autocast.active:
        query, key, value, attn_mask = autocast_operands(
            "scaled_dot_product_attention", query, key, value, attn_mask)
    l_, s = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = key.repeat_interleave(rep, dim=key.ndim - 3)
        value = value.repeat_interleave(rep, dim=value.ndim - 3)
    scores = (query @ key.mT) * scale
    if is_causal:
        if attn_mask is not None:
            raise ValueError("scaled_dot_product_attention: pass either attn_mask or "
                             "is_causal, not both")
        scores = scores.masked_fill(_causal(l_, s, query.device).logical_not(), -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype.kind == "b":
            scores = scores.masked_fill(attn_mask.logical_not(), -math.inf)
        else:
            scores = scores + attn_mask
    attn = softmax(scores, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p)
    return attn @ value


def _float_mask(mask: Tensor, dtype: Any) -> Tensor:
    """A bool "masked out" mask as an additive float mask (0 / -inf)."""
    if mask.dtype.kind == "b":
        return zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, -math.inf)
    return mask.to(dtype)


@composite("multi_head_attention_forward")
def _in_projection(query: Tensor, key: Tensor, value: Tensor, separate: bool,
                   in_proj_weight: Tensor | None, in_proj_bias: Tensor | None,
                   q_proj_weight: Tensor | None, k_proj_weight: Tensor | None,
                   v_proj_weight: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """Multi-head attention's input projections: one packed weight (one matmul for
    self-attention) or three separate ones."""
    if not separate:
        if in_proj_weight is None:
            raise ValueError("multi_head_attention_forward: use_separate_proj_weight is False "
                             "but in_proj_weight is None")
        if query is key and key is value:
            q, k, v = linear(query, in_proj_weight, in_proj_bias).chunk(3, -1)
            return q, k, v
        w_q, w_k, w_v = in_proj_weight.chunk(3)
    else:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise ValueError("multi_head_attention_forward: use_separate_proj_weight is True "
                             "but q_proj_weight, k_proj_weight or v_proj_weight is None")
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
        out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """torch's functional multi-head attention on sequence-first ``(L, N, E)`` inputs (or
    unbatched ``(L, E)``). ``key_padding_mask`` ``(N, S)`` and ``attn_mask`` ``(L, S)`` or
    ``(N * heads, L, S)``: True (bool) means *masked out*; float masks are added."""
    if static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: static_k/static_v are not "
                                  "supported")
    unbatched = query.ndim == 2
    if unbatched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise ValueError(f"was expecting embedding dimension of {embed_dim_to_check}, but got "
                         f"{embed_dim}")
    if embed_dim % num_heads:
        raise ValueError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    head_dim = embed_dim // num_heads
    q, k, v = _in_projection(query, key, value, use_separate_proj_weight, in_proj_weight,
                             in_proj_bias, q_proj_weight, k_proj_weight, v_proj_weight)
    if is_causal and attn_mask is None:
        attn_mask = _causal(tgt_len, k.shape[0], query.device).logical_not()
    if attn_mask is not None:
        attn_mask = _float_mask(attn_mask, q.dtype)
        if attn_mask.ndim == 2:
            attn_mask = attn_mask.unsqueeze(0)
    if bias_k is not None and bias_v is not None:
        k = cat([k, bias_k.reshape(1, 1, embed_dim).expand(1, bsz, embed_dim)])
        v = cat([v, bias_v.reshape(1, 1, embed_dim).expand(1, bsz, embed_dim)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    # (L, N, E) -> (N, heads, L, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        z = zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k, v = cat([k, z], 1), cat([v, z], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    mask = attn_mask
    if key_padding_mask is not None:
        kpm = _float_mask(key_padding_mask, q.dtype).reshape(bsz, 1, 1, src_len)
        kpm = kpm.expand(bsz, num_heads, 1, src_len).reshape(bsz * num_heads, 1, src_len)
        mask = kpm if mask is None else mask + kpm
    scores = (q * (1.0 / math.sqrt(head_dim))) @ k.transpose(1, 2)
    if mask is not None:
        scores = scores + mask
    attn = softmax(scores, -1)
    if dropout_p > 0.0 and training:
        attn = dropout(attn, dropout_p)
    out = (attn @ v).transpose(0, 1).reshape(tgt_len, bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    weights = None
    if need_weights:
        weights = attn.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
    if unbatched:
        out = out.squeeze(1)
        if weights is not None:
            weights = weights.squeeze(0)
    return out, weights
