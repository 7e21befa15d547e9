"""Loss functions: ``mse_loss``, ``l1_loss``, ``huber_loss``, ``smooth_l1_loss``,
``nll_loss``, ``cross_entropy``, ``binary_cross_entropy``,
``binary_cross_entropy_with_logits``, ``kl_div``.

``cross_entropy`` with class indices is one graph node (log-softmax, pick, weights,
ignore_index, label smoothing and the reduction fused): its backward is the closed form
``(softmax - target distribution) * scale``, written with Tensor ops on a softmax that is
recomputed differentiably inside a ``create_graph`` backward.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...core.autocast_state import autocast_operands, state as _autocast
from ...core import capture_hooks
from ...core.graph import needs_grad, no_grad_ctx, record
from ...core.ops.creation import full_like
from ...core.tensor import Tensor
from ...core.trusted import ops_for
from ._utils import INDEX_CACHE, differentiable_backward, reduce, reduction_check
from .activation import _softmax_data, log_softmax, softmax

__all__ = ["mse_loss", "l1_loss", "huber_loss", "smooth_l1_loss", "nll_loss",
           "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "kl_div"]


def _legacy(size_average: Any, reduce_: Any, reduction: str) -> str:
    if size_average is None and reduce_ is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce_ = True if reduce_ is None else reduce_
    return ("mean" if size_average else "sum") if reduce_ else "none"


def mse_loss(input: Tensor, target: Tensor, size_average: Any = None,  # noqa: A002
             reduce: Any = None, reduction: str = "mean", weight: Tensor | None = None
             ) -> Tensor:
    """Mean squared error ``(x - y)^2``."""
    if _autocast.active:
        input, target, weight = autocast_operands("mse_loss", input, target, weight)  # noqa: A001
    reduction = _legacy(size_average, reduce, reduction)
    reduction_check(reduction)
    d = input - target
    loss = d * d
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def l1_loss(input: Tensor, target: Tensor, size_average: Any = None,  # noqa: A002
            reduce: Any = None, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
    """Mean absolute error ``|x - y|``; with ``weight`` (input's shape) each error is
    weighted and ``"mean"`` divides by the sum of the weights (torch's rule)."""
    if _autocast.active:
        input, target = autocast_operands("l1_loss", input, target)  # noqa: A001
    reduction = _legacy(size_average, reduce, reduction)
    reduction_check(reduction)
    loss = (input - target).abs()
    if weight is None:
        return _reduce(loss, reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    return loss.sum() / weight.sum() if reduction == "mean" else _reduce(loss, reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",  # noqa: A002
               delta: float = 1.0, weight: Tensor | None = None) -> Tensor:
    """``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``."""
    if _autocast.active:
        input, target, weight = autocast_operands("huber_loss", input, target, weight)  # noqa: A001
    reduction_check(reduction)
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be positive, got {delta}")
    d = (input - target).abs()
    loss = (d * d * 0.5).where(d < delta, (d - 0.5 * delta) * delta)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None,  # noqa: A002
                   reduce: Any = None, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta``."""
    if _autocast.active:
        input, target = autocast_operands("smooth_l1_loss", input, target)  # noqa: A001
    reduction = _legacy(size_average, reduce, reduction)
    reduction_check(reduction)
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    loss = (d * d * (0.5 / beta)).where(d < beta, d - 0.5 * beta)
    return _reduce(loss, reduction)


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    return reduce(loss, reduction)


# ------------------------------------------------------------- classification
def _flatten_classes(input: Tensor, target: Tensor  # noqa: A002
                     ) -> tuple[Tensor, Tensor, tuple]:
    """(N, C, d1...) -> (N * d1..., C) with the target flattened alike; returns the
    per-element output shape for reduction='none'."""
    if input.ndim == 1:
        return input.unsqueeze(0), target.reshape(1), ()
    if input.ndim == 2:
        return input, target, (input.shape[0],)
    c = input.shape[1]
    moved = input.movedim(1, -1)
    return moved.reshape(-1, c), target.reshape(-1), tuple(target.shape)


def _check_target(input2: Tensor, target: Tensor, name: str) -> None:
    if target.dtype.kind not in "iu":
        raise TypeError(f"{name}: expected class indices of an integer dtype (or class "
                        f"probabilities of input's shape), got {target.dtype.name} target of "
                        f"shape {tuple(target.shape)}")


_TORCH_TYPE_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                     "uint8": "Byte", "bool": "Bool"}


def _check_target_shape(input: Tensor, target: Tensor) -> None:  # noqa: A002
    """torch's nll_loss_nd rules for class-index targets, with its messages: ``(C,)``
    takes a 0-d or 1-D target, ``(N, C)`` an ``(N,)`` one, ``(N, C, d1...)`` ``(N, d1...)``."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    tn = target.shape[0] if target.ndim else 0
    if input.ndim != 1 and input.shape[0] != tn:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({tn}).")
    if input.ndim == 1 and target.ndim == 1 and target.shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: "
                         f"{target.shape[0]}")
    if input.ndim <= 2:
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif input.ndim == 4:
        if target.ndim != 3:
            raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but "
                               f"got targets of dimension: {target.ndim}")
        if tuple(target.shape[1:]) != tuple(input.shape[2:]):
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: "
                               f"{list(target.shape)}")
    elif tuple(target.shape[1:]) != tuple(input.shape[2:]):
        want = [input.shape[0], *input.shape[2:]]
        raise RuntimeError(f"Expected target size {want}, got {list(target.shape)}")


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
             size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
             reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of log-probabilities ``input`` ``(N, C, ...)`` at class
    indices ``target`` ``(N, ...)``; ``mean`` divides by the summed weights of the
    non-ignored targets (torch)."""
    if _autocast.active:
        input, target, weight = autocast_operands("nll_loss", input, target, weight)  # noqa: A001
    reduction = _legacy(size_average, reduce, reduction)
    reduction_check(reduction)
    _check_target_shape(input, target)
    x2, t, out_shape = _flatten_classes(input, target)
    _check_target(x2, t, "nll_loss")
    valid = t != ignore_index
    t_safe = t.where(valid, 0)
    try:  # gather's single bounds check covers the targets
        picked = x2.gather(1, t_safe.unsqueeze(1)).squeeze(1)
    except IndexError:
        bad = next(v for v in t.tolist() if v != ignore_index and not 0 <= v < x2.shape[1])
        raise IndexError(f"Target {bad} is out of bounds.") from None
    wt = valid.to(x2.dtype) if weight is None else weight.index_select(0, t_safe) * valid
    loss = -(picked * wt)
    if reduction == "none":
        return loss.reshape(out_shape)
    if reduction == "sum":
        return loss.sum()
    # torch: every target ignored gives a NaN loss but zero gradients (a fully padded
    # batch must not poison the weights), so the division's gradient uses a safe 1
    total = wt.sum()
    empty = total == 0
    with no_grad_ctx():
        nan_if_empty = full_like(total, float("nan")).where(empty, 0.0)
    return loss.sum() / total.where(empty.logical_not(), 1.0) + nan_if_empty


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                  size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy of logits ``input`` ``(N, C, ...)`` (or ``(C,)``) with class indices
    ``target`` ``(N, ...)`` or class probabilities of input's shape, with torch's
    ``weight``, ``ignore_index``, ``label_smoothing`` and reductions."""
    if _autocast.active:
        input, target, weight = autocast_operands("cross_entropy", input, target, weight)  # noqa: A001
    reduction = _legacy(size_average, reduce, reduction)
    reduction_check(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0, got {label_smoothing}")
    if target.dtype.kind in "fc":
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing)
    if target.shape == input.shape:  # torch reads a target of input's shape as probabilities
        name = _TORCH_TYPE_NAMES.get(target.dtype.name, target.dtype.name)
        raise RuntimeError(f"Expected floating point type for target with class "
                           f"probabilities, got {name}")
    _check_target_shape(input, target)
    x2, t, out_shape = _flatten_classes(input, target)
    _check_target(x2, t, "cross_entropy")
    if weight is not None and tuple(weight.shape) != (x2.shape[1],):
        raise ValueError(f"cross_entropy: weight must have shape ({x2.shape[1]},), got "
                         f"{tuple(weight.shape)}")
    out = _cross_entropy_index(x2, t, weight, ignore_index, reduction, label_smoothing)
    return out.reshape(out_shape) if reduction == "none" else out


