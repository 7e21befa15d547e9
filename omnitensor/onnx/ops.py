"""ONNX operators as omnitensor functions: ``OPS[op_type](ctx, *inputs)``.

Each entry follows the ONNX operator specification (opset 13 and later; where an older
opset differs, ``ctx.opset`` says which rule applies) and is written with omnitensor's
public ops, so it runs on every device. Optional inputs arrive as None.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .. import core as _core  # noqa: F401  (Tensor methods bound)
from ..core import dtypes as _dt
from ..core.ops import creation as cr, elementwise as ew, join, shape as sh
from ..core.ops.linalg_ops import einsum, matmul
from ..core.ops.ternary import where as _where
from ..core.tensor import Tensor
from ..nn import functional as F


class OnnxOpError(ValueError):
    """A node whose attributes or inputs this runtime cannot honour."""


class Ctx:
    """What a node function sees besides its inputs: attributes, output count, opset."""

    __slots__ = ("model", "attrs", "n_out")

    def __init__(self, model: Any, attrs: dict, n_out: int) -> None:
        self.model, self.attrs, self.n_out = model, attrs, n_out

    @property
    def opset(self) -> int:
        return self.model.opset

    @property
    def device(self) -> Any:
        return self.model.device

    def attr(self, name: str, default: Any = None) -> Any:
        v = self.attrs.get(name, default)
        return v.decode() if isinstance(v, bytes) else v


OPS: dict[str, Callable[..., Any]] = {}


def op(*names: str) -> Callable:
    def reg(fn: Callable) -> Callable:
        for n in names:
            OPS[n] = fn
        return fn
    return reg


def _ints(t: Any) -> list[int]:
    """A host list of the integers in a (shape-like) tensor."""
    if t is None:
        return []
    return [int(v) for v in (t.tolist() if isinstance(t, Tensor) else t)]


def _joint(*ts: Any) -> list[Any]:
    """Operands on one device: host tensors join a device operand (as values)."""
    dev = next((t.device for t in ts if isinstance(t, Tensor) and t.device.type != "cpu"),
               None)
    if dev is None:
        return list(ts)
    return [t.to(dev) if isinstance(t, Tensor) and t.device != dev and t.ndim > 0 else t
            for t in ts]


def _np_dtype(onnx_type: int) -> Any:
    from onnx import helper
    return np.dtype(helper.tensor_dtype_to_np_dtype(onnx_type))


# ------------------------------------------------------------------ elementwise
def _binary(fn: Callable) -> Callable:
    def run(ctx: Ctx, a: Tensor, b: Tensor) -> Tensor:
        a, b = _joint(a, b)
        return fn(a, b)
    return run


for _name, _fn in {"Add": ew.add, "Sub": ew.subtract, "Mul": ew.multiply,
                   "Pow": lambda a, b: a ** b.to(a.dtype) if a.dtype.kind == "f" else a ** b,
                   "Equal": ew.equal, "Less": ew.less, "Greater": ew.greater,
                   "LessOrEqual": ew.less_equal, "GreaterOrEqual": ew.greater_equal,
                   "And": ew.logical_and, "Or": ew.logical_or, "Xor": ew.logical_xor,
                   "BitShift": None}.items():
    if _fn is not None:
        OPS[_name] = _binary(_fn)


@op("Div")
def _div(ctx: Ctx, a: Tensor, b: Tensor) -> Tensor:
    a, b = _joint(a, b)
    if a.dtype.kind in "iu":  # ONNX integer division truncates toward zero
        return (a.to(_dt.float64) / b.to(_dt.float64)).trunc().to(a.dtype) \
            if a.device.supports_dtype("float64") else (a / b).trunc().to(a.dtype)
    return a / b


@op("Mod")
def _mod(ctx: Ctx, a: Tensor, b: Tensor) -> Tensor:
    a, b = _joint(a, b)
    return a.fmod(b) if ctx.attr("fmod", 0) else a.remainder(b)


_UNARY = {"Neg": lambda x: -x, "Abs": lambda x: x.abs(), "Exp": lambda x: x.exp(),
          "Log": lambda x: x.log(), "Sqrt": lambda x: x.sqrt(),
          "Reciprocal": lambda x: x.reciprocal(), "Relu": lambda x: x.relu(),
          "Sigmoid": lambda x: x.sigmoid(), "Tanh": lambda x: x.tanh(),
          "Erf": lambda x: x.erf(), "Sin": lambda x: x.sin(), "Cos": lambda x: x.cos(),
          "Tan": lambda x: x.tan(), "Floor": lambda x: x.floor(), "Ceil": lambda x: x.ceil(),
          "Round": lambda x: x.round(), "Sign": lambda x: x.sign(),
          "Not": lambda x: x.logical_not(), "IsNaN": lambda x: x.isnan(),
          "Softsign": lambda x: x / (1 + x.abs()), "Identity": lambda x: x,
          "Atan": lambda x: x.atan(), "Asin": lambda x: x.asin(), "Acos": lambda x: x.acos(),
          "Sinh": lambda x: x.sinh(), "Cosh": lambda x: x.cosh()}
for _name, _ufn in _UNARY.items():
    OPS[_name] = (lambda f: lambda ctx, x: f(x))(_ufn)


@op("IsInf")
def _isinf(ctx: Ctx, x: Tensor) -> Tensor:
    r = x.isinf()
    if not ctx.attr("detect_positive", 1):
        r = r & (x < 0)
    if not ctx.attr("detect_negative", 1):
        r = r & (x > 0)
    return r


@op("LeakyRelu")
def _leaky(ctx: Ctx, x: Tensor) -> Tensor:
    return F.leaky_relu(x, ctx.attr("alpha", 0.01))


@op("Elu")
def _elu(ctx: Ctx, x: Tensor) -> Tensor:
    return F.elu(x, ctx.attr("alpha", 1.0))


@op("Selu")
def _selu(ctx: Ctx, x: Tensor) -> Tensor:
    a, g = ctx.attr("alpha", 1.67326319217681884765625), ctx.attr("gamma", 1.05070102214813232421875)
    return g * _where(x > 0, x, a * (x.exp() - 1))


@op("Softplus")
def _softplus(ctx: Ctx, x: Tensor) -> Tensor:
    return F.softplus(x)


@op("HardSigmoid")
def _hsig(ctx: Ctx, x: Tensor) -> Tensor:
    return (x * ctx.attr("alpha", 0.2) + ctx.attr("beta", 0.5)).clamp(0, 1)


@op("HardSwish")
def _hswish(ctx: Ctx, x: Tensor) -> Tensor:
    return x * (x / 6 + 0.5).clamp(0, 1)


@op("Gelu")
def _gelu(ctx: Ctx, x: Tensor) -> Tensor:
    return F.gelu(x, approximate=ctx.attr("approximate", "none"))


@op("PRelu")
def _prelu(ctx: Ctx, x: Tensor, slope: Tensor) -> Tensor:
    x, slope = _joint(x, slope)
    return _where(x >= 0, x, x * slope)


@op("Clip")
def _clip(ctx: Ctx, x: Tensor, lo: Any = None, hi: Any = None) -> Tensor:
    if ctx.opset < 11:
        lo, hi = ctx.attr("min"), ctx.attr("max")
    lo = lo.item() if isinstance(lo, Tensor) else lo
    hi = hi.item() if isinstance(hi, Tensor) else hi
    return x.clamp(lo, hi) if lo is not None or hi is not None else x


@op("Where")
def _where_op(ctx: Ctx, c: Tensor, a: Tensor, b: Tensor) -> Tensor:
    c, a, b = _joint(c, a, b)
    return _where(c, a, b)


def _variadic(fn: Callable) -> Callable:
    def run(ctx: Ctx, *xs: Tensor) -> Tensor:
        ops = _joint(*xs)
        out = ops[0]
        for x in ops[1:]:
            out = fn(out, x)
        return out
    return run


OPS["Max"] = _variadic(ew.maximum)
OPS["Min"] = _variadic(ew.minimum)
OPS["Sum"] = _variadic(ew.add)


@op("Mean")
def _mean_n(ctx: Ctx, *xs: Tensor) -> Tensor:
    return OPS["Sum"](ctx, *xs) / len(xs)


@op("Cast")
def _cast(ctx: Ctx, x: Tensor) -> Tensor:
    return x.to(_dt.as_dtype(_np_dtype(ctx.attr("to"))))


@op("CastLike")
def _cast_like(ctx: Ctx, x: Tensor, like: Tensor) -> Tensor:
    return x.to(like.dtype)


# ------------------------------------------------------------------ constants, shapes
@op("Constant")
def _constant(ctx: Ctx) -> Tensor:
    from onnx import numpy_helper
    a = ctx.attrs
    if "value" in a:
        arr = numpy_helper.to_array(a["value"])
    elif "value_float" in a:
        arr = np.array(a["value_float"], np.float32)
    elif "value_floats" in a:
        arr = np.array(a["value_floats"], np.float32)
    elif "value_int" in a:
        arr = np.array(a["value_int"], np.int64)
    elif "value_ints" in a:
        arr = np.array(a["value_ints"], np.int64)
    else:
        raise OnnxOpError(f"Constant with attributes {sorted(a)} is not supported")
    return ctx.model._place(arr)


@op("ConstantOfShape")
def _const_of_shape(ctx: Ctx, shape: Tensor) -> Tensor:
    from onnx import numpy_helper
    v = ctx.attrs.get("value")
    arr = numpy_helper.to_array(v) if v is not None else np.zeros(1, np.float32)
    return cr.full(tuple(_ints(shape)), arr.reshape(-1)[0].item(),
                   dtype=_dt.as_dtype(arr.dtype), device=ctx.device)


@op("Shape")
def _shape(ctx: Ctx, x: Tensor) -> Tensor:
    dims = list(x.shape)
    start, end = ctx.attr("start", 0), ctx.attr("end", None)
    return cr.tensor(dims[start:end], dtype=_dt.int64, device="cpu")


@op("Size")
def _size(ctx: Ctx, x: Tensor) -> Tensor:
    return cr.tensor(x.numel(), dtype=_dt.int64, device="cpu")


@op("Range")
def _range(ctx: Ctx, start: Tensor, limit: Tensor, delta: Tensor) -> Tensor:
    s, l_, d = start.item(), limit.item(), delta.item()
    dev = next((t.device for t in (start, limit, delta) if t.device.type != "cpu"), "cpu")
    return cr.arange(s, l_, d, dtype=start.dtype, device=dev)


@op("Reshape")
def _reshape(ctx: Ctx, x: Tensor, shape: Tensor) -> Tensor:
    dims = _ints(shape)
    if not ctx.attr("allowzero", 0):
        dims = [x.shape[i] if d == 0 else d for i, d in enumerate(dims)]
    return x.reshape(tuple(dims))


@op("Flatten")
def _flatten(ctx: Ctx, x: Tensor) -> Tensor:
    axis = ctx.attr("axis", 1)
    axis = axis + x.ndim if axis < 0 else axis
    lead = math.prod(x.shape[:axis])
    return x.reshape(lead, -1) if x.numel() else x.reshape(lead, math.prod(x.shape[axis:]))


@op("Transpose")
def _transpose(ctx: Ctx, x: Tensor) -> Tensor:
    perm = ctx.attr("perm") or list(range(x.ndim))[::-1]
    return x.permute(*perm)


def _axes(ctx: Ctx, axes_in: Any) -> list[int] | None:
    if axes_in is not None:
        return _ints(axes_in)
    a = ctx.attr("axes")
    return list(a) if a is not None else None


@op("Squeeze")
def _squeeze(ctx: Ctx, x: Tensor, axes: Any = None) -> Tensor:
    ax = _axes(ctx, axes)
    if ax is None:
        return x.reshape(tuple(d for d in x.shape if d != 1))
    drop = {a % x.ndim for a in ax}
    for a in drop:
        if x.shape[a] != 1:
            raise OnnxOpError(f"Squeeze axis {a} has size {x.shape[a]}, not 1")
    return x.reshape(tuple(d for i, d in enumerate(x.shape) if i not in drop))


@op("Unsqueeze")
def _unsqueeze(ctx: Ctx, x: Tensor, axes: Any = None) -> Tensor:
    ax = _axes(ctx, axes) or []
    nd = x.ndim + len(ax)
    ax = sorted(a % nd for a in ax)
    shape = list(x.shape)
    for a in ax:
        shape.insert(a, 1)
    return x.reshape(tuple(shape))


@op("Concat")
def _concat(ctx: Ctx, *xs: Tensor) -> Tensor:
    ops = _joint(*[x for x in xs if x is not None])
    return join.cat(list(ops), ctx.attr("axis"))


@op("Split")
def _split(ctx: Ctx, x: Tensor, split: Any = None) -> tuple:
    axis = ctx.attr("axis", 0)
    sizes = _ints(split) if split is not None else list(ctx.attr("split") or [])
    if not sizes:
        n = ctx.attr("num_outputs", ctx.n_out)
        full = x.shape[axis]
        step = -(-full // n)
        sizes = [min(step, full - i * step) for i in range(n)]
    return tuple(join.split(x, sizes, axis))


@op("Slice")
def _slice(ctx: Ctx, x: Tensor, starts: Any = None, ends: Any = None, axes: Any = None,
           steps: Any = None) -> Tensor:
    if ctx.opset < 10:
        st, en, ax, sp = ctx.attr("starts"), ctx.attr("ends"), ctx.attr("axes"), None
    else:
        st, en, ax, sp = _ints(starts), _ints(ends), _ints(axes) or None, _ints(steps) or None
    ax = ax or list(range(len(st)))
    sp = sp or [1] * len(st)
    key: list[Any] = [slice(None)] * x.ndim
    for s, e, a, k in zip(st, en, ax, sp):
        n = x.shape[a]
        if k == 0:
            raise OnnxOpError("Slice step 0")
        big = 1 << 62
        e = None if (k > 0 and e >= n) or (k < 0 and e <= -big) else e
        s = None if (k < 0 and s >= n) else s
        key[a % x.ndim] = slice(s, e, k)
    if any(isinstance(k_, slice) and (k_.step or 1) < 0 for k_ in key):
        return _neg_slice(x, key)
    return x[tuple(key)]


def _neg_slice(x: Tensor, key: list) -> Tensor:
    """Negative steps through flip (omnitensor views take positive steps, as torch)."""
    for a, k in enumerate(key):
        if isinstance(k, slice) and (k.step or 1) < 0:
            idx = list(range(x.shape[a]))[k]
            x = x.index_select(a, cr.tensor(idx, dtype=_dt.int64, device=x.device))
            key[a] = slice(None)
    return x[tuple(key)]


@op("Gather")
def _gather(ctx: Ctx, x: Tensor, idx: Tensor) -> Tensor:
    axis = ctx.attr("axis", 0) % x.ndim
    if idx.device != x.device:
        idx = idx.to(x.device) if x.device.type != "cpu" else idx
    i = _where(idx < 0, idx + x.shape[axis], idx)
    out = x.index_select(axis, i.reshape(-1))
    return out.reshape((*x.shape[:axis], *idx.shape, *x.shape[axis + 1:]))


@op("GatherND")
def _gather_nd(ctx: Ctx, x: Tensor, idx: Tensor) -> Tensor:
    if ctx.attr("batch_dims", 0):
        raise NotImplementedError("omnitensor.onnx: GatherND with batch_dims is not supported")
    x, idx = _joint(x, idx)
    return x[tuple(idx[..., k] for k in range(idx.shape[-1]))]


@op("GatherElements")
def _gather_el(ctx: Ctx, x: Tensor, idx: Tensor) -> Tensor:
    axis = ctx.attr("axis", 0) % x.ndim
    x, idx = _joint(x, idx)
    i = _where(idx < 0, idx + x.shape[axis], idx)
    return x.gather(axis, i)


@op("Expand")
def _expand(ctx: Ctx, x: Tensor, shape: Tensor) -> Tensor:
    target = _ints(shape)
    nd = max(len(target), x.ndim)
    xs = [1] * (nd - x.ndim) + list(x.shape)
    ts = [1] * (nd - len(target)) + target
    out = [max(a, b) if 1 in (a, b) else a for a, b in zip(xs, ts)]
    return sh.broadcast_to(x.reshape(tuple(xs)), tuple(out))


@op("Tile")
def _tile(ctx: Ctx, x: Tensor, reps: Tensor) -> Tensor:
    return x.repeat(*_ints(reps))


@op("Trilu")
def _trilu(ctx: Ctx, x: Tensor, k: Any = None) -> Tensor:
    kk = int(k.item()) if k is not None else 0
    return cr.triu(x, kk) if ctx.attr("upper", 1) else cr.tril(x, kk)


@op("Pad")
def _pad(ctx: Ctx, x: Tensor, pads: Any = None, value: Any = None, axes: Any = None) -> Tensor:
    mode = ctx.attr("mode", "constant")
    p = _ints(pads) if pads is not None else list(ctx.attr("pads"))
    ax = _ints(axes) if axes is not None else list(range(x.ndim))
    n = len(ax)
    begin, end = dict(zip(ax, p[:n])), dict(zip(ax, p[n:]))
    torch_pad: list[int] = []
    for a in reversed(range(x.ndim)):
        torch_pad += [begin.get(a, 0), end.get(a, 0)]
    v = value.item() if isinstance(value, Tensor) else (ctx.attr("value", 0.0) or 0.0)
    if mode == "constant":
        return F.pad(x, torch_pad, "constant", v)
    return F.pad(x, torch_pad, {"reflect": "reflect", "edge": "replicate"}[mode])


# ------------------------------------------------------------------ reductions
def _reduce(name: str) -> Callable:
    def run(ctx: Ctx, x: Tensor, axes: Any = None) -> Tensor:
        keep = bool(ctx.attr("keepdims", 1))
        ax = _axes(ctx, axes)
        if not ax:
            if ctx.attr("noop_with_empty_axes", 0):
                return x
            ax = list(range(x.ndim))
        dims = tuple(a % x.ndim for a in ax) if x.ndim else ()
        if name == "mean":
            return x.mean(dim=dims, keepdim=keep)
        if name == "sum":
            return x.sum(dim=dims, keepdim=keep)
        if name == "max":
            return x.amax(dim=dims, keepdim=keep)
        if name == "min":
            return x.amin(dim=dims, keepdim=keep)
        if name == "prod":
            out = x
            for a in sorted(dims, reverse=True):
                out = out.prod(dim=a, keepdim=keep)
            return out
        if name == "l2":
            return (x * x).sum(dim=dims, keepdim=keep).sqrt()
        if name == "sumsquare":
            return (x * x).sum(dim=dims, keepdim=keep)
        return x.logsumexp(dim=dims, keepdim=keep)  # log_sum_exp
    return run


for _name, _r in {"ReduceMean": "mean", "ReduceSum": "sum", "ReduceMax": "max",
                  "ReduceMin": "min", "ReduceProd": "prod", "ReduceL2": "l2",
                  "ReduceSumSquare": "sumsquare", "ReduceLogSumExp": "lse"}.items():
    OPS[_name] = _reduce(_r)


def _arg(kind: str) -> Callable:
    def run(ctx: Ctx, x: Tensor) -> Tensor:
        axis, keep = ctx.attr("axis", 0), bool(ctx.attr("keepdims", 1))
        if ctx.attr("select_last_index", 0):
            n = x.shape[axis]
            r = getattr(x.flip(dims=(axis,)), kind)(dim=axis, keepdim=keep)
            return (n - 1) - r
        return getattr(x, kind)(dim=axis, keepdim=keep)
    return run


OPS["ArgMax"] = _arg("argmax")
OPS["ArgMin"] = _arg("argmin")


@op("CumSum")
def _cumsum(ctx: Ctx, x: Tensor, axis: Tensor) -> Tensor:
    a = int(axis.item()) % x.ndim
    if ctx.attr("reverse", 0):
        x = x.flip(dims=(a,))
    out = x.cumsum(a)
    if ctx.attr("exclusive", 0):
        out = out - x
    return out.flip(dims=(a,)) if ctx.attr("reverse", 0) else out


@op("TopK")
def _topk(ctx: Ctx, x: Tensor, k: Tensor) -> tuple:
    axis = ctx.attr("axis", -1)
    r = x.topk(int(k.item()), dim=axis, largest=bool(ctx.attr("largest", 1)),
               sorted=bool(ctx.attr("sorted", 1)))
    return r.values, r.indices


# ------------------------------------------------------------------ linear algebra
@op("MatMul")
def _matmul(ctx: Ctx, a: Tensor, b: Tensor) -> Tensor:
    a, b = _joint(a, b)
    return matmul(a, b)


@op("Gemm")
def _gemm(ctx: Ctx, a: Tensor, b: Tensor, c: Any = None) -> Tensor:
    a, b = _joint(a, b)
    if ctx.attr("transA", 0):
        a = a.t()
    if ctx.attr("transB", 0):
        b = b.t()
    alpha, beta = ctx.attr("alpha", 1.0), ctx.attr("beta", 1.0)
    out = matmul(a, b)
    if alpha != 1.0:
        out = out * alpha
    if c is not None:
        (c,) = _joint(c) if c.device == out.device else [c.to(out.device)]
        out = out + (c * beta if beta != 1.0 else c)
    return out


@op("Einsum")
def _einsum(ctx: Ctx, *xs: Tensor) -> Tensor:
    return einsum(ctx.attr("equation"), *_joint(*xs))


# ------------------------------------------------------------------ nn
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


def supported() -> list[str]:
    """The ONNX op types this runtime executes."""
    return sorted(OPS)

