"""Convolutions of any spatial rank by im2col: ``conv1d/2d/3d``,
``conv_transpose1d/2d/3d``, ``unfold``/``fold``.

One formula serves every rank and every backend: the kernel windows of ``_windows.py``
(Tensor ops), one batched matmul with the weight, a bias add. ``im2col``/``col2im`` are
graph nodes whose backward is the other, so everything built on them has higher-order
gradients. ``convolution`` is one graph node whose explicit backward reuses the forward's
windows (first order) or rebuilds them through the ``im2col`` node (``create_graph``).
A transposed convolution is the adjoint: weight-transpose matmul, then ``col2im``.
Arguments are checked once, in ``_windows.py``, before any backend is reached.
"""
from __future__ import annotations

import math
from typing import Any

from ...core.autocast_state import autocast_operands, state as _autocast
from ...core.capture_hooks import composite
from ...core.dtypes import scalar_type_name
from ...core.graph import needs_grad, no_grad_ctx, record
from ...core.tensor import Tensor
from ...core.trusted import ops_for
from ._utils import differentiable_backward, pair
from ._windows import (Ints, conv_geometry, conv_transpose_geometry, fresh, out_size,
                       windows, windows_adjoint)

__all__ = ["unfold", "fold", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
           "conv_transpose2d", "conv_transpose3d"]


def im2col(x: Tensor, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints,
           out: Ints, pad_value: float = 0.0) -> Tensor:
    """:func:`windows` ``(N, C, *S) -> (N, C, K, *out)`` as a graph node (its backward
    is :func:`col2im`)."""
    cols = windows(x, kernel, stride, padding, dilation, out, pad_value)
    if needs_grad(x):
        record("Im2ColBackward0", _im2col_backward, cols, (x,), size=tuple(x.shape[2:]),
               k=kernel, s=stride, p=padding, d=dilation)
    return cols


def _im2col_backward(node: Any, g: Tensor) -> tuple:
    return (col2im(g, node.size, node.k, node.s, node.p, node.d),)


def col2im(cols: Tensor, size: Ints, kernel: Ints, stride: Ints, padding: Ints,
           dilation: Ints) -> Tensor:
    """:func:`windows_adjoint` ``(N, C, K, *out) -> (N, C, *size)`` as a graph node (its
    backward is :func:`im2col`)."""
    out = windows_adjoint(cols, size, kernel, stride, padding, dilation)
    if needs_grad(cols):
        record("Col2ImBackward0", _col2im_backward, out, (cols,), k=kernel, s=stride,
               p=padding, d=dilation, out=tuple(cols.shape[3:]))
    return out


def _col2im_backward(node: Any, g: Tensor) -> tuple:
    return (im2col(g, node.k, node.s, node.p, node.d, node.out),)


# ------------------------------------------------------------------ convolution
def _bias_shape(o: int, nd: int) -> tuple[int, ...]:
    return (o,) + (1,) * nd


