"""Convolutions by im2col: ``unfold``/``fold``, ``conv1d``, ``conv2d``,
``conv_transpose1d``, ``conv_transpose2d``.

The kernel windows come from ``kh * kw`` strided views and one concat (``_windows.py``) —
primitives every backend has — or, for non-overlapping windows (pooling), from a single
reshape/permute. ``col2im`` is their adjoint (strided in-place adds into a zero buffer).
``im2col``/``col2im`` are graph nodes whose backward is the other, so everything built on
them has higher-order gradients.

``conv2d`` is one graph node: im2col, one batched matmul, a bias add (on backend arrays
when input, weight and bias share a device and dtype). Backends may provide native kernels,
used when present (``getattr(backend, name, None)``), on backend arrays:

* ``backend.conv2d(x, w, b, stride, padding, dilation, groups) -> y`` with ``x`` of shape
  ``(N, C, H, W)``, ``w`` ``(O, C // groups, kh, kw)``, ``b`` ``(O,)`` or None, the
  others tuples of two ints (``groups`` an int), ``y`` ``(N, O, OH, OW)``;
* ``backend.conv2d_backward(g, x, w, stride, padding, dilation, groups, needs) ->
  (gx, gw, gb)`` for ``needs`` a triple of bools (None where not needed). Without it the
  backward uses the composite formulas below, which work with any forward.
"""
from __future__ import annotations

from typing import Any

from ...core.graph import needs_grad, no_grad_ctx, record
from ...core.tensor import Tensor
from . import _fast
from ._utils import differentiable_backward, native, ntuple, pair, wrap
from ._windows import windows, windows_adjoint

