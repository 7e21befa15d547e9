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
from ..core.ops.ternary import where as _where
from ..core.tensor import Tensor
from ..kernels.primitives import names, onnx_direct
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
# every operator the exporter writes for a primitive one for one runs here: the rows the
# entries above do not spell out run the primitive's own op
for _prim, _name in onnx_direct().items():
    if _name not in OPS:
        _fn = getattr(ew, _prim)
        OPS[_name] = _binary(_fn) if _prim in names(2) else (lambda f: lambda ctx, x: f(x))(_fn)


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


@op("ScatterND")
def _scatter_nd(ctx: Ctx, x: Tensor, idx: Tensor, upd: Tensor) -> Tensor:
    reduction = ctx.attr("reduction", "none")
    if reduction not in ("none", "add"):
        raise OnnxOpError(f"omnitensor.onnx: ScatterND with reduction={reduction!r} is not "
                          f"supported (none and add are)")
    x, idx, upd = _joint(x, idx, upd)
    out = x.clone()
    out.index_put_(tuple(idx[..., k] for k in range(idx.shape[-1])), upd,
                   accumulate=reduction == "add")
    return out


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


def supported() -> list[str]:
    """The ONNX op types this runtime executes."""
    return sorted(OPS)

