"""Margin, embedding and likelihood losses: ``margin_ranking_loss``,
``hinge_embedding_loss``, ``soft_margin_loss``, ``multilabel_soft_margin_loss``,
``cosine_embedding_loss``, ``multi_margin_loss``, ``multilabel_margin_loss``,
``triplet_margin_loss``, ``triplet_margin_with_distance_loss``, ``poisson_nll_loss``,
``gaussian_nll_loss``. Each is torch's formula written with Tensor ops (every device,
gradients from autograd); the legacy ``size_average``/``reduce`` arguments map as torch's.
"""
from __future__ import annotations

import math
from typing import Any, Callable

from ...core.graph import no_grad_ctx
from ...core.tensor import Tensor
from ._utils import reduce as _reduce_by, reduction_check
from .activation import logsigmoid
from .distance import pairwise_distance

__all__ = ["margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
           "multilabel_soft_margin_loss", "cosine_embedding_loss", "multi_margin_loss",
           "multilabel_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
           "poisson_nll_loss", "gaussian_nll_loss"]


def _reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        avg = True if size_average is None else size_average
        red = True if reduce is None else reduce
        reduction = ("mean" if avg else "sum") if red else "none"
    reduction_check(reduction)
    return reduction


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -y (x1 - x2) + margin)``."""
    r = _reduction(size_average, reduce, reduction)
    return _reduce_by((-target * (input1 - input2) + margin).clamp(min=0), r)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,  # noqa: A002
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """``x`` where ``y == 1``, ``max(0, margin - x)`` where ``y == -1``."""
    r = _reduction(size_average, reduce, reduction)
    zeros = input * 0
    out_margin = (margin - input).clamp(min=0).where(target != 1, zeros)
    out_self = input.where(target != -1, zeros)
    return _reduce_by(out_margin + out_self, r)


def soft_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,  # noqa: A002
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-y x))``."""
    r = _reduction(size_average, reduce, reduction)
    return _reduce_by(-logsigmoid(target * input), r)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor,  # noqa: A002
                                weight: Tensor | None = None, size_average: Any = None,
                                reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Per sample, the mean over classes of the binary logistic losses."""
    r = _reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(dim=-1) / input.shape[-1] if input.ndim else loss
    return _reduce_by(loss, r)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor,
                          margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                          reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``y == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``y == -1``."""
    r = _reduction(size_average, reduce, reduction)
    eps = 1e-12
    dim = input1.ndim - 1
    prod = (input1 * input2).sum(dim=dim)
    mag = (((input1 * input1).sum(dim=dim) + eps) * ((input2 * input2).sum(dim=dim) + eps))
    cos = prod / mag.sqrt()
    zeros = cos * 0
    pos = (1 - cos).where(target == 1, zeros)
    neg = (cos - margin).clamp(min=0).where(target == -1, zeros)
    return _reduce_by(pos + neg, r)


