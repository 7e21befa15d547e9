"""The rule of each backend primitive for a loaded program (see ``_verify``): from its
operands' declared shapes and dtypes and its constant arguments, check the arguments
against the primitive's contract (``backends/base.py``) and compute its results'
``(shape, dtype, bounds)`` (``bounds``: the min/max of integer values, when known at
load), charging the work and bytes one call costs. A rule returns None for a primitive
that writes into its first argument.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..backends.base import BINARY, PREDICATES, REDUCTIONS, UNARY
from ..compiler.ir import CHECK_ERRORS, Node, Value
from ..kernels.primitives import PRIMITIVES, where
from ._program import INFO, fits, is_int, numel

if TYPE_CHECKING:
    from ._verify import _Checker

__all__ = ["RULES", "EXTRA_KWARGS", "OUT_OK", "VIEWS", "INFO", "is_int", "numel", "fits"]

#: floating-point and integer functions: the primitives whose C kinds (their rows of
#: ``kernels/primitives.py``) hold no integer, or no floating, kind
_FLOAT_ONLY = frozenset(p.name for p in PRIMITIVES if not p.hook and set(p.kinds) <= set("fc"))
_INT_ONLY = frozenset(p.name for p in PRIMITIVES if not p.hook and set(p.kinds) <= set("biu"))
_TO_REAL = where(out="real")
VIEWS = frozenset(("reshape", "permute", "broadcast_to", "index", "flip", "diagonal",
                    "contiguous"))


Result = list[tuple[tuple[int, ...], str, Any]]


def _broadcast(c: "_Checker", shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*shapes))
    except ValueError:
        raise c.fail(f"shapes {shapes} do not broadcast") from None


def _elementwise(c: "_Checker", n: Node) -> Result:
    arity = 1 if n.op in UNARY else 2
    if len(n.args) != arity:
        raise c.fail(f"takes {arity} operand(s)")
    infos = [c.use(a) for a in n.args if isinstance(a, Value)]
    if not infos or (arity == 1 and len(infos) != 1):
        raise c.fail("needs an array operand")
    dtype = infos[0].dtype
    if any(i.dtype != dtype for i in infos):
        raise c.fail(f"operands of dtypes {[i.dtype for i in infos]} (one dtype per call)")
    for a in n.args:
        if not isinstance(a, Value):
            c.scalar(a, dtype)
    kind = INFO[dtype][0]
    if n.op in _FLOAT_ONLY and kind not in "fc":
        raise c.fail(f"{n.op} of {dtype} (a floating-point function)")
    if n.op in _INT_ONLY and kind not in "iub":
        raise c.fail(f"{n.op} of {dtype} (an integer function)")
    shape = _broadcast(c, [i.shape for i in infos])
    out = "bool" if n.op in PREDICATES else dtype
    if n.op in _TO_REAL and kind == "c":
        out = "float32" if dtype == "complex64" else "float64"
    bounds = None
    if n.op == "add" and len(infos) == 1 and infos[0].bounds and is_int(n.args[1]) and \
            isinstance(n.args[0], Value):
        lo, hi = infos[0].bounds
        bounds = (lo + n.args[1], hi + n.args[1])
    c.charge(numel(shape) + sum(numel(i.shape) for i in infos), _nbytes(shape, out))
    return [(shape, out, bounds)]


def _nbytes(shape: tuple[int, ...], dtype: str) -> int:
    return numel(shape) * INFO[dtype][1]


def _reduction(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 3:
        raise c.fail("takes (x, axes, keepdims)")
    x = c.use(n.args[0])
    axes = c.axes_arg(n.args[1], len(x.shape))
    if tuple(sorted(axes)) != axes:
        raise c.fail("axes must be sorted")
    keep = c.bool_arg(n.args[2], "keepdims")
    shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape) if keep or i not in axes)
    if n.op in ("max", "min") and any(x.shape[a] == 0 for a in axes):
        raise c.fail(f"{n.op} over an empty axis (it has no identity)")
    dtype = "bool" if n.op in ("any", "all") else x.dtype
    c.charge(numel(x.shape) + numel(shape), _nbytes(shape, dtype))
    return [(shape, dtype, None)]


def _arg_reduction(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 3:
        raise c.fail("takes (x, axis, keepdims)")
    x = c.use(n.args[0])
    keep = c.bool_arg(n.args[2], "keepdims")
    if n.args[1] is None:
        shape: tuple[int, ...] = tuple(1 for _ in x.shape) if keep else ()
    else:
        ax = c.axis_arg(n.args[1], len(x.shape))
        shape = tuple(1 if i == ax else d for i, d in enumerate(x.shape)
                      if keep or i != ax)
    if numel(x.shape) == 0:
        raise c.fail(f"{n.op} of an empty array")
    c.charge(numel(x.shape), _nbytes(shape, "int64"))
    return [(shape, "int64", None)]


def _scan(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 2:
        raise c.fail("takes (x, axis)")
    x = c.use(n.args[0])
    c.axis_arg(n.args[1], len(x.shape))
    c.charge(2 * numel(x.shape), _nbytes(x.shape, x.dtype))
    return [(x.shape, x.dtype, None)]


def _astype(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 2:
        raise c.fail("takes (x, dtype)")
    x = c.use(n.args[0])
    to = c.dtype_arg(n.args[1])
    # (a cast to int64 keeps the range of integer values; a narrower one may wrap)
    bounds = x.bounds if to == "int64" and INFO[x.dtype][0] in "iub" and x.bounds and \
        -2.0 ** 63 <= x.bounds[0] and x.bounds[1] < 2.0 ** 63 else None
    c.charge(2 * numel(x.shape), _nbytes(x.shape, to))
    return [(x.shape, to, bounds)]


def _copy(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 1:
        raise c.fail("takes one array")
    x = c.use(n.args[0])
    c.charge(2 * numel(x.shape), _nbytes(x.shape, x.dtype))
    return [(x.shape, x.dtype, x.bounds)]


def _assign(c: "_Checker", n: Node) -> None:
    if len(n.args) != 2:
        raise c.fail("takes (dst, src)")
    dst = c.use(n.args[0])
    src = n.args[1]
    if isinstance(src, Value):
        s = c.use(src)
        if s.dtype != dst.dtype:
            raise c.fail(f"writes {s.dtype} into {dst.dtype}")
        if len(s.shape) > len(dst.shape) or any(
                a != b and a != 1 for a, b in zip(reversed(s.shape), reversed(dst.shape))):
            raise c.fail(f"source {list(s.shape)} does not broadcast to the destination "
                         f"{list(dst.shape)}")
    else:
        c.scalar(src, dst.dtype)
    c.charge(2 * numel(dst.shape))
    c.in_place(n, n.args[0])


def _assign_from_host(c: "_Checker", n: Node) -> None:
    if len(n.args) != 2:
        raise c.fail("takes (dst, host)")
    dst = c.use(n.args[0])
    h = c.use(n.args[1], "host")
    if h.shape != dst.shape or h.dtype != dst.dtype:
        raise c.fail("the host array must have the destination's shape and dtype")
    c.charge(2 * numel(dst.shape))
    c.in_place(n, n.args[0])


def _where(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 3:
        raise c.fail("takes (cond, a, b)")
    cond = c.use(n.args[0])
    if cond.dtype != "bool":
        raise c.fail("the condition must be bool")
    arrays = [c.use(a) for a in n.args[1:] if isinstance(a, Value)]
    if not arrays:
        raise c.fail("needs an array operand")
    dtype = arrays[0].dtype
    if any(a.dtype != dtype for a in arrays):
        raise c.fail("operands of two dtypes")
    for a in n.args[1:]:
        if not isinstance(a, Value):
            c.scalar(a, dtype)
    shape = _broadcast(c, [cond.shape] + [a.shape for a in arrays])
    bounds = None
    if len(arrays) == 2 and arrays[0].bounds and arrays[1].bounds:
        (a0, a1), (b0, b1) = arrays[0].bounds, arrays[1].bounds
        bounds = (min(a0, b0), max(a1, b1))
    c.charge(4 * numel(shape), _nbytes(shape, dtype))
    return [(shape, dtype, bounds)]


def _reshape(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 2:
        raise c.fail("takes (x, shape)")
    x = c.use(n.args[0])
    shape = c.shape_arg(n.args[1])
    if numel(shape) != numel(x.shape):
        raise c.fail(f"cannot reshape {list(x.shape)} to {list(shape)}")
    copy = n.kwargs.get("copy")
    if copy is not None:
        c.bool_arg(copy, "copy")
    c.charge(2 * numel(shape), _nbytes(shape, x.dtype))   # (a copy where no view fits)
    return [(shape, x.dtype, x.bounds)]


def _permute(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 2:
        raise c.fail("takes (x, axes)")
    x = c.use(n.args[0])
    axes = n.args[1]
    if not isinstance(axes, (tuple, list)) or sorted(axes) != list(range(len(x.shape))) \
            or not all(is_int(a) for a in axes):
        raise c.fail(f"{axes!r} is not a permutation of {len(x.shape)} axes")
    return [(tuple(x.shape[a] for a in axes), x.dtype, x.bounds)]


def _broadcast_to(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 2:
        raise c.fail("takes (x, shape)")
    x = c.use(n.args[0])
    shape = c.shape_arg(n.args[1])
    if len(shape) < len(x.shape) or any(
            d != s and d != 1 for d, s in zip(reversed(x.shape), reversed(shape))):
        raise c.fail(f"cannot broadcast {list(x.shape)} to {list(shape)}")
    return [(shape, x.dtype, x.bounds)]


def _index(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 2 or not isinstance(n.args[1], tuple):
        raise c.fail("takes (x, key)")
    x = c.use(n.args[0])
    key = n.args[1]
    if sum(k is not None for k in key) != len(x.shape):
        raise c.fail(f"the key {key!r} does not have one entry per axis")
    shape: list[int] = []
    dims = iter(x.shape)
    for k in key:
        if k is None:
            shape.append(1)
            continue
        size = next(dims)
        if is_int(k):
            if not 0 <= k < size:
                raise c.fail(f"index {k} is out of range for an axis of size {size}")
        elif isinstance(k, slice):
            shape.append(_slice_length(c, k, size))
        else:
            raise c.fail(f"key entry {k!r}")
    return [(tuple(shape), x.dtype, x.bounds)]


def _slice_length(c: "_Checker", k: slice, size: int) -> int:
    start, stop, step = k.start, k.stop, k.step
    if not (is_int(start) and is_int(step) and step != 0 and
            (is_int(stop) or (stop is None and step < 0))):
        raise c.fail(f"slice {k!r} is not normalised")
    length = len(range(start, -1 if stop is None else stop, step))
    if length == 0:
        if not 0 <= start <= size:
            raise c.fail(f"slice {k!r} starts outside an axis of size {size}")
        return 0
    last = start + (length - 1) * step
    if not (0 <= start < size and 0 <= last < size):
        raise c.fail(f"slice {k!r} reaches outside an axis of size {size}")
    return length


def _flip(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 2:
        raise c.fail("takes (x, axes)")
    x = c.use(n.args[0])
    c.axes_arg(n.args[1], len(x.shape))
    return [(x.shape, x.dtype, x.bounds)]


def _concat(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 2 or not isinstance(n.args[0], (tuple, list)) or not n.args[0]:
        raise c.fail("takes (arrays, axis)")
    xs = [c.use(a) for a in n.args[0]]
    first = xs[0]
    ax = c.axis_arg(n.args[1], len(first.shape))
    for x in xs:
        if x.dtype != first.dtype or len(x.shape) != len(first.shape) or any(
                a != b for i, (a, b) in enumerate(zip(x.shape, first.shape)) if i != ax):
            raise c.fail("arrays of different dtypes or shapes off the axis")
    shape = list(first.shape)
    shape[ax] = sum(x.shape[ax] for x in xs)
    bounds = None
    if all(x.bounds for x in xs):
        bounds = (min(x.bounds[0] for x in xs if x.bounds),
                  max(x.bounds[1] for x in xs if x.bounds))
    c.charge(2 * numel(tuple(shape)), _nbytes(tuple(shape), first.dtype))
    return [(tuple(shape), first.dtype, bounds)]


def _pad(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 3:
        raise c.fail("takes (x, widths, value)")
    x = c.use(n.args[0])
    w = n.args[1]
    if not isinstance(w, (tuple, list)) or len(w) != len(x.shape) or not all(
            isinstance(p, (tuple, list)) and len(p) == 2 and all(is_int(q) and q >= 0
                                                                 for q in p) for p in w):
        raise c.fail(f"widths {w!r} must be one (before, after) pair >= 0 per axis")
    c.scalar(n.args[2], x.dtype)
    shape = tuple(d + a + b for d, (a, b) in zip(x.shape, w))
    c.charge(2 * numel(shape), _nbytes(shape, x.dtype))
    return [(shape, x.dtype, None)]


def _diagonal(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 4:
        raise c.fail("takes (x, offset, axis1, axis2)")
    x = c.use(n.args[0])
    off = n.args[1]
    a1, a2 = (c.axis_arg(a, len(x.shape)) for a in n.args[2:])
    if not is_int(off) or a1 == a2:
        raise c.fail("offset must be an int and the axes distinct")
    n1, n2 = x.shape[a1], x.shape[a2]
    length = max(0, min(n1, n2 - off) if off >= 0 else min(n1 + off, n2))
    rest = tuple(d for i, d in enumerate(x.shape) if i not in (a1, a2))
    return [(rest + (length,), x.dtype, x.bounds)]


def _gather_nd(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 2:
        raise c.fail("takes (x, indices)")
    x = c.use(n.args[0])
    shape, _ = c.index_arrays(n.args[1], len(x.shape))
    c.guard_indices(n, n.args[1], x.shape)
    c.charge((len(x.shape) + 1) * numel(shape), _nbytes(shape, x.dtype))
    return [(shape, x.dtype, None)]


def _scatter_nd(c: "_Checker", n: Node) -> None:
    if len(n.args) != 4:
        raise c.fail("takes (x, indices, values, accumulate)")
    x = c.use(n.args[0])
    shape, _ = c.index_arrays(n.args[1], len(x.shape))
    vals = n.args[2]
    if isinstance(vals, Value):
        v = c.use(vals)
        if v.dtype != x.dtype or v.shape != shape:
            raise c.fail("values must have the indices' shape and x's dtype")
    else:
        c.scalar(vals, x.dtype)
    c.bool_arg(n.args[3], "accumulate")
    c.guard_indices(n, n.args[1], x.shape)
    c.charge((len(x.shape) + 2) * numel(shape))
    c.in_place(n, n.args[0])


def _sort(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 4:
        raise c.fail("takes (x, axis, descending, stable)")
    x = c.use(n.args[0])
    ax = c.axis_arg(n.args[1], len(x.shape))
    c.bool_arg(n.args[2], "descending")
    c.bool_arg(n.args[3], "stable")
    m = max(x.shape[ax], 2)
    dtype = "int64" if n.op == "argsort" else x.dtype
    c.charge(numel(x.shape) * (1 + math.ceil(math.log2(m))), _nbytes(x.shape, dtype))
    return [(x.shape, dtype, None)]


def _searchsorted(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 3 or n.args[2] not in ("left", "right"):
        raise c.fail("takes (sorted, values, 'left' | 'right')")
    s, v = c.use(n.args[0]), c.use(n.args[1])
    if s.dtype != v.dtype or not s.shape or not v.shape or \
            (len(s.shape) > 1 and s.shape[:-1] != v.shape[:-1]):
        raise c.fail("sorted and values must share a dtype and their leading shape")
    c.charge(numel(v.shape) * (1 + math.ceil(math.log2(max(s.shape[-1], 2)))),
             _nbytes(v.shape, "int64"))
    return [(v.shape, "int64", (0, s.shape[-1]))]


def _matmul(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 2:
        raise c.fail("takes (a, b)")
    a, b = c.use(n.args[0]), c.use(n.args[1])
    if a.dtype != b.dtype or len(a.shape) < 2 or len(a.shape) != len(b.shape) or \
            a.shape[:-2] != b.shape[:-2] or a.shape[-1] != b.shape[-2]:
        raise c.fail(f"cannot multiply {a.dtype}{list(a.shape)} by "
                     f"{b.dtype}{list(b.shape)} ((..., M, K) @ (..., K, N), one batch "
                     f"shape)")
    shape = a.shape[:-1] + (b.shape[-1],)
    c.charge(numel(shape) * max(a.shape[-1], 1) + numel(a.shape) + numel(b.shape),
             _nbytes(shape, a.dtype))
    return [(shape, a.dtype, None)]


def _random_bits(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 4:
        raise c.fail("takes (shape, key, counter, index)")
    shape = c.shape_arg(n.args[0])
    key, counter = n.args[1], n.args[2]
    if not (isinstance(key, (tuple, list)) and len(key) == 2 and
            all(is_int(k) and 0 <= k < 1 << 32 for k in key) and is_int(counter) and
            0 <= counter < 1 << 64):
        raise c.fail("key must be two 32-bit words and counter a 64-bit count")
    c.device_index(n.args[3])
    c.charge(numel(shape), _nbytes(shape, "uint32"))
    return [(shape, "uint32", None)]


def _full(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 4:
        raise c.fail("takes (shape, value, dtype, index)")
    shape = c.shape_arg(n.args[0])
    dtype = c.dtype_arg(n.args[2])
    c.scalar(n.args[1], dtype)
    c.device_index(n.args[3])
    c.charge(numel(shape), _nbytes(shape, dtype))
    v = n.args[1]
    bounds = (float(v), float(v)) if isinstance(v, (bool, int)) else None
    return [(shape, dtype, bounds)]


def _empty(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 3:
        raise c.fail("takes (shape, dtype, index)")
    shape = c.shape_arg(n.args[0])
    dtype = c.dtype_arg(n.args[1])
    c.device_index(n.args[2])
    c.charge(numel(shape), _nbytes(shape, dtype))
    return [(shape, dtype, (0.0, 0.0))]


def _arange(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 5:
        raise c.fail("takes (start, step, n, dtype, index)")
    start, step, length = n.args[:3]
    dtype = c.dtype_arg(n.args[3])
    c.scalar(start, dtype)
    c.scalar(step, dtype)
    if not is_int(length) or length < 0:
        raise c.fail(f"length {length!r}")
    c.device_index(n.args[4])
    bounds = None
    if is_int(start) and is_int(step) and length:
        ends = (start, start + step * (length - 1))
        bounds = (float(min(ends)), float(max(ends)))
    c.charge(length, _nbytes((length,), dtype))
    return [((length,), dtype, bounds)]


def _from_numpy(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 2:
        raise c.fail("takes (host array, index)")
    h = c.use(n.args[0], "host")
    c.device_index(n.args[1])
    c.charge(numel(h.shape), _nbytes(h.shape, h.dtype))
    return [(h.shape, h.dtype, h.bounds)]


def _check(c: "_Checker", n: Node) -> Result:
    if len(n.args) != 1 or n.outputs:
        raise c.fail("takes one flag and returns nothing")
    f = c.use(n.args[0])
    what = n.kwargs.get("what", "")
    if f.shape != () or f.dtype != "bool" or not isinstance(what, str) or len(what) > 1000:
        raise c.fail("the flag must be a 0-d bool and the message a short string")
    if n.kwargs.get("error", "RuntimeError") not in CHECK_ERRORS:
        raise c.fail(f"the error must be one of {sorted(CHECK_ERRORS)}")
    return []


RULES: dict[str, Callable[[Any, Node], Any]] = {
    "where": _where, "argmax": _arg_reduction, "argmin": _arg_reduction, "cumsum": _scan,
    "cumprod": _scan, "astype": _astype, "copy": _copy, "contiguous": _copy,
    "assign": _assign, "assign_from_host": _assign_from_host, "reshape": _reshape,
    "permute": _permute, "broadcast_to": _broadcast_to, "index": _index, "flip": _flip,
    "concat": _concat, "pad": _pad, "diagonal": _diagonal, "gather_nd": _gather_nd,
    "scatter_nd": _scatter_nd, "sort": _sort, "argsort": _sort,
    "searchsorted": _searchsorted, "matmul": _matmul, "random_bits": _random_bits,
    "full": _full, "empty": _empty, "arange": _arange, "from_numpy": _from_numpy,
    "check": _check,
    **{op: _elementwise for op in UNARY + BINARY}, **{op: _reduction for op in REDUCTIONS},
}
#: the keywords a primitive may be recorded with, besides ``out=`` (elementwise, reductions)
EXTRA_KWARGS = {"reshape": {"copy"}, "random_bits": {"generator"}, "check": {"what", "error"}}
OUT_OK = frozenset(UNARY + BINARY + REDUCTIONS)


