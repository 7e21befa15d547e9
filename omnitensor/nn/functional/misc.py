"""``pad``, ``one_hot``, ``dropout`` (and 1d/2d), ``embedding``."""
from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np

from ...core import dtypes as _dt
from ...core import capture_hooks
from ...errors import ShapeError
from ...core.capture_hooks import composite
from ...core.device import same_device
from ...core.graph import needs_grad, no_grad_ctx, record
from ...core.ops.creation import arange, zeros
from ...core.ops.random import Generator, rand
from ...core.ops.join import pad_constant
from ...core.shape_util import int_arg
from ...core.sparse import make_coo
from ...core.tensor import Tensor
from ._utils import INDEX_CACHE

__all__ = ["pad", "one_hot", "dropout", "dropout1d", "dropout2d", "dropout3d", "embedding",
           "alpha_dropout", "feature_alpha_dropout", "channel_shuffle",
           "native_channel_shuffle"]


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",  # noqa: A002
        value: float | None = None) -> Tensor:
    """torch's ``F.pad``: ``pad = (last_before, last_after, prev_before, prev_after, ...)``.
    Modes: ``constant`` (negative values crop), ``reflect``, ``replicate``, ``circular``."""
    pad = [int_arg(v, "pad", "pad") for v in pad]
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(f"pad: expected an even number of values, at most 2 * ndim, got "
                         f"{len(pad)} for a {input.ndim}-d tensor")
    if mode == "constant":
        widths = [(0, 0)] * input.ndim
        for i in range(len(pad) // 2):
            widths[input.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
        return pad_constant(input, widths, 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"pad: mode {mode!r} is not supported (use 'constant', "
                                  f"'reflect', 'replicate' or 'circular')")
    out = input
    for i in range(len(pad) // 2):
        dim = input.ndim - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        if before == 0 and after == 0:
            continue
        n = out.shape[dim]
        key = ("pad", mode, n, before, after)
        idx = INDEX_CACHE.get(key, out.device,
                              functools.partial(_pad_index, mode, n, before, after))
        out = out.index_select(dim, idx)
    return out


def _pad_index(mode: str, n: int, before: int, after: int) -> np.ndarray:
    pos = np.arange(-before, n + after)
    if mode == "replicate":
        return np.clip(pos, 0, n - 1)
    if mode == "circular":
        # a negative width crops first; the padding then wraps around what is kept
        kept, start = n + min(before, 0) + min(after, 0), max(-before, 0)
        if before > kept or after > kept or kept <= 0:
            raise ValueError(f"pad: circular padding of {before}/{after} exceeds the size "
                             f"{kept} of the (cropped) dimension")
        return start + (np.arange(n + before + after) - max(before, 0)) % kept
    if before >= n or after >= n:
        raise ValueError(f"pad: reflect padding ({before}, {after}) must be smaller than the "
                         f"size {n} of the padded dimension")
    period = 2 * (n - 1) if n > 1 else 1
    r = np.abs(pos) % period
    return np.where(r >= n, period - r, r)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """``(...,) int -> (..., num_classes)`` int64 one-hot (``-1``: ``max + 1``)."""
    if tensor.dtype.kind not in "iu":
        raise TypeError(f"one_hot is only applicable to index tensors, got "
                        f"{tensor.dtype.name}")
    num_classes = int_arg(num_classes, "num_classes", "one_hot")
    if tensor.numel() == 0 and num_classes <= 0:
        raise ValueError("one_hot: can not infer the number of classes from an empty tensor "
                         f"(num_classes={num_classes}); give num_classes > 0")
    if num_classes == -1:
        num_classes = int(tensor.max().item()) + 1
    if tensor.numel() and (int(tensor.min().item()) < 0 or
                           int(tensor.max().item()) >= num_classes):
        raise ValueError(f"one_hot: class values must be in [0, {num_classes})")
    classes = arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).to(_dt.int64)


def _check_p(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_with_mask_shape(input: Tensor, p: float, shape: tuple,  # noqa: A002
                             inplace: bool, generator: Generator | None) -> Tensor:
    if p == 1.0:
        out = input * 0.0
    else:
        with no_grad_ctx():
            keep = rand(shape, dtype=input.dtype, device=input.device, generator=generator) >= p
            mask = keep.to(input.dtype) * (1.0 / (1.0 - p))
        out = input * mask
    return input.copy_(out) if inplace else out


@composite("dropout")
def dropout(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
            inplace: bool = False, *, generator: Generator | None = None) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``
    (identity when not training). ``generator`` (an omnitensor extension) makes masks
    reproducible independently of the global seed."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    return _dropout_with_mask_shape(input, p, tuple(input.shape), inplace, generator)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """Zero whole channels of ``(N, C, L)``."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    return _dropout_with_mask_shape(input, p, tuple(input.shape[:-1]) + (1,), inplace, None)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """Zero whole channels of ``(N, C, H, W)``."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    return _dropout_with_mask_shape(input, p, tuple(input.shape[:-2]) + (1, 1), inplace, None)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """Zero whole channels of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``)."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    if input.ndim not in (4, 5):
        raise ValueError(f"dropout3d: expected a 4-D or 5-D input, got {input.ndim}-D")
    return _dropout_with_mask_shape(input, p, tuple(input.shape[:-3]) + (1, 1, 1), inplace,
                                    None)


_SELU_ALPHA_PRIME = -1.7580993408473766  # -scale * alpha of SELU: where SELU saturates


def _alpha_dropout(input: Tensor, p: float, training: bool, inplace: bool,  # noqa: A002
                   feature: bool) -> Tensor:
    """Dropout that keeps SELU's zero mean and unit variance: dropped values become
    SELU's negative saturation, then ``a * x + b`` restores the moments (torch's
    formula); ``feature`` drops whole channels."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        out = input * 0.0
        return input.copy_(out) if inplace else out
    shape = tuple(input.shape) if not feature else \
        tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    with no_grad_ctx():
        keep = (rand(shape, dtype=input.dtype, device=input.device) >= p).to(input.dtype)
    a = ((1 - p) * (1 + p * _SELU_ALPHA_PRIME ** 2)) ** -0.5
    b = -a * _SELU_ALPHA_PRIME * p
    out = (input * keep + _SELU_ALPHA_PRIME * (1 - keep)) * a + b
    return input.copy_(out) if inplace else out


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,  # noqa: A002
                  inplace: bool = False) -> Tensor:
    return _alpha_dropout(input, p, training, inplace, False)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,  # noqa: A002
                          inplace: bool = False) -> Tensor:
    return _alpha_dropout(input, p, training, inplace, True)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002
    """Interleave the channels of ``groups`` groups: ``(N, g*k, ...) -> (N, k*g, ...)``."""
    c = input.shape[1]
    if groups <= 0 or c % groups:
        raise ValueError(f"channel_shuffle: the number of channels ({c}) must be divisible "
                         f"by groups ({groups})")
    n, rest = input.shape[0], tuple(input.shape[2:])
    return input.reshape((n, groups, c // groups) + rest).transpose(1, 2).reshape(
        (n, c) + rest)


native_channel_shuffle = channel_shuffle


@composite("embedding")
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,  # noqa: A002
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` at the integer ``input`` indices: ``(...) -> (..., dim)``. Rows
    at ``padding_idx`` get no gradient (torch). With ``sparse``, ``weight``'s gradient is a
    sparse COO tensor holding one row per looked-up index (torch's layout)."""
    if input.dtype.kind not in "iu":
        raise TypeError(f"embedding: indices must be an integer tensor, got "
                        f"{input.dtype.name}")
    if weight.ndim != 2:
        raise ShapeError(f"embedding: 'weight' must be 2-D (num_embeddings, embedding_dim), "
                         f"got shape {tuple(weight.shape)}")
    same_device("embedding", weight, input)
    num = weight.shape[0]
    if max_norm is not None:
        _renorm_rows_(weight, input.reshape(-1), float(max_norm), float(norm_type))
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise ValueError(f"padding_idx {padding_idx} is out of range for {num} embeddings")
        padding_idx %= num
    flat = input.reshape(-1)
    # torch refuses negative indices here (index_select alone would wrap -1 to the last row)
    if flat.numel() and not capture_hooks.check(
            ((flat >= 0) & (flat < num)).all(),
            f"embedding: an index is out of range for {num} embeddings", IndexError):
        bad = flat[(flat < 0) | (flat >= num)][0].item()
        raise IndexError(f"embedding: index {bad} is out of range for {num} embeddings "
                         f"(valid: 0 to {num - 1}; torch: index out of range in self)")
    with no_grad_ctx():
        out = weight.index_select(0, flat).reshape(*input.shape, weight.shape[1])
    if needs_grad(weight):
        node = record("EmbeddingBackward0", _embedding_backward, out, (weight,), (flat,),
                      num=num, padding_idx=padding_idx, sparse=sparse,
                      by_freq=scale_grad_by_freq)
        if sparse:  # a sparse gradient: no dense shape/dtype for the engine to fit it to
            node.input_meta = (None,)
    return out


def _renorm_rows_(weight: Tensor, index: Tensor, max_norm: float, norm_type: float) -> None:
    """torch's ``embedding_renorm_``: the rows of ``weight`` that ``index`` uses and whose
    ``norm_type``-norm exceeds ``max_norm`` are scaled, in place and outside autograd, to
    norm ``max_norm`` (times 1 / (1 + 1e-7) as torch)."""
    from ...core.ops.reduction import vector_norm
    from ...core.ops.sorting import unique_values
    with no_grad_ctx():
        rows = unique_values(index)
        sel = weight.index_select(0, rows)
        norms = vector_norm(sel, ord=norm_type, axis=1, keepdims=True)
        scale = (max_norm / (norms + 1e-7)).clamp(max=1.0)
        weight[rows] = sel * scale
        weight._bump_version()


def _embedding_backward(node: Any, g: Tensor) -> tuple:
    (flat,) = node.saved_tensors
    dim = g.shape[-1]
    g2 = g.reshape(-1, dim)
    if node.by_freq:  # each row's gradient divided by how often the batch looks it up
        from ...core.ops.torch_extras import bincount
        counts = bincount(flat, minlength=node.num).index_select(0, flat)
        g2 = g2 / counts.to(g2.dtype).unsqueeze(1)
    if node.sparse:
        if node.padding_idx is not None:  # torch leaves the padding rows out
            keep = flat != node.padding_idx
            flat, g2 = flat[keep], g2[keep]
        return (make_coo(flat.unsqueeze(0), g2, (node.num, dim)),)
    if node.padding_idx is not None:
        g2 = g2 * (flat != node.padding_idx).to(g2.dtype).unsqueeze(1)
    base = zeros((node.num, dim), dtype=g.dtype, device=g.device)
    index = flat.unsqueeze(1).expand(flat.shape[0], dim)
    return (base.scatter_add(0, index, g2),)
