"""ONNX's neural-network operators (softmax, convolutions, pools, normalizations,
dropout) as omnitensor functions, registered in ``ops.OPS`` (``runtime`` imports this
module, as it does ``recurrent``)."""
from __future__ import annotations

import math
from typing import Any, Callable

from ..core import dtypes as _dt
from ..core.ops import creation as cr
from ..core.tensor import Tensor
from ..nn import functional as F
from .ops import OPS, Ctx, OnnxOpError, op

def _softmax_of(log: bool) -> Callable:
    def run(ctx: Ctx, x: Tensor) -> Tensor:
        if ctx.opset < 13:  # older rule: coerce to 2-D at axis (default 1)
            axis = ctx.attr("axis", 1) % max(x.ndim, 1)
            flat = x.reshape(math.prod(x.shape[:axis]), -1)
            r = flat.log_softmax(1) if log else flat.softmax(1)
            return r.reshape(tuple(x.shape))
        axis = ctx.attr("axis", -1)
        return x.log_softmax(axis) if log else x.softmax(axis)
    return run


OPS["Softmax"] = _softmax_of(False)
OPS["LogSoftmax"] = _softmax_of(True)


def _pads(ctx: Ctx, x: Tensor, kernel: list[int], strides: list[int],
          dilations: list[int]) -> tuple[list[int], list[int]]:
    """(begin, end) paddings per spatial axis from ``pads`` or ``auto_pad``."""
    nsp = len(kernel)
    auto = ctx.attr("auto_pad", "NOTSET")
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for i in range(nsp):
            n = x.shape[2 + i]
            out = -(-n // strides[i])
            total = max(0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - n)
            lo = total // 2 if auto == "SAME_UPPER" else total - total // 2
            begin.append(lo)
            end.append(total - lo)
        return begin, end
    if auto == "VALID":
        return [0] * nsp, [0] * nsp
    p = list(ctx.attr("pads") or [0] * (2 * nsp))
    return p[:nsp], p[nsp:]


def _spatial(ctx: Ctx, x: Tensor, kernel: list[int]) -> tuple:
    nsp = len(kernel)
    strides = list(ctx.attr("strides") or [1] * nsp)
    dil = list(ctx.attr("dilations") or [1] * nsp)
    begin, end = _pads(ctx, x, kernel, strides, dil)
    return strides, dil, begin, end


def _pre_pad(x: Tensor, begin: list[int], end: list[int], value: float) -> tuple:
    """Symmetric paddings pass to the op; asymmetric ones are applied first."""
    if begin == end:
        return x, begin
    torch_pad: list[int] = []
    for b, e in zip(reversed(begin), reversed(end)):
        torch_pad += [b, e]
    return F.pad(x, torch_pad, "constant", value), [0] * len(begin)


_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_CONVT = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


@op("Conv")
def _conv(ctx: Ctx, x: Tensor, w: Tensor, b: Any = None) -> Tensor:
    kernel = list(ctx.attr("kernel_shape") or w.shape[2:])
    strides, dil, begin, end = _spatial(ctx, x, kernel)
    x, pad = _pre_pad(x, begin, end, 0.0)
    nsp = len(kernel)
    if nsp not in _CONV:
        raise OnnxOpError(f"Conv over {nsp} spatial axes is not supported (1 to 3)")
    return _CONV[nsp](x, w, b, strides, pad, dil, ctx.attr("group", 1))


@op("ConvTranspose")
def _conv_t(ctx: Ctx, x: Tensor, w: Tensor, b: Any = None) -> Tensor:
    kernel = list(ctx.attr("kernel_shape") or w.shape[2:])
    nsp = len(kernel)
    strides = list(ctx.attr("strides") or [1] * nsp)
    dil = list(ctx.attr("dilations") or [1] * nsp)
    if ctx.attr("auto_pad", "NOTSET") not in ("NOTSET", "VALID") or ctx.attr("output_shape"):
        raise OnnxOpError("ConvTranspose with auto_pad SAME or output_shape is not supported")
    p = list(ctx.attr("pads") or [0] * (2 * nsp))
    if p[:nsp] != p[nsp:]:
        raise OnnxOpError(f"ConvTranspose with asymmetric pads {p} is not supported")
    outpad = list(ctx.attr("output_padding") or [0] * nsp)
    return _CONVT[nsp](x, w, b, strides, p[:nsp], outpad, ctx.attr("group", 1), dil)


@op("MaxPool")
def _maxpool(ctx: Ctx, x: Tensor) -> Any:
    kernel = list(ctx.attr("kernel_shape"))
    strides, dil, begin, end = _spatial(ctx, x, kernel)
    x, pad = _pre_pad(x, begin, end, float("-inf"))
    nsp = len(kernel)
    fn = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[nsp]
    if ctx.n_out > 1:
        raise OnnxOpError("MaxPool's Indices output is not supported")
    return fn(x, kernel, strides, pad, dil, bool(ctx.attr("ceil_mode", 0)))


@op("AveragePool")
def _avgpool(ctx: Ctx, x: Tensor) -> Tensor:
    kernel = list(ctx.attr("kernel_shape"))
    strides, dil, begin, end = _spatial(ctx, x, kernel)
    if any(d != 1 for d in dil):
        raise OnnxOpError(f"AveragePool with dilations {dil} is not supported")
    include = bool(ctx.attr("count_include_pad", 0))
    if begin != end and not include:
        raise OnnxOpError("AveragePool with asymmetric pads and count_include_pad=0")
    x, pad = _pre_pad(x, begin, end, 0.0)
    fn = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[len(kernel)]
    return fn(x, kernel, strides, pad, bool(ctx.attr("ceil_mode", 0)), include)


@op("GlobalAveragePool")
def _gap(ctx: Ctx, x: Tensor) -> Tensor:
    return x.mean(dim=tuple(range(2, x.ndim)), keepdim=True)


@op("GlobalMaxPool")
def _gmp(ctx: Ctx, x: Tensor) -> Tensor:
    return x.amax(dim=tuple(range(2, x.ndim)), keepdim=True)


@op("BatchNormalization")
def _bn(ctx: Ctx, x: Tensor, scale: Tensor, bias: Tensor, mean: Tensor, var: Tensor) -> Any:
    if ctx.attr("training_mode", 0):
        raise OnnxOpError("BatchNormalization in training mode is not supported (export "
                          "the model in eval mode)")
    return F.batch_norm(x, mean, var, scale, bias, False, 0.0, ctx.attr("epsilon", 1e-5))


@op("InstanceNormalization")
def _inorm(ctx: Ctx, x: Tensor, scale: Tensor, bias: Tensor) -> Tensor:
    return F.instance_norm(x, weight=scale, bias=bias, eps=ctx.attr("epsilon", 1e-5))


@op("LayerNormalization")
def _lnorm(ctx: Ctx, x: Tensor, scale: Tensor, bias: Any = None) -> Any:
    axis = ctx.attr("axis", -1) % x.ndim
    if ctx.n_out > 1:
        raise OnnxOpError("LayerNormalization's Mean/InvStdDev outputs are not supported")
    return F.layer_norm(x, tuple(x.shape[axis:]), scale, bias, ctx.attr("epsilon", 1e-5))


@op("GroupNormalization")
def _gnorm(ctx: Ctx, x: Tensor, scale: Tensor, bias: Tensor) -> Tensor:
    g = ctx.attr("num_groups")
    c = x.shape[1]
    if scale.shape[0] == g and g != c:  # opset 18's per-group scale
        scale, bias = scale.repeat_interleave(c // g), bias.repeat_interleave(c // g)
    return F.group_norm(x, g, scale, bias, ctx.attr("epsilon", 1e-5))


@op("Dropout")
def _dropout(ctx: Ctx, x: Tensor, ratio: Any = None, training: Any = None) -> Any:
    if training is not None and bool(training.item()):
        raise OnnxOpError("Dropout with training_mode=True is not supported (inference)")
    if ctx.n_out > 1:
        return x, cr.ones(x.shape, dtype=_dt.bool_, device=x.device)
    return x