def _cross_entropy_probs(input: Tensor, target: Tensor, weight: Tensor | None,  # noqa: A002
                         reduction: str, eps: float) -> Tensor:
    if target.shape != input.shape:
        raise ValueError(f"cross_entropy: probability targets must have input's shape "
                         f"{tuple(input.shape)}, got {tuple(target.shape)}")
    cdim = 0 if input.ndim == 1 else 1
    c = input.shape[cdim]
    logp = log_softmax(input, cdim)
    if eps and c:  # (no classes: nothing to smooth)
        target = target * (1.0 - eps) + eps / c
    prod = logp * target
    if weight is not None:
        prod = prod * weight.reshape((c,) + (1,) * (input.ndim - cdim - 1))
    loss = -prod.sum(cdim)
    if reduction == "mean":
        # torch's mean over the batch elements: an empty batch gives 0 / 0 = nan
        return loss.sum() / (input.numel() // c if c else 0)
    return _reduce(loss, reduction)


def _class_range(c: int, device: Any) -> Tensor:
    return INDEX_CACHE.get(("classes", c), device, lambda: np.arange(c))


def _cross_entropy_index(x: Tensor, t: Tensor, weight: Tensor | None, ignore_index: int,
                         reduction: str, eps: float) -> Tensor:
    """The fused (M, C) logits + (M,) indices case, written once against an op namespace:
    the trusted ops (``core/trusted.py``) when logits and weights share one device and
    floating dtype and the targets are int64 on that device, else the checked Tensor ops.

    The target is picked with a one-hot mask (``t[:, None] == arange(C)``) rather than a
    gather: elementwise ops and a row sum are cheap everywhere (no gather kernel, no
    index bounds pass), and the same mask serves the backward."""
    c = x.shape[1]
    classes = _class_range(c, x.device)
    ops = ops_for(x, weight)
    if t._device is not x._device or t._dtype is not classes._dtype:
        ops = Tensor
    with no_grad_ctx():
        logp = _softmax_data(x, 1, True, ops)
        hit = ops.eq(ops.unsqueeze(t, 1), classes)               # ignored rows: all False
        valid = ops.ne(t, ignore_index)
        if 0 <= ignore_index < c:
            hit = ops.logical_and(hit, ops.unsqueeze(valid, 1))
        hitf = ops.to(hit, x.dtype)
        validf = ops.to(valid, x.dtype)
        n_targets = ops.sum(validf)
        # every non-ignored target must be a class index (torch raises too): one sync
        if not capture_hooks.check(ops.eq(ops.sum(hitf), n_targets),
                                   f"cross_entropy: a target is out of bounds for {c} classes",
                                   IndexError):
            bad = [v for v in t.tolist() if v != ignore_index and not 0 <= v < c]
            raise IndexError(f"cross_entropy: target {bad[0]} is out of bounds for {c} "
                             f"classes")
        picked = ops.sum(ops.mul(logp, hitf), 1)                 # logp[i, t_i], 0 if ignored
        if weight is None:
            wt = validf
        else:
            wt = ops.sum(ops.mul(hitf, weight), 1)               # weight[t_i], 0 if ignored
            picked = ops.mul(picked, wt)
        loss = ops.neg(picked)
        if eps:
            full = logp if weight is None else ops.mul(logp, weight)
            smooth = ops.mul(ops.sum(full, 1), validf)
            loss = ops.sub(ops.mul(loss, 1.0 - eps), ops.mul(smooth, eps / c))
        scale = None
        if reduction == "mean":
            denom = n_targets if weight is None else ops.sum(wt)
            out = ops.div(ops.sum(loss), denom)
            # every target ignored: a NaN loss (torch) but a zero gradient, not NaN (a
            # count of targets is 0 or >= 1; a sum of weights may lie in between)
            scale = ops.maximum(denom, 1.0) if weight is None else \
                ops.add(denom, ops.to(ops.eq(denom, 0), x.dtype))
        elif reduction == "sum":
            out = ops.sum(loss)
        else:
            out = loss
    if needs_grad(x):
        record("NllLossBackward0", _cross_entropy_backward, out, (x,), (x,), logp=logp,
               hitf=hitf, validf=validf, wt=wt, weight=weight, eps=eps, reduction=reduction,
               scale=scale)
    return out


def _cross_entropy_backward(node: Any, g: Tensor) -> tuple:
    """``(softmax - target distribution) * weights * upstream / denominator``."""
    (x,) = node.saved_tensors
    c = x.shape[1]
    if differentiable_backward():
        # inside a create_graph backward the softmax must be a function of x in the graph
        ops = Tensor
        p = softmax(x, 1)
    else:
        ops = ops_for(x, g, node.weight)
        p = ops.exp(node.logp)
    grad = ops.mul(ops.sub(p, node.hitf), ops.unsqueeze(node.wt, 1))
    eps = node.eps
    if eps:
        valid = ops.unsqueeze(node.validf, 1)
        if node.weight is None:
            smooth = ops.mul(ops.sub(ops.mul(p, c), 1.0), valid)
        else:
            w = node.weight
            smooth = ops.mul(ops.sub(ops.mul(p, ops.sum(w)), w), valid)
        grad = ops.add(ops.mul(grad, 1.0 - eps), ops.mul(smooth, eps / c))
    if node.reduction == "mean":
        return (ops.mul(grad, ops.div(g, node.scale)),)
    return (ops.mul(grad, g if node.reduction == "sum" else ops.unsqueeze(g, 1)),)


def binary_cross_entropy(input: Tensor, target: Tensor,  # noqa: A002
                         weight: Tensor | None = None, size_average: Any = None,
                         reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``-(y log x + (1 - y) log(1 - x))`` for probabilities ``x``; logs are clamped at
    -100 as in torch, so ``x`` of exactly 0 or 1 gives a finite loss."""
    if _autocast.active:
        input, target, weight = autocast_operands("binary_cross_entropy", input, target, weight)  # noqa: A001
    reduction = _legacy(size_average, reduce, reduction)
    reduction_check(reduction)
    if target.shape != input.shape:
        raise ValueError(f"binary_cross_entropy: target size {tuple(target.shape)} must be "
                         f"the same as input size {tuple(input.shape)}")
    with no_grad_ctx():
        log_x = input.log().clamp(min=-100.0)
        log_1mx = (1.0 - input).log().clamp(min=-100.0)
        loss = -(target * log_x + (1.0 - target) * log_1mx)
    if needs_grad(input, target):
        record("BinaryCrossEntropyBackward0", _bce_backward, loss, (input, target),
               (input, target))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _bce_backward(node: Any, g: Tensor) -> tuple:
    """torch's closed forms: ``(x - y) / max(x (1 - x), 1e-12)`` for the input, finite
    where the clamped logs have a zero derivative (x of exactly 0 or 1), and
    ``log(1 - x) - log(x)`` (clamped as in the forward) for the target."""
    x, y = node.saved_tensors
    gx = gy = None
    if node.needs_input_grad[0]:
        gx = g * (x - y) / (x * (1.0 - x)).clamp(min=1e-12)
    if node.needs_input_grad[1]:  # recomputed from x: differentiable under create_graph
        gy = g * ((1.0 - x).log().clamp(min=-100.0) - x.log().clamp(min=-100.0))
    return gx, gy


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,  # noqa: A002
                                     weight: Tensor | None = None, size_average: Any = None,
                                     reduce: Any = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Sigmoid + binary cross entropy in one stable formula:
    ``(1 - y) x + (1 + (pos_weight - 1) y) (log(1 + exp(-|x|)) + max(-x, 0))``."""
    if _autocast.active:
        input, target, weight, pos_weight = autocast_operands("binary_cross_entropy_with_logits", input, target, weight, pos_weight)  # noqa: A001
    reduction = _legacy(size_average, reduce, reduction)
    reduction_check(reduction)
    if target.shape != input.shape:
        raise ValueError(f"binary_cross_entropy_with_logits: target size "
                         f"{tuple(target.shape)} must be the same as input size "
                         f"{tuple(input.shape)}")
    softplus_neg = (-input.abs()).exp().log1p() + (-input).clamp(min=0)  # log(1 + e^-x)
    if pos_weight is not None:
        loss = (1.0 - target) * input + ((pos_weight - 1.0) * target + 1.0) * softplus_neg
    else:
        loss = (1.0 - target) * input + softplus_neg
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div(input: Tensor, target: Tensor, size_average: Any = None,  # noqa: A002
           reduce: Any = None, reduction: str = "mean", log_target: bool = False) -> Tensor:
    """KL divergence with ``input`` log-probabilities; ``reduction='batchmean'`` divides
    the sum by the batch size (the mathematically correct mean)."""
    if _autocast.active:
        input, target = autocast_operands("kl_div", input, target)  # noqa: A001
    reduction = _legacy(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = target.xlogy(target) - target * input
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction)
