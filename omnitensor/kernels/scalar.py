"""The elementwise op table as an API: one op's scalar expression over operand expressions,
for any language, so fused kernels (``omnitensor.compiler.fusion``) render the same
NumPy-exact formulas the eager OpenCL kernels use.

Each function asks the language (a :class:`~.dialect.Language`): the C dialects
(:data:`~.dialect.OPENCL_C`, :data:`~.dialect.CUDA_C`, :data:`~.dialect.SYCL`) render
:mod:`.ops`' templates (:mod:`.exprs`); :data:`NUMBA` (:mod:`.numba_dialect`) renders
Python source for numba's ``njit``, each result converted to the op's result dtype.

    >>> expr("add", np.dtype("float32"), ("x0", "x1"))
    '(x0) + (x1)'

Expressions are in the compute type (float for float16 in C); load with :func:`load`, store
with :func:`store`, put :func:`prelude` and :func:`helpers` of every dtype used once at the
top of the program.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from . import ops
from .dialect import OPENCL_C, Language
from .exprs import result_dtype
from .numba_dialect import NUMBA

__all__ = ["NUMBA", "UNARY_OPS", "BINARY_OPS", "result_dtype", "expr", "helpers", "prelude",
           "compute_type", "storage_type", "load", "store", "cast", "where", "literal"]

UNARY_OPS: tuple[str, ...] = tuple(ops.UNARY)
BINARY_OPS: tuple[str, ...] = tuple(ops.BINARY)


def expr(op: str, dtype: np.dtype | str, operands: Sequence[str],
         d: Language = OPENCL_C) -> str | None:
    """``op`` of ``operands`` (expressions in ``dtype``'s compute type), or None where the
    op is not computed for ``dtype`` in dialect ``d``. For C dialects the result is in the
    compute type of :func:`result_dtype`; for :data:`NUMBA` it is converted to it."""
    return d.expr(op, dtype, operands)


def helpers(dtype: np.dtype | str, d: Language = OPENCL_C) -> str:
    """The helper functions :func:`expr`'s results for ``dtype`` may call (for numba:
    jitted Python functions, after :func:`prelude`; the same text for every float dtype,
    so put it once)."""
    return d.helpers(dtype)


def prelude(d: Language = OPENCL_C) -> str:
    """What a program in dialect ``d`` starts with (pragmas, typedefs; imports for numba)."""
    return d.prelude


def compute_type(dtype: np.dtype | str, d: Language = OPENCL_C) -> str:
    """The type expressions of ``dtype`` are computed in (``float`` for float16 in C)."""
    return d.compute_type(dtype)


def storage_type(dtype: np.dtype | str, d: Language = OPENCL_C) -> str:
    """The element type of a buffer of ``dtype`` (``half``, or ``ushort`` bits in CUDA)."""
    return d.storage_type(dtype)


def load(dtype: np.dtype | str, ptr: str, idx: str, d: Language = OPENCL_C) -> str:
    """Element ``idx`` of buffer ``ptr`` in the compute type."""
    return d.load(dtype, ptr, idx)


def store(dtype: np.dtype | str, ptr: str, idx: str, val: str,
          d: Language = OPENCL_C) -> str:
    """A statement storing compute-type ``val`` at element ``idx`` of ``ptr``."""
    return d.store(dtype, ptr, idx, val)


def cast(src: np.dtype | str, dst: np.dtype | str, x: str,
         d: Language = OPENCL_C) -> str | None:
    """``x`` (in ``src``'s compute type) converted to ``dst``'s compute type as the eager
    cast kernels convert (anything -> bool is ``!= 0``), or None where ``d`` does not render
    the pair (numba: float16 and complex)."""
    return d.cast(src, dst, x)


def where(cond: str, a: str, b: str, d: Language = OPENCL_C) -> str:
    """``a`` where ``cond`` (a bool: 0/1 in C) is true, else ``b``."""
    return d.where(cond, a, b)


def literal(value: object, dtype: np.dtype | str, d: Language = OPENCL_C) -> str:
    """The constant ``value`` of ``dtype`` as an expression in its compute type, exact:
    ``value`` is converted to ``dtype`` first (float32 constants round to float32, as NumPy
    converts a Python scalar operand)."""
    return d.literal(value, dtype)