def _same_dtype(input: Tensor, weight: Tensor, bias: Tensor | None) -> None:  # noqa: A002
    """torch's rule: a convolution's input, weight and bias share one dtype (no promotion),
    with its messages."""
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(input.dtype)} but found "
                           f"{scalar_type_name(weight.dtype)} (the conv weight's dtype must be "
                           f"the input's: cast one with .to(dtype))")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({input.dtype.name}) and bias type "
                           f"({bias.dtype.name}) should be the same")


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any,  # noqa: A002
                padding: Any, dilation: Any, groups: int, nd: int, op: str) -> Tensor:
    """N-d cross-correlation (torch's convolution) of ``(N, C, *S)`` or unbatched
    ``(C, *S)`` with ``weight`` ``(O, C // groups, *k)``."""
    if _autocast.active:
        input, weight, bias = autocast_operands(op, input, weight, bias)  # noqa: A001
    _same_dtype(input, weight, bias)
    unbatched, s, p, d, out = conv_geometry(op, nd, input, weight, bias, stride, padding,
                                            dilation, groups)
    x = input.unsqueeze(0) if unbatched else input
    o, cg = weight.shape[:2]
    k = tuple(weight.shape[2:])
    n = x.shape[0]
    ckk, length = cg * math.prod(k), math.prod(out)
    # operands checked above: the trusted path when they share one device and dtype
    ops = ops_for(x, weight, bias)
    with no_grad_ctx():
        cols = ops.reshape(windows(x, k, s, p, d, out), (n, groups, ckk, length))
        y = ops.reshape(ops.matmul(ops.reshape(weight, (groups, o // groups, ckk)), cols),
                        (n, o) + out)
        # the node's output must own its storage (not a view of the matmul result): the
        # bias add makes a new tensor, else a copy
        if bias is not None:
            y = ops.add(y, ops.reshape(bias, _bias_shape(o, nd)))
        else:
            y = fresh(y)
    if needs_grad(x, weight, bias):
        record("ConvolutionBackward0", _conv_backward, y, (x, weight, bias), (x, weight),
               cols=cols, k=k, s=s, p=p, d=d, groups=groups, size=tuple(x.shape[2:]))
    return y.squeeze(0) if unbatched else y


def _conv_backward(node: Any, g: Tensor) -> tuple:
    # the formulas are Tensor ops: under create_graph they build a differentiable graph
    # (the windows then come from the im2col node, connected to x); otherwise the
    # trusted path runs them (one device and dtype, checked in forward)
    x, w = node.saved_tensors
    need_x, need_w, need_b = node.needs_input_grad
    create = differentiable_backward()
    ops = Tensor if create else ops_for(g, w)
    n, o = g.shape[:2]
    out = tuple(g.shape[2:])
    groups, k = node.groups, node.k
    cg = w.shape[1]
    ckk, og, length = cg * math.prod(k), o // groups, math.prod(out)
    g3 = ops.reshape(g, (n, groups, og, length))
    gx = gw = gb = None
    if need_x:
        gcols = ops.matmul(ops.permute(ops.reshape(w, (groups, og, ckk)), (0, 2, 1)), g3)
        gx = col2im(ops.reshape(gcols, (n, groups * cg, math.prod(k)) + out), node.size,
                    k, node.s, node.p, node.d)
    if need_w:
        cols = node.cols
        if create:
            cols = ops.reshape(im2col(x, k, node.s, node.p, node.d, out),
                               (n, groups, ckk, length))
        gw = ops.reshape(ops.sum(ops.matmul(g3, ops.permute(cols, (0, 1, 3, 2))), 0),
                         tuple(w.shape))
    if need_b:
        gb = ops.sum(g, (0,) + tuple(range(2, g.ndim)))
    return gx, gw, gb


@composite("conv1d")
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-D convolution of ``(N, C, L)`` (or ``(C, L)``) with ``weight`` ``(O, C // groups,
    k)``; ``padding`` ints, ``'valid'`` or ``'same'``."""
    return convolution(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


@composite("conv2d")
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D convolution of ``(N, C, H, W)`` (or ``(C, H, W)``) with ``weight``
    ``(O, C // groups, kh, kw)``."""
    return convolution(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


@composite("conv3d")
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-D convolution of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) with ``weight``
    ``(O, C // groups, kd, kh, kw)``."""
    return convolution(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


# -------------------------------------------------------- transposed convolution
def conv_transpose(input: Tensor, weight: Tensor, bias: Tensor | None,  # noqa: A002
                   stride: Any, padding: Any, output_padding: Any, groups: int,
                   dilation: Any, nd: int, op: str) -> Tensor:
    """N-d transposed convolution (the gradient of :func:`convolution` with respect to its
    input): ``weight`` is ``(C_in, C_out // groups, *k)``. A composite of differentiable
    ops (matmul, the ``col2im`` node, a bias add)."""
    if _autocast.active:
        input, weight, bias = autocast_operands(op, input, weight, bias)  # noqa: A001
    _same_dtype(input, weight, bias)
    unbatched, s, p, d, out = conv_transpose_geometry(op, nd, input, weight, bias, stride,
                                                      padding, output_padding, groups,
                                                      dilation)
    x = input.unsqueeze(0) if unbatched else input
    n, cin = x.shape[:2]
    cog = weight.shape[1]
    k = tuple(weight.shape[2:])
    size = tuple(x.shape[2:])
    kk, cig = math.prod(k), cin // groups
    cols = weight.reshape(groups, cig, cog * kk).mT @ x.reshape(n, groups, cig,
                                                                 math.prod(size))
    y = col2im(cols.reshape((n, groups * cog, kk) + size), out, k, s, p, d)
    if bias is not None:
        y = y + bias.reshape(_bias_shape(groups * cog, nd))
    return y.squeeze(0) if unbatched else y


@composite("conv_transpose1d")
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """Transposed 1-D convolution; ``weight`` ``(C_in, C_out // groups, k)``."""
    return conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                          dilation, 1, "conv_transpose1d")


@composite("conv_transpose2d")
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """Transposed 2-D convolution; ``weight`` ``(C_in, C_out // groups, kh, kw)``."""
    return conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                          dilation, 2, "conv_transpose2d")


@composite("conv_transpose3d")
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """Transposed 3-D convolution; ``weight`` ``(C_in, C_out // groups, kd, kh, kw)``."""
    return conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                          dilation, 3, "conv_transpose3d")


# ------------------------------------------------------------------ unfold/fold
def _fold_args(op: str, kernel_size: Any, dilation: Any, padding: Any, stride: Any
               ) -> tuple[Ints, Ints, Ints, Ints]:
    k, d = pair(kernel_size, "kernel_size"), pair(dilation, "dilation")
    p, s = pair(padding, "padding"), pair(stride, "stride")
    if min(k) <= 0 or min(d) <= 0 or min(s) <= 0 or min(p) < 0:
        raise ValueError(f"{op}: kernel_size, dilation and stride must be positive and "
                         f"padding non-negative, got kernel_size={k}, dilation={d}, "
                         f"padding={p}, stride={s}")
    return k, d, p, s


def _fold_out(op: str, size: Ints, k: Ints, s: Ints, p: Ints, d: Ints) -> Ints:
    out = tuple(out_size(n, kk, ss, pp, dd) for n, kk, ss, pp, dd in zip(size, k, s, p, d))
    if min(out) <= 0:
        raise ValueError(f"{op}: kernel_size {k} (dilation {d}) does not fit the padded "
                         f"input {tuple(n + 2 * pp for n, pp in zip(size, p))}")
    return out


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,  # noqa: A002
           stride: Any = 1) -> Tensor:
    """Extract sliding windows (im2col): ``(N, C, H, W) -> (N, C * kh * kw, L)`` with
    torch's ordering (channel, then kernel row, then kernel column)."""
    if input.ndim not in (3, 4):
        raise ValueError(f"unfold: expected a 3-D or 4-D input, got shape {tuple(input.shape)}")
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    k, d, p, s = _fold_args("unfold", kernel_size, dilation, padding, stride)
    n, c = x.shape[:2]
    out = _fold_out("unfold", tuple(x.shape[2:]), k, s, p, d)
    cols = im2col(x, k, s, p, d, out).reshape(n, c * k[0] * k[1], out[0] * out[1])
    return cols.squeeze(0) if unbatched else cols


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1,  # noqa: A002
         padding: Any = 0, stride: Any = 1) -> Tensor:
    """Sum sliding windows back into an image (col2im), the adjoint of :func:`unfold`:
    ``(N, C * kh * kw, L) -> (N, C, H, W)``."""
    if input.ndim not in (2, 3):
        raise ValueError(f"fold: expected a 2-D or 3-D input, got shape {tuple(input.shape)}")
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    k, d, p, s = _fold_args("fold", kernel_size, dilation, padding, stride)
    size = pair(output_size, "output_size")
    out = _fold_out("fold", size, k, s, p, d)
    n, ck, length = x.shape
    kk = k[0] * k[1]
    if ck % kk or length != out[0] * out[1]:
        raise ValueError(f"fold: input of shape {tuple(input.shape)} does not match "
                         f"kernel_size {k} and output_size {size} (expected C * {kk} "
                         f"rows and {out[0] * out[1]} blocks)")
    y = col2im(x.reshape(n, ck // kk, kk, out[0], out[1]), size, k, s, p, d)
    return y.squeeze(0) if unbatched else y