__all__ = ["unfold", "fold", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d"]

Pair = tuple[int, int]


def out_size(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool = False) -> int:
    """Output length of a window op along one axis (torch's formula, with ceil_mode's
    rule that the last window must start inside the input or its left padding)."""
    eff = d * (k - 1) + 1
    span = n + 2 * p - eff
    if span < 0:
        raise ValueError(f"kernel size {k} (dilation {d}) is larger than the padded input "
                         f"size {n + 2 * p}")
    o = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= n + p:
        o -= 1
    return o


def im2col(x: Tensor, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair,
           out_hw: Pair, pad_value: float = 0.0) -> Tensor:
    """:func:`windows` as a graph node (its backward is :func:`col2im`)."""
    with no_grad_ctx():
        out = windows(x, kernel, stride, padding, dilation, out_hw, pad_value)
    if needs_grad(x):
        record("Im2ColBackward0", _im2col_backward, out, (x,), hw=tuple(x.shape[2:]),
               k=kernel, s=stride, p=padding, d=dilation)
    return out


def _im2col_backward(node: Any, g: Tensor) -> tuple:
    return (col2im(g, node.hw, node.k, node.s, node.p, node.d),)


def col2im(cols: Tensor, hw: Pair, kernel: Pair, stride: Pair, padding: Pair,
           dilation: Pair) -> Tensor:
    """:func:`windows_adjoint` as a graph node (its backward is :func:`im2col`)."""
    with no_grad_ctx():
        out = windows_adjoint(cols, hw, kernel, stride, padding, dilation)
    if needs_grad(cols):
        record("Col2ImBackward0", _col2im_backward, out, (cols,), k=kernel, s=stride,
               p=padding, d=dilation, ohw=tuple(cols.shape[3:]))
    return out


def _col2im_backward(node: Any, g: Tensor) -> tuple:
    return (im2col(g, node.k, node.s, node.p, node.d, node.ohw),)


def _window_args(kernel_size: Any, dilation: Any, padding: Any, stride: Any
                 ) -> tuple[Pair, Pair, Pair, Pair]:
    return (pair(kernel_size, "kernel_size"), pair(dilation, "dilation"),
            pair(padding, "padding"), pair(stride, "stride"))


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,  # noqa: A002
           stride: Any = 1) -> Tensor:
    """Extract sliding windows (im2col): ``(N, C, H, W) -> (N, C * kh * kw, L)`` with
    torch's ordering (channel, then kernel row, then kernel column)."""
    if input.ndim not in (3, 4):
        raise ValueError(f"unfold: expected a 3-D or 4-D input, got shape {tuple(input.shape)}")
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    k, d, p, s = _window_args(kernel_size, dilation, padding, stride)
    n, c, h, w = x.shape
    ohw = (out_size(h, k[0], s[0], p[0], d[0]), out_size(w, k[1], s[1], p[1], d[1]))
    cols = im2col(x, k, s, p, d, ohw).reshape(n, c * k[0] * k[1], ohw[0] * ohw[1])
    return cols.squeeze(0) if unbatched else cols


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1,  # noqa: A002
         padding: Any = 0, stride: Any = 1) -> Tensor:
    """Sum sliding windows back into an image (col2im), the adjoint of :func:`unfold`:
    ``(N, C * kh * kw, L) -> (N, C, H, W)``."""
    if input.ndim not in (2, 3):
        raise ValueError(f"fold: expected a 2-D or 3-D input, got shape {tuple(input.shape)}")
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    k, d, p, s = _window_args(kernel_size, dilation, padding, stride)
    h, w = pair(output_size, "output_size")
    ohw = (out_size(h, k[0], s[0], p[0], d[0]), out_size(w, k[1], s[1], p[1], d[1]))
    n, ck, length = x.shape
    kk = k[0] * k[1]
    if ck % kk or length != ohw[0] * ohw[1]:
        raise ValueError(f"fold: input of shape {tuple(input.shape)} does not match "
                         f"kernel_size {k} and output_size {(h, w)} (expected C * {kk} "
                         f"rows and {ohw[0] * ohw[1]} blocks)")
    out = col2im(x.reshape(n, ck // kk, kk, ohw[0], ohw[1]), (h, w), k, s, p, d)
    return out.squeeze(0) if unbatched else out


# ----------------------------------------------------------------------- conv2d
def _conv_padding(x: Tensor, padding: Any, kernel: Pair, dilation: Pair, stride: Pair,
                  name: str) -> tuple[Tensor, Pair]:
    """Resolve 'valid'/'same'; asymmetric 'same' padding is applied to ``x`` here."""
    if isinstance(padding, str):
        if padding == "valid":
            return x, (0, 0)
        if padding != "same":
            raise ValueError(f"{name}: padding must be 'valid', 'same' or ints, got "
                             f"{padding!r}")
        if stride != (1, 1):
            raise ValueError(f"{name}: padding='same' is not supported for strided "
                             f"convolutions")
        total = [d * (k - 1) for d, k in zip(dilation, kernel)]
        left = [t // 2 for t in total]
        if all(t % 2 == 0 for t in total):
            return x, (left[0], left[1])
        from .misc import pad
        x = pad(x, (left[1], total[1] - left[1], left[0], total[0] - left[0]))
        return x, (0, 0)
    return x, pair(padding, "padding")


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D convolution (cross-correlation, as torch) of ``(N, C, H, W)`` (or unbatched
    ``(C, H, W)``) with ``weight`` ``(O, C // groups, kh, kw)``."""
    unbatched = input.ndim == 3
    if input.ndim not in (3, 4) or weight.ndim != 4:
        raise ValueError(f"conv2d: expected a 3-D or 4-D input and a 4-D weight, got "
                         f"{tuple(input.shape)} and {tuple(weight.shape)}")
    x = input.unsqueeze(0) if unbatched else input
    o, cg, kh, kw = weight.shape
    if x.shape[1] != cg * groups or o % groups:
        raise ValueError(f"conv2d: input with {x.shape[1]} channels does not match weight "
                         f"{tuple(weight.shape)} with groups={groups} (expected "
                         f"{cg * groups} channels; out_channels divisible by groups)")
    if bias is not None and tuple(bias.shape) != (o,):
        raise ValueError(f"conv2d: bias must have shape ({o},), got {tuple(bias.shape)}")
    k, s, d = (kh, kw), pair(stride, "stride"), pair(dilation, "dilation")
    x, p = _conv_padding(x, padding, k, d, s, "conv2d")
    n, c, h, w = x.shape
    ohw = (out_size(h, kh, s[0], p[0], d[0]), out_size(w, kw, s[1], p[1], d[1]))
    fast = native(x, "conv2d")
    cols = None
    if fast is not None:
        out = wrap(fast(x._data, weight._data, None if bias is None else bias._data,
                        s, p, d, groups), x)
    else:
        be = _fast.backend_for(x, weight, bias)
        length, ckk = ohw[0] * ohw[1], cg * kh * kw
        cols = windows(x, k, s, p, d, ohw).reshape(n, groups, ckk, length)
        if be is not None:
            # one batched GEMM on backend arrays (same device and dtype, see _fast.py)
            w3 = be.reshape(weight._data, (groups, o // groups, ckk))
            y = be.matmul(be.broadcast_to(w3, (n, groups, o // groups, ckk)), cols._data)
            y = be.reshape(y, (n, o, ohw[0], ohw[1]))
            if bias is not None:
                be.add(y, be.broadcast_to(be.reshape(bias._data, (o, 1, 1)), y.shape), out=y)
            out = _fast.make(y, x)
        else:
            with no_grad_ctx():
                out = (weight.reshape(groups, o // groups, ckk) @ cols) \
                    .reshape(n, o, ohw[0], ohw[1])
                if bias is not None:
                    out = out + bias.reshape(o, 1, 1)
    if needs_grad(x, weight, bias):
        record("ConvolutionBackward0", _conv2d_backward, out, (x, weight, bias), (x, weight),
               cols=cols, k=k, s=s, p=p, d=d, groups=groups, hw=(h, w))
    return out.squeeze(0) if unbatched else out


def _conv2d_backward(node: Any, g: Tensor) -> tuple:
    x, w = node.saved_tensors
    need_x, need_w, need_b = node.needs_input_grad
    fast = native(g, "conv2d_backward")
    if fast is not None and not differentiable_backward():
        gs = fast(g._data, x._data, w._data, node.s, node.p, node.d, node.groups,
                  (need_x, need_w, need_b))
        return tuple(None if a is None else wrap(a, t)
                     for a, t in zip(gs, (x, w, g)))
    n, o, oh, ow = g.shape
    groups = node.groups
    _, cg, kh, kw = w.shape
    ckk, og, length = cg * kh * kw, o // groups, oh * ow
    cols = node.cols
    be = None if differentiable_backward() or cols is None else _fast.backend_for(g, x, w)
    if be is not None:
        # first-order backward on backend arrays (the formulas below, without the graph)
        g3 = be.reshape(g._data, (n, groups, og, length))
        gx = gw = gb = None
        if need_x:
            wt = be.permute(be.reshape(w._data, (groups, og, ckk)), (0, 2, 1))
            gcols = be.matmul(be.broadcast_to(wt, (n, groups, ckk, og)), g3)
            gcols = _fast.make(be.reshape(gcols, (n, groups * cg, kh * kw, oh, ow)), g)
            gx = windows_adjoint(gcols, node.hw, node.k, node.s, node.p, node.d)
        if need_w:
            prod = be.matmul(g3, be.permute(cols._data, (0, 1, 3, 2)))
            gw = _fast.make(be.reshape(be.sum(prod, (0,), False), tuple(w.shape)), g)
        if need_b:
            gb = _fast.make(be.sum(g._data, (0, 2, 3), False), g)
        return gx, gw, gb
    g3 = g.reshape(n, groups, og, length)
    gx = gw = gb = None
    if need_x:
        gcols = w.reshape(groups, og, ckk).mT @ g3
        gx = fold(gcols.reshape(n, groups * ckk, length), node.hw, node.k, node.d, node.p,
                  node.s)
    if need_w:
        if cols is None or differentiable_backward():
            cols = unfold(x, node.k, node.d, node.p, node.s).reshape(n, groups, ckk, length)
        gw = (g3 @ cols.mT).sum(0).reshape(w.shape)
    if need_b:
        gb = g.sum((0, 2, 3))
    return gx, gw, gb


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-D convolution of ``(N, C, L)`` (or ``(C, L)``) with ``weight`` ``(O, C // groups,
    k)``: conv2d on a height-1 image."""
    if input.ndim not in (2, 3) or weight.ndim != 3:
        raise ValueError(f"conv1d: expected a 2-D or 3-D input and a 3-D weight, got "
                         f"{tuple(input.shape)} and {tuple(weight.shape)}")
    pad = padding if isinstance(padding, str) else (0, ntuple(padding, 1, "padding")[0])
    out = conv2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias,
                 (1, ntuple(stride, 1, "stride")[0]), pad,
                 (1, ntuple(dilation, 1, "dilation")[0]), groups)
    return out.squeeze(-2)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """Transposed 2-D convolution (the gradient of conv2d with respect to its input):
    ``weight`` is ``(C_in, C_out // groups, kh, kw)``."""
    unbatched = input.ndim == 3
    if input.ndim not in (3, 4) or weight.ndim != 4:
        raise ValueError(f"conv_transpose2d: expected a 3-D or 4-D input and a 4-D weight, "
                         f"got {tuple(input.shape)} and {tuple(weight.shape)}")
    x = input.unsqueeze(0) if unbatched else input
    n, cin, h, w = x.shape
    _, cog, kh, kw = weight.shape
    if cin != weight.shape[0] or cin % groups:
        raise ValueError(f"conv_transpose2d: input with {cin} channels does not match weight "
                         f"{tuple(weight.shape)} (groups={groups})")
    s, p = pair(stride, "stride"), pair(padding, "padding")
    op, d = pair(output_padding, "output_padding"), pair(dilation, "dilation")
    if any(o >= max(a, b) for o, a, b in zip(op, s, d)):
        raise ValueError(f"conv_transpose2d: output_padding {op} must be smaller than stride "
                         f"{s} or dilation {d}")
    hout = (h - 1) * s[0] - 2 * p[0] + d[0] * (kh - 1) + op[0] + 1
    wout = (w - 1) * s[1] - 2 * p[1] + d[1] * (kw - 1) + op[1] + 1
    cig = cin // groups
    cols = weight.reshape(groups, cig, cog * kh * kw).mT @ x.reshape(n, groups, cig, h * w)
    out = fold(cols.reshape(n, groups * cog * kh * kw, h * w), (hout, wout), (kh, kw), d, p, s)
    if bias is not None:
        out = out + bias.reshape(-1, 1, 1)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """Transposed 1-D convolution: conv_transpose2d on a height-1 image."""
    one = lambda v, name: (0 if name != "stride" and name != "dilation" else 1,  # noqa: E731
                           ntuple(v, 1, name)[0])
    out = conv_transpose2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias,
                           one(stride, "stride"), one(padding, "padding"),
                           one(output_padding, "output_padding"), groups,
                           one(dilation, "dilation"))
    return out.squeeze(-2)
