"""Which primitives a fused kernel computes (sets only: every expression's text comes from
:mod:`omnitensor.kernels.scalar`, the one table of per-element formulas).

Only what the fused renderers reproduce with the backends' exact per-element semantics
fuses: real floating dtypes (float32, float64) for arithmetic and math functions,
comparisons on floats, integers and bools, logical ops on bools, ``where`` and the casts to
a float or to bool. Integer arithmetic, float16/bfloat16 and complex stay primitive calls.
An op also fuses only where :func:`omnitensor.kernels.scalar.expr` renders it for numba and
for the C dialects (None there means not computed).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from ...backends.base import BINARY, UNARY
from ...kernels import primitives, scalar
from ...kernels.dialect import CUDA_C, OPENCL_C

FLOATS = frozenset(("float32", "float64"))
INTS = frozenset(("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"))
ANY = FLOATS | INTS | {"bool"}

#: the fusion class of each primitive (its row of ``kernels/primitives.py``): float -> float
#: arithmetic and math functions (result dtype = operand dtype), float -> bool predicates,
#: comparisons on any real dtype, logical ops on bools
FLOAT_MATH = primitives.where(fuse=primitives.MATH)
FLOAT_PREDICATES = primitives.where(fuse=primitives.PREDICATE)
COMPARISONS = primitives.where(fuse=primitives.COMPARISON)
LOGICAL = primitives.where(fuse=primitives.LOGICAL)

_DIALECTS = (scalar.NUMBA, OPENCL_C, CUDA_C)


@lru_cache(maxsize=None)
def _rendered(op: str, dtype: str) -> bool:
    """Whether every fused dialect renders ``op`` on ``dtype``."""
    xs = ("a", "b", "c")[:arity(op)]
    return all(scalar.expr(op, dtype, xs, d) is not None for d in _DIALECTS)


def supports(op: str, in_dtype: str, out_dtype: str) -> bool:
    """Whether a fused kernel computes ``op`` on ``in_dtype`` giving ``out_dtype``."""
    if op == "astype":
        return in_dtype in ANY and (out_dtype in FLOATS or out_dtype == "bool") and all(
            scalar.cast(in_dtype, out_dtype, "x", d) is not None for d in _DIALECTS)
    if op == "where":
        return out_dtype in ANY
    if op in FLOAT_MATH:
        ok = in_dtype in FLOATS and out_dtype == in_dtype
    elif op in FLOAT_PREDICATES:
        ok = in_dtype in FLOATS
    elif op in COMPARISONS:
        ok = in_dtype in ANY
    elif op in LOGICAL:
        ok = in_dtype == "bool"
    else:
        return False
    return ok and _rendered(op, in_dtype) and str(scalar.result_dtype(op, in_dtype)) == \
        out_dtype


def arity(op: str) -> int:
    """How many operands ``op`` takes in a fused kernel."""
    if op == "where":
        return 3
    return 2 if op in scalar.BINARY_OPS else 1


_ALL_EW = frozenset(UNARY + BINARY)


def is_value(x: Any) -> bool:
    """Whether ``x`` is a graph Value (an operand array), not a constant."""
    return hasattr(x, "id") and hasattr(x, "shape") and hasattr(x, "dtype")


def elementwise(node: Any) -> tuple | None:
    """(op, operands, operand dtype, in-place buffer Value or None) when graph node
    ``node`` is an elementwise primitive a fused kernel computes, else None."""
    op = node.op
    kw = node.kwargs
    if any(k != "out" for k in kw) or len(node.outputs) != 1:
        return None
    if getattr(node, "device", None) is not None:
        return None  # ran on another device than the graph's (a 0-d cpu operand)
    buf = kw.get("out")
    if buf is not None and not is_value(buf):
        return None
    out = node.outputs[0]
    if any(n == 0 for n in out.shape):
        return None
    args = list(node.args)
    if op == "astype":
        x = args[0]
        # a cast whose result is stored in another dtype than asked for (bfloat16 kept in
        # float32 storage on sycl: the backend rounds) is not the plain cast a kernel does
        if not is_value(x) or len(args) < 2 or str(args[1]) != str(out.dtype):
            return None
        name = "astype"
        operands = [x]
        in_dtype = str(x.dtype)
    elif op == "hook:sigmoid":
        name, operands = "sigmoid", args[:1]
        in_dtype = str(out.dtype)
    elif op == "where" or op in _ALL_EW:
        name, operands = op, args
        vals = [a for a in args if is_value(a)]
        if not vals:
            return None
        in_dtype = str(vals[-1].dtype) if op == "where" else str(vals[0].dtype)
    else:
        return None
    if len(operands) != arity(name) or not supports(name, in_dtype, str(out.dtype)):
        return None
    if op == "where" and not (is_value(operands[0]) and str(operands[0].dtype) == "bool"):
        return None
    for a in operands:
        if is_value(a):
            want = "bool" if (op == "where" and a is operands[0]) else in_dtype
            if str(a.dtype) != want:
                return None
        elif not isinstance(a, (bool, int, float)):
            return None
    return name, operands, in_dtype, buf