def _class_of(input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:  # noqa: A002
    """(input as (N, C), target as (N,)) for the multi-class margin losses."""
    x = input.reshape(1, -1) if input.ndim < 2 else input
    return x, target.reshape(-1)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1,  # noqa: A002
                      margin: float = 1.0, weight: Tensor | None = None,
                      size_average: Any = None, reduce: Any = None,
                      reduction: str = "mean") -> Tensor:
    """Per sample, ``sum over i != y of max(0, margin - x[y] + x[i])^p / C`` (each term
    scaled by ``weight[y]``)."""
    if p not in (1, 2):
        raise ValueError(f"multi_margin_loss: only p == 1 and p == 2 are supported, got {p}")
    r = _reduction(size_average, reduce, reduction)
    x, t = _class_of(input, target)
    c = x.shape[-1]
    picked = x.gather(1, t.unsqueeze(1))
    terms = (margin - picked + x).clamp(min=0)
    if p == 2:
        terms = terms * terms
    if weight is not None:
        terms = terms * weight.index_select(0, t).unsqueeze(1)
    from ...core.ops.creation import arange
    not_target = arange(c, device=x.device).unsqueeze(0) != t.unsqueeze(1)
    loss = (terms * not_target).sum(dim=1) / c
    if input.ndim < 2:
        loss = loss.reshape(())
    return _reduce_by(loss, r)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,  # noqa: A002
                           reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Per sample, ``sum over target classes j and other classes i of
    max(0, 1 - (x[j] - x[i])) / C``; a sample's targets are its leading indices up to the
    first -1."""
    r = _reduction(size_average, reduce, reduction)
    shape = list(input.shape)
    if input.ndim > 2 or (input.ndim > 0 and input.shape[-1] == 0):
        raise RuntimeError(f"multilabel_margin_loss: Expected non-empty vector or matrix with "
                           f"optional 0-dim batch size, but got: {shape}")
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"multilabel_margin_loss: inconsistent target size: "
                           f"{list(target.shape)} for input of size: {shape}")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    t = target.reshape(1, -1) if target.ndim < 2 else target
    c = x.shape[-1]
    valid = (t != -1).long().cumprod(dim=1).bool()           # the run before the first -1
    safe_t = t.where(valid, 0)
    is_target = (x * 0).bool().scatter(1, safe_t, valid)       # (N, C)
    xj = x.gather(1, safe_t)                                  # (N, C) target scores
    hinge = (1 - (xj.unsqueeze(2) - x.unsqueeze(1))).clamp(min=0)   # (N, j, i)
    mask = valid.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = (hinge * mask).sum(dim=(1, 2)) / c
    if input.ndim < 2:
        loss = loss.reshape(())
    return _reduce_by(loss, r)


def _positive_margin(margin: float) -> None:
    """The triplet losses' rule (torch's message)."""
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable[..., Tensor] | None = None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)``; ``swap`` uses ``min(d(a, n), d(p, n))``."""
    reduction_check(reduction)
    _positive_margin(margin)
    dist = pairwise_distance if distance_function is None else distance_function
    d_ap, d_an = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_an = d_an.minimum(dist(positive, negative))
    return _reduce_by((d_ap - d_an + margin).clamp(min=0), reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """:func:`triplet_margin_with_distance_loss` with the ``p``-norm distance."""
    r = _reduction(size_average, reduce, reduction)
    _positive_margin(margin)
    d_ap = pairwise_distance(anchor, positive, p, eps)
    d_an = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_an = d_an.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce_by((d_ap - d_an + margin).clamp(min=0), r)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True,  # noqa: A002
                     full: bool = False, size_average: Any = None, eps: float = 1e-8,
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``exp(x) - y x`` (``log_input``) or ``x - y log(x + eps)``; ``full`` adds
    Stirling's ``y log y - y + log(2 pi y) / 2`` where ``y > 1``."""
    r = _reduction(size_average, reduce, reduction)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        y = target
        stirling = y * y.log() - y + 0.5 * (2 * math.pi * y).log()
        # masked, not multiplied by 0: where y <= 1 the term is inf/nan (log 0, log of a
        # negative) and must not reach the loss (torch's masked_fill)
        loss = loss + stirling.masked_fill(y <= 1, 0)
    return _reduce_by(loss, r)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float,  # noqa: A002
                      full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """``(log(max(var, eps)) + (x - y)^2 / max(var, eps)) / 2`` (+ ``log(2 pi) / 2`` with
    ``full``); ``var`` may lack the last dim or have size 1 there (homoscedastic)."""
    reduction_check(reduction)
    if not isinstance(var, Tensor):
        var = input.new_full((), float(var))
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1) \
                and var.ndim != 0:
            raise ValueError("gaussian_nll_loss: var is of incorrect size")
    with no_grad_ctx():
        if bool((var < 0).any().item()):
            raise ValueError("gaussian_nll_loss: var has negative entry/entries")
    v = var.clone()
    with no_grad_ctx():
        v.clamp_(min=eps)
    loss = 0.5 * (v.log() + (input - target) ** 2 / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce_by(loss, reduction)
