"""``ctc_loss``: the Connectionist Temporal Classification loss (Graves et al. 2006), the
forward algorithm in log space written with Tensor ops: one step per time frame,
vectorised over the batch and the extended label sequence, so it runs on every device and
its gradient comes from autograd."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...core.ops.creation import tensor as _tensor
from ...core.ops.join import cat, stack
from ...core.tensor import Tensor
from ._utils import reduction_check

__all__ = ["ctc_loss"]


def _lengths(v: Any, what: str, n: int) -> list[int]:
    out = [int(x) for x in (v.tolist() if isinstance(v, Tensor) else v)]
    if isinstance(v, Tensor) and v.ndim == 0:
        out = [int(v.item())]
    if len(out) != n:
        raise ValueError(f"ctc_loss: {what} must have one length per batch entry ({n}), got "
                         f"{len(out)}")
    return out


def _padded_targets(targets: Tensor, lengths: list[int]) -> np.ndarray:
    """(N, S_max) int64 labels from torch's 2-D padded or 1-D concatenated form."""
    host = np.asarray(targets.detach().cpu().tolist(), np.int64) if targets.numel() else \
        np.zeros((0,), np.int64)
    s_max = max(lengths, default=0)
    out = np.zeros((len(lengths), s_max), np.int64)
    if targets.ndim == 2:
        for b, n in enumerate(lengths):
            out[b, :n] = host[b, :n]
        return out
    start = 0
    for b, n in enumerate(lengths):
        out[b, :n] = host[start:start + n]
        start += n
    return out


def _float64() -> Any:
    from ...core.dtypes import float64
    return float64


def _logaddexp3(a: Tensor, b: Tensor, c: Tensor) -> Tensor:
    """``log(e^a + e^b + e^c)`` that is -inf (with zero gradient, not NaN) where all three
    are -inf: unreachable alignment states."""
    m = stack([a, b, c]).amax(dim=0).detach()
    m = m.where(~m.isinf(), 0)
    s = (a - m).exp() + (b - m).exp() + (c - m).exp()
    ok = s > 0
    return (s.where(ok, 1).log() + m).where(ok, -math.inf)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """CTC loss of ``log_probs`` ``(T, N, C)`` (or ``(T, C)``) against ``targets``
    (``(N, S)`` padded or the concatenated 1-D form); 'mean' divides each sample's loss by
    its target length, then averages, as torch's."""
    reduction_check(reduction)
    unbatched = log_probs.ndim == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    if lp.ndim != 3:
        raise ValueError(f"ctc_loss: log_probs must be (T, N, C) or (T, C), got shape "
                         f"{tuple(log_probs.shape)}")
    if unbatched and targets.ndim == 1:
        targets = targets.unsqueeze(0)
    out_dtype = lp.dtype
    if lp.dtype.itemsize < 8 and lp.device.supports_dtype(_float64()):
        lp = lp.to(_float64())  # T sequential log-sum-exps: accumulate in float64
    t_max, n, c = lp.shape
    if not 0 <= blank < c:
        raise ValueError(f"ctc_loss: blank must be in label range [0, {c}), got {blank}")
    in_len = _lengths(input_lengths, "input_lengths", n)
    tg_len = _lengths(target_lengths, "target_lengths", n)
    if any(x > t_max or x < 0 for x in in_len):
        raise ValueError(f"ctc_loss: input lengths must be in [0, {t_max}], got {in_len}")
    labels = _padded_targets(targets, tg_len)
    ext_len = 2 * labels.shape[1] + 1
    ext = np.full((n, ext_len), blank, np.int64)
    ext[:, 1::2] = labels
    # a state may skip the blank before it when its label differs from two states back
    skip = np.zeros((n, ext_len), bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    dev = lp.device
    ext_t, skip_t = _tensor(ext, device=dev), _tensor(skip, device=dev)
    neg = lp.new_full((n, 1), -math.inf)
    index = ext_t.unsqueeze(0).expand(t_max, n, ext_len)
    emit = lp.gather(2, index)                                   # (T, N, L)
    start = np.full((n, ext_len), False)
    start[:, 0] = True
    start[:, 1] = np.asarray(tg_len) > 0
    alpha = emit[0].where(_tensor(start, device=dev), -math.inf)
    for t in range(1, t_max):
        one = cat([neg, alpha[:, :-1]], 1)
        two = cat([neg, neg, alpha[:, :-2]], 1).where(skip_t, -math.inf)
        step = _logaddexp3(alpha, one, two) + emit[t]
        live = _tensor(np.asarray(in_len) > t, device=dev).unsqueeze(1)
        alpha = step.where(live, alpha)
    last = _tensor(2 * np.asarray(tg_len), device=dev).unsqueeze(1)
    end1 = alpha.gather(1, last)[:, 0]
    end2 = alpha.gather(1, (last - 1).clamp(min=0))[:, 0]
    end2 = end2.where(_tensor(np.asarray(tg_len) > 0, device=dev), -math.inf)
    loss = -_logaddexp3(end1, end2, end2.detach() * 0 - math.inf)
    loss = loss.where(_tensor(np.asarray(in_len) > 0, device=dev), math.inf)
    if zero_infinity:
        loss = loss.where(~loss.isinf(), 0)
    loss = loss.to(out_dtype)
    if unbatched:
        loss = loss[0]
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    denom = _tensor(np.maximum(np.asarray(tg_len), 1), dtype=loss.dtype, device=dev)
    return (loss / (denom[0] if unbatched else denom)).mean()
