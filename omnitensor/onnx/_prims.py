"""Backend primitive -> ONNX node(s): one function per primitive of ``backends/base.py``.

Each mapping receives the emitter (``e``: its builder ``e.b``, ``e.name(value)``,
``e.operand(arg, like)`` for an operand that may be a Python scalar) and the captured node,
and returns the ONNX name of each output (or None for ops that only alias). Primitives with
no entry raise a clear error naming the op (see ``_emit.Unmappable``).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..kernels.primitives import ALIAS, PRIMITIVES, onnx_direct, where
from ._builder import INT64_MAX, INT64_MIN

__all__ = ["PRIMS", "onnx_dtype", "ALIASES"]

Mapping = Callable[[Any, Any], Any]
PRIMS: dict[str, Mapping] = {}

#: primitives whose result is its operand's values (no ONNX node)
ALIASES = frozenset(("copy", "contiguous", "from_numpy")) | where(onnx=ALIAS)


def onnx_dtype(np_name: str) -> int:
    from onnx import TensorProto
    table = {"float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE,
             "float16": TensorProto.FLOAT16, "bfloat16": TensorProto.BFLOAT16,
             "int8": TensorProto.INT8, "int16": TensorProto.INT16, "int32": TensorProto.INT32,
             "int64": TensorProto.INT64, "uint8": TensorProto.UINT8,
             "uint16": TensorProto.UINT16, "uint32": TensorProto.UINT32,
             "uint64": TensorProto.UINT64, "bool": TensorProto.BOOL,
             "complex64": TensorProto.COMPLEX64, "complex128": TensorProto.COMPLEX128}
    if np_name not in table:
        raise NotImplementedError(f"omnitensor.onnx.export: dtype {np_name} has no ONNX type")
    return table[np_name]


def _reg(*names: str) -> Callable[[Mapping], Mapping]:
    def deco(fn: Mapping) -> Mapping:
        for n in names:
            PRIMS[n] = fn
        return fn
    return deco


# ------------------------------------------------------------------------ elementwise
#: the primitives an ONNX operator computes one for one (``kernels/primitives.py``' onnx field)
_DIRECT = onnx_direct()


def _unary(onnx_op: str) -> Mapping:
    def f(e: Any, n: Any) -> Any:
        op = "Not" if onnx_op == "BitwiseNot" and n.args[0].dtype == "bool" else onnx_op
        return e.b.op(op, [e.name(n.args[0])])
    return f


_LOGICAL = {"BitwiseAnd": "And", "BitwiseOr": "Or", "BitwiseXor": "Xor"}


def _binary(onnx_op: str) -> Mapping:
    def f(e: Any, n: Any) -> Any:
        a, b = n.args[:2]
        like = a if not _is_scalar(a) else b
        op = _LOGICAL.get(onnx_op, onnx_op) if like.dtype == "bool" else onnx_op
        return e.b.op(op, [e.operand(a, like), e.operand(b, like)])
    return f


def _is_scalar(a: Any) -> bool:
    return isinstance(a, (bool, int, float))


for _p in PRIMITIVES:
    if _p.name in _DIRECT:
        PRIMS[_p.name] = (_unary if _p.arity == 1 else _binary)(_p.onnx)


def _num(e: Any, like: Any, value: float) -> str:
    return e.operand(value, like)


@_reg("expm1")
def _expm1(e: Any, n: Any) -> str:
    x = n.args[0]
    return e.b.op("Sub", [e.b.op("Exp", [e.name(x)]), _num(e, x, 1.0)])


@_reg("log1p")
def _log1p(e: Any, n: Any) -> str:
    x = n.args[0]
    return e.b.op("Log", [e.b.op("Add", [e.name(x), _num(e, x, 1.0)])])


@_reg("log2", "log10")
def _logb(e: Any, n: Any) -> str:
    x = n.args[0]
    base = 2.0 if n.op == "log2" else 10.0
    return e.b.op("Div", [e.b.op("Log", [e.name(x)]), _num(e, x, math.log(base))])


@_reg("square")
def _square(e: Any, n: Any) -> str:
    x = e.name(n.args[0])
    return e.b.op("Mul", [x, x])


@_reg("erfc")
def _erfc(e: Any, n: Any) -> str:
    x = n.args[0]
    return e.b.op("Sub", [_num(e, x, 1.0), e.b.op("Erf", [e.name(x)])])


@_reg("trunc")
def _trunc(e: Any, n: Any) -> str:
    x = e.name(n.args[0])
    if n.args[0].dtype[0] in "iub":
        return e.b.op("Identity", [x])
    return e.b.op("Mul", [e.b.op("Sign", [x]), e.b.op("Floor", [e.b.op("Abs", [x])])])


@_reg("isfinite")
def _isfinite(e: Any, n: Any) -> str:
    x = e.name(n.args[0])
    return e.b.op("Not", [e.b.op("Or", [e.b.op("IsNaN", [x]), e.b.op("IsInf", [x])])])


@_reg("not_equal")
def _ne(e: Any, n: Any) -> str:
    return e.b.op("Not", [_binary("Equal")(e, n)])


@_reg("floor_divide")
def _floordiv(e: Any, n: Any) -> str:
    a, b = n.args[:2]
    like = a if not _is_scalar(a) else b
    x, y = e.operand(a, like), e.operand(b, like)
    if like.dtype[0] == "f":
        return e.b.op("Floor", [e.b.op("Div", [x, y])])
    # exact for |values| < 2**53: through float64
    from onnx import TensorProto
    q = e.b.op("Floor", [e.b.op("Div", [e.b.op("Cast", [x], to=TensorProto.DOUBLE),
                                        e.b.op("Cast", [y], to=TensorProto.DOUBLE)])])
    return e.b.op("Cast", [q], to=onnx_dtype(like.dtype))


@_reg("remainder")
def _remainder(e: Any, n: Any) -> str:
    a, b = n.args[:2]
    like = a if not _is_scalar(a) else b
    x, y = e.operand(a, like), e.operand(b, like)
    if like.dtype[0] != "f":
        return e.b.op("Mod", [x, y], fmod=0)      # sign of the divisor (Python, torch)
    r = e.b.op("Mod", [x, y], fmod=1)            # C fmod, then shift into the divisor's sign
    zero = _num(e, like, 0.0)
    fix = e.b.op("And", [e.b.op("Not", [e.b.op("Equal", [r, zero])]),
                         e.b.op("Xor", [e.b.op("Less", [r, zero]), e.b.op("Less", [y, zero])])])
    return e.b.op("Where", [fix, e.b.op("Add", [r, y]), r])


@_reg("hypot")
def _hypot(e: Any, n: Any) -> str:
    a, b = n.args[:2]
    like = a if not _is_scalar(a) else b
    x, y = e.operand(a, like), e.operand(b, like)
    return e.b.op("Sqrt", [e.b.op("Add", [e.b.op("Mul", [x, x]), e.b.op("Mul", [y, y])])])


@_reg("logaddexp")
def _logaddexp(e: Any, n: Any) -> str:
    a, b = n.args[:2]
    like = a if not _is_scalar(a) else b
    x, y = e.operand(a, like), e.operand(b, like)
    m = e.b.op("Max", [x, y])
    d = e.b.op("Neg", [e.b.op("Abs", [e.b.op("Sub", [x, y])])])
    t = e.b.op("Log", [e.b.op("Add", [_num(e, like, 1.0), e.b.op("Exp", [d])])])
    return e.b.op("Add", [m, t])


@_reg("where")
def _where(e: Any, n: Any) -> str:
    c, a, b = n.args[:3]
    like = a if not _is_scalar(a) else b
    return e.b.op("Where", [e.name(c), e.operand(a, like), e.operand(b, like)])


# ------------------------------------------------------------------------ reductions
@_reg("sum", "prod", "max", "min")
def _reduce(e: Any, n: Any) -> str:
    x, axes, keepdims = n.args[:3]
    op = {"sum": "ReduceSum", "prod": "ReduceProd", "max": "ReduceMax",
          "min": "ReduceMin"}[n.op]
    return e.b.op(op, [e.name(x), e.b.intvec(axes)], keepdims=int(bool(keepdims)))


@_reg("any", "all")
def _anyall(e: Any, n: Any) -> str:
    from onnx import TensorProto
    x, axes, keepdims = n.args[:3]
    xi = e.b.op("Cast", [e.b.op("Cast", [e.name(x)], to=TensorProto.BOOL)],
                to=TensorProto.INT32)
    r = e.b.op("ReduceMax" if n.op == "any" else "ReduceMin", [xi, e.b.intvec(axes)],
               keepdims=int(bool(keepdims)))
    return e.b.op("Cast", [r], to=TensorProto.BOOL)


@_reg("argmax", "argmin")
def _argmax(e: Any, n: Any) -> str:
    x, axis, keepdims = n.args[:3]
    xn = e.name(x)
    if axis is None:
        flat = e.b.op("Reshape", [xn, e.b.intvec([-1])])
        r = e.b.op("ArgMax" if n.op == "argmax" else "ArgMin", [flat], axis=0, keepdims=0)
        if keepdims:
            r = e.b.op("Reshape", [r, e.b.intvec([1] * len(x.shape), role="reshape")])
        return r
    return e.b.op("ArgMax" if n.op == "argmax" else "ArgMin", [xn], axis=int(axis),
                  keepdims=int(bool(keepdims)))


@_reg("cumsum")
def _cumsum(e: Any, n: Any) -> str:
    x, axis = n.args[:2]
    return e.b.op("CumSum", [e.name(x), e.b.const(np.int64(axis))])


# ------------------------------------------------------------------------ movement
@_reg("astype")
def _astype(e: Any, n: Any) -> Any:
    x, dtype = n.args[:2]
    if str(dtype) == x.dtype:
        return None
    return e.b.op("Cast", [e.name(x)], to=onnx_dtype(str(dtype)))


@_reg("reshape")
def _reshape(e: Any, n: Any) -> Any:
    x, shape = n.args[:2]
    if tuple(shape) == tuple(x.shape):
        return None
    return e.b.op("Reshape", [e.name(x), e.b.intvec(shape, role="reshape")], allowzero=1)


@_reg("permute")
def _permute(e: Any, n: Any) -> Any:
    x, axes = n.args[:2]
    if list(axes) == list(range(len(axes))):
        return None
    return e.b.op("Transpose", [e.name(x)], perm=[int(a) for a in axes])


@_reg("broadcast_to")
def _broadcast(e: Any, n: Any) -> Any:
    x, shape = n.args[:2]
    if tuple(shape) == tuple(x.shape):
        return None
    return e.b.op("Expand", [e.name(x), e.b.intvec(shape)])


@_reg("index")
def _index(e: Any, n: Any) -> Any:
    x, key = n.args[:2]
    axes, starts, ends, steps, drop, new = [], [], [], [], [], []
    ax = out_pos = 0
    for k in key:
        if k is None:
            new.append(out_pos)
            out_pos += 1
            continue
        size = x.shape[ax]
        if isinstance(k, int):
            axes.append(ax)
            starts.append(k)
            ends.append(k + 1)
            steps.append(1)
            drop.append(ax)
        else:
            start, stop, step = k.start, k.stop, k.step or 1
            if stop is None:
                stop = INT64_MIN
            elif step > 0 and stop >= size:
                stop = INT64_MAX      # "to the end": stays right when the axis is dynamic
            if not (start == 0 and step == 1 and stop == INT64_MAX):
                axes.append(ax)
                starts.append(start)
                ends.append(stop)
                steps.append(step)
            out_pos += 1
        ax += 1
    y = e.name(x)
    if axes:
        y = e.b.op("Slice", [y, e.b.intvec(starts), e.b.intvec(ends), e.b.intvec(axes),
                             e.b.intvec(steps)])
    if drop:
        y = e.b.op("Squeeze", [y, e.b.intvec(drop)])
    if new:
        y = e.b.op("Unsqueeze", [y, e.b.intvec(new)])
    return y if y != e.name(x) else None


@_reg("flip")
def _flip(e: Any, n: Any) -> str:
    x, axes = n.args[:2]
    k = len(axes)
    return e.b.op("Slice", [e.name(x), e.b.intvec([-1] * k), e.b.intvec([INT64_MIN] * k),
                            e.b.intvec(list(axes)), e.b.intvec([-1] * k)])


@_reg("concat")
def _concat(e: Any, n: Any) -> str:
    xs, axis = n.args[:2]
    return e.b.op("Concat", [e.name(v) for v in xs], axis=int(axis))


@_reg("pad")
def _pad(e: Any, n: Any) -> str:
    x, widths, value = n.args[:3]
    pads = [int(w[0]) for w in widths] + [int(w[1]) for w in widths]
    return e.b.op("Pad", [e.name(x), e.b.intvec(pads), e.operand(value, x)], mode="constant")


@_reg("gather_nd")
def _gather_nd(e: Any, n: Any) -> str:
    x, indices = n.args[:2]
    cols = [e.b.op("Unsqueeze", [e.name(i), e.b.intvec([-1])]) for i in indices]
    idx = cols[0] if len(cols) == 1 else e.b.op("Concat", cols, axis=-1)
    return e.b.op("GatherND", [e.name(x), idx])


@_reg("scatter_nd")
def _scatter_nd(e: Any, n: Any) -> str:
    x, indices, values, accumulate = n.args[:4]
    cols = [e.b.op("Unsqueeze", [e.name(i), e.b.intvec([-1])]) for i in indices]
    idx = cols[0] if len(cols) == 1 else e.b.op("Concat", cols, axis=-1)
    if _is_scalar(values):
        upd = e.b.op("Expand", [e.operand(values, x), e.b.intvec(indices[0].shape)])
    else:
        upd = e.name(values)
    return e.b.op("ScatterND", [e.name(x), idx, upd],
                  reduction="add" if accumulate else None)


@_reg("sort", "argsort")
def _sort(e: Any, n: Any) -> str:
    x, axis, descending = n.args[:3]
    vals, idx = e.b.op("TopK", [e.name(x), e.b.intvec([x.shape[axis]])], n_out=2,
                       axis=int(axis), largest=int(bool(descending)), sorted=1)
    return vals if n.op == "sort" else idx


@_reg("matmul")
def _matmul(e: Any, n: Any) -> str:
    return e.b.op("MatMul", [e.name(n.args[0]), e.name(n.args[1])])


# ------------------------------------------------------------------------ creation
@_reg("full", "empty")
def _full(e: Any, n: Any) -> str:
    from onnx import numpy_helper
    if n.op == "full":
        shape, value, dtype = n.args[:3]
    else:
        (shape, dtype), value = n.args[:2], 0
    arr = np.asarray([value], dtype=e.np_dtype(str(dtype)))
    return e.b.op("ConstantOfShape", [e.b.intvec(shape)], value=numpy_helper.from_array(arr))


@_reg("arange")
def _arange(e: Any, n: Any) -> str:
    from onnx import TensorProto
    start, step, count, dtype = n.args[:4]
    b = e.b
    r = b.op("Range", [b.const(np.int64(0)), b.intvec([count], scalar=True),
                       b.const(np.int64(1))])
    if str(dtype) != "int64":
        r = b.op("Cast", [r], to=onnx_dtype(str(dtype)))
    np_dt = e.np_dtype(str(dtype))
    if step != 1:
        r = b.op("Mul", [r, b.const(np.asarray(step, dtype=np_dt))])
    if start != 0:
        r = b.op("Add", [r, b.const(np.asarray(start, dtype=np_dt))])
    _ = TensorProto
    return r


@_reg("assign", "assign_from_host")
def _assign(e: Any, n: Any) -> str:
    dst, src = n.args[:2]
    if _is_scalar(src):
        from onnx import numpy_helper
        arr = np.asarray([src], dtype=e.np_dtype(dst.dtype))
        return e.b.op("ConstantOfShape", [e.b.intvec(dst.shape)],
                      value=numpy_helper.from_array(arr))
    s = e.name(src)
    if tuple(src.shape) != tuple(dst.shape):
        s = e.b.op("Expand", [s, e.b.intvec(dst.shape)])
    return e.b.op("Identity", [s])
