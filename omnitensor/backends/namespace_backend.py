"""One adapter for every library that offers a NumPy-like array namespace.

NumPy (``cpu``), CuPy (``cuda``) and dpnp (``sycl``) share this implementation of the
backend contract, the way array-api-compat binds one implementation to several libraries:
a subclass says which namespace ``xp`` it wraps, how to place arrays on a device
(``_device_kw``) and overrides only what its library lacks or does differently.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

import ml_dtypes
import numpy as np

from ..kernels.primitives import PRIMITIVES, Primitive
from .base import BINARY, FFT, LINALG, UNARY, Backend
from .philox import philox_bits

# Array API name -> NumPy-style name, for namespaces that predate the standard's spellings.
_LEGACY_NAMES = {
    "asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
    "acosh": "arccosh", "atanh": "arctanh", "atan2": "arctan2", "pow": "power",
    "bitwise_invert": "invert", "bitwise_left_shift": "left_shift",
    "bitwise_right_shift": "right_shift", "concat": "concatenate",
    "permute_dims": "transpose",
}


def lookup(xp: Any, name: str) -> Any:
    """``xp.name``, falling back to the library's pre-Array-API spelling."""
    fn = getattr(xp, name, None)
    if fn is None and name in _LEGACY_NAMES:
        fn = getattr(xp, _LEGACY_NAMES[name], None)
    return fn


#: templates that run on one element only (``math.``, ``and``/``or``, conditionals)
_SCALAR_ONLY = re.compile(r"\bmath\.|\b(and|or|if)\b")


def table_formula(xp: Any, row: Primitive) -> Any:
    """The primitive of table row ``row`` computed over ``xp`` from the row's Python
    template (the cpu JIT's formula: NumPy functions and operators, which run on whole
    arrays as well), for a primitive the library does not have, so a new row needs no
    binding in each adapter and its formula stays written twice (C and Python). None where
    the template runs on one element only; the adapter then binds one itself (``erf``)."""
    if _SCALAR_ONLY.search(row.numba):
        return None
    args = "x" if row.arity == 1 else "a, b"
    body = re.sub(r"\bnp\.", "xp.", row.numba).replace(
        "{T}", f"xp.asarray({args[0]}).dtype.type")  # {T}(1): a scalar of the operand's dtype
    formula = eval(f"lambda {args}: {body}", {"xp": xp})  # the table's own text, no input

    def primitive(*operands: Any, out: Any = None) -> Any:
        first = operands[0]
        dtype = _result_dtype(row, first.dtype)
        result = formula(*operands)
        if row.arity == 1 and getattr(result, "shape", None) != first.shape:
            # a constant template ({T}(0)): one value, on the operand's device
            result = xp.full_like(first, result, dtype=dtype)
        elif result.dtype != dtype or any(result is o for o in operands):
            result = xp.asarray(result).astype(dtype)  # a new array of the row's result dtype
        if out is None:
            return xp.asarray(result)
        out[...] = result
        return out
    return primitive


def _result_dtype(row: Primitive, dtype: Any) -> np.dtype:
    """The dtype of ``row``'s result on operands of ``dtype`` (its ``out`` field)."""
    if row.out == "bool":
        return np.dtype(np.bool_)
    if row.out == "real" and np.dtype(dtype).kind == "c":
        return np.empty(0, dtype).real.dtype
    return np.dtype(dtype)


_ROWS = {p.name: p for p in PRIMITIVES}


def library_spmm(sparse: Any, xp: Any, rows: Any, cols: Any, values: Any,
                 shape: tuple[int, int], dense: Any) -> Any:
    """The ``spmm`` hook (``backends/base.py``) over a SciPy-style sparse module
    (``scipy.sparse`` for NumPy, ``cupyx.scipy.sparse`` for CuPy: cuSPARSE): COO to CSR
    (duplicates summed), times the dense matrix."""
    index = xp.int32 if max(shape) < 2 ** 31 and rows.shape[0] < 2 ** 31 else xp.int64
    a = sparse.coo_matrix((values, (rows.astype(index), cols.astype(index))), shape=shape)
    return xp.asarray(a.tocsr() @ xp.ascontiguousarray(dense))


_U32 = np.dtype(np.uint32)
_BF16 = np.dtype(ml_dtypes.bfloat16)
_F32 = np.dtype(np.float32)


class NamespaceBackend(Backend):
    """Backend contract implemented over an array namespace ``xp``."""

    xp: Any = None
    #: True where the library has no bfloat16 (dpnp, CuPy): a bfloat16 array is then held
    #: *widened*, as float32 whose values lie on bfloat16's grid (every cast to bfloat16
    #: rounds to nearest even). Core computes bfloat16 in float32 anyway and narrows host
    #: copies (``core.tensor.host_array``), so results equal NumPy's bfloat16 bit for bit;
    #: the cost is 4 bytes per element instead of 2.
    widens_bfloat16 = False

    def __init__(self) -> None:
        if self.widens_bfloat16:
            self._widen_bfloat16()
        xp = self.xp
        for name in UNARY + BINARY:
            fn = lookup(xp, name)
            if fn is None and not hasattr(type(self), name):
                fn = table_formula(xp, _ROWS[name])  # None: the subclass binds it
            if fn is not None and name not in type(self).__dict__:
                setattr(self, name, fn)
        self._where = xp.where
        linalg = getattr(xp, "linalg", None)
        for name in LINALG:
            fn = getattr(linalg, name, None)
            if fn is not None:
                setattr(self, "linalg_" + name, self._linalg_result(fn))
        fft = getattr(xp, "fft", None)
        for name in FFT:
            fn = getattr(fft, name, None)
            if fn is not None:
                setattr(self, "fft_" + name, fn)

    def _linalg_result(self, fn: Any) -> Any:
        """Bind an ``xp.linalg`` routine as a ``linalg_*`` fast path (arrays, never
        scalars; tuples for multi-output routines)."""
        asarray = self.xp.asarray

        def call(*args: Any, **kwargs: Any) -> Any:
            out = fn(*args, **kwargs)
            if isinstance(out, tuple):
                return tuple(asarray(o) for o in out)
            return asarray(out)
        return call

    def _widen_bfloat16(self) -> None:
        """Route bfloat16 through the creation and cast methods as widened float32 (see
        ``widens_bfloat16``); every other primitive sees plain float32 arrays."""
        empty, full, arange = self.empty, self.full, self.arange
        from_numpy, astype = self.from_numpy, self.astype
        to_grid = self._round_to_bfloat16

        def empty_(shape: Any, dtype: Any, index: int) -> Any:
            return empty(shape, _F32 if np.dtype(dtype) == _BF16 else dtype, index)

        def full_(shape: Any, value: Any, dtype: Any, index: int) -> Any:
            if np.dtype(dtype) == _BF16:
                return full(shape, float(np.asarray(value, dtype=_BF16)), _F32, index)
            return full(shape, value, dtype, index)

        def arange_(start: Any, step: Any, n: int, dtype: Any, index: int) -> Any:
            if np.dtype(dtype) == _BF16:
                return to_grid(arange(start, step, n, _F32, index))
            return arange(start, step, n, dtype, index)

        def from_numpy_(array: Any, index: int) -> Any:
            if array.dtype == _BF16:
                array = array.astype(_F32)
            return from_numpy(array, index)

        def astype_(x: Any, dtype: Any) -> Any:
            if np.dtype(dtype) == _BF16:
                return to_grid(x if x.dtype == _F32 else astype(x, _F32))
            return astype(x, dtype)

        self.empty, self.full, self.arange = empty_, full_, arange_  # type: ignore[method-assign]
        self.from_numpy, self.astype = from_numpy_, astype_  # type: ignore[method-assign]

    def _round_to_bfloat16(self, x: Any) -> Any:
        """float32 ``x`` rounded to bfloat16's grid, to nearest even (ml_dtypes' and torch's
        rounding: add 0x7FFF plus the lowest kept bit, drop the low 16 bits); overflow goes
        to inf, NaN stays NaN. A new float32 array."""
        u = x.view(np.uint32)
        r = ((u + (((u >> 16) & 1) + 0x7FFF)) & 0xFFFF0000).view(np.float32)
        return self.xp.where(self.xp.isnan(x), x, r)

    # ------------------------------------------------------------------ placement
    def _device_kw(self, index: int) -> dict[str, Any]:
        """Keyword arguments placing a new array on device ``index``."""
        return {}

    # --------------------------------------------------------------------- memory
    def empty(self, shape, dtype, index):
        return self.xp.empty(shape, dtype=dtype, **self._device_kw(index))

    def full(self, shape, value, dtype, index):
        return self.xp.full(shape, value, dtype=dtype, **self._device_kw(index))

    def arange(self, start, step, n, dtype, index):
        xp = self.xp
        if np.dtype(dtype).kind in "iu":
            return xp.arange(start, start + n * step, step, dtype=dtype,
                             **self._device_kw(index))[:n]
        i = xp.arange(n, dtype=dtype, **self._device_kw(index))
        return i * xp.asarray(step, dtype=dtype, **self._device_kw(index)) + \
            xp.asarray(start, dtype=dtype, **self._device_kw(index))

    def astype(self, x, dtype):
        if dtype is _BF16:  # ml_dtypes warns on NaN (NumPy's float16 cast does not)
            with np.errstate(invalid="ignore"):
                return x.astype(dtype)
        if x.dtype.kind in "fc" and np.dtype(dtype) == _U32:
            return self._float_to_uint32(x)
        return x.astype(dtype)

    def _float_to_uint32(self, x: Any) -> Any:
        """A float array converted to uint32 as the generated kernels convert it
        (``kernels/ops.cast_expr``: x86's 32-bit conversion, of ``x - 2**31`` with the top
        bit set from 2**31 up), so NaN, inf and out-of-range values give one answer on every
        device: NumPy's own answer for those depends on the element's position in the array
        (its vector loop and its scalar tail convert differently)."""
        r = x.real if x.dtype.kind == "c" else x
        with np.errstate(invalid="ignore", over="ignore"):
            low = r.astype(np.int32).astype(_U32)
            high = (r - 2.0 ** 31).astype(np.int32).astype(_U32) ^ _U32.type(1 << 31)
            return self.xp.where(r >= 2.0 ** 31, high, low)

    def copy(self, x):
        # ascontiguousarray already copies a non-contiguous array: copy only once
        return x.copy() if x.flags.c_contiguous else self.xp.ascontiguousarray(x)

    def contiguous(self, x):
        return x if x.flags.c_contiguous else self.xp.ascontiguousarray(x)

    def strides(self, x):
        item = x.dtype.itemsize
        return tuple(s // item for s in x.strides)

    def as_strided(self, base, shape, strides, offset):
        # NumPy and CuPy both have stride_tricks.as_strided (byte strides), a shared view
        item = base.dtype.itemsize
        flat = base.reshape(-1)[offset:]
        return self.xp.lib.stride_tricks.as_strided(
            flat, tuple(shape), tuple(s * item for s in strides))

    def assign(self, dst, src):
        dst[...] = src

    def assign_from_host(self, dst, host):
        # NumPy copies; dpnp copies host memory straight into the (strided) USM view,
        # synchronously, about twice as fast as from_numpy + assign for 16 MB
        dst[...] = host

    # ---------------------------------------------------------------- elementwise
    def where(self, cond, a, b):
        return self._where(cond, a, b)

    # ----------------------------------------------------------------- reductions
    def _reduce(self, fn, x, axes, keepdims):
        if x.dtype == np.float16:  # accumulate in float32, as torch does
            return fn(x.astype(np.float32), axis=axes, keepdims=keepdims).astype(np.float16)
        # dtype= keeps the operand dtype (NumPy would widen small integers by itself)
        return fn(x, axis=axes, keepdims=keepdims, dtype=x.dtype)

    def sum(self, x, axes, keepdims):
        return self._reduce(self.xp.sum, x, axes, keepdims)

    def prod(self, x, axes, keepdims):
        return self._reduce(self.xp.prod, x, axes, keepdims)

    def max(self, x, axes, keepdims):
        return self.xp.max(x, axis=axes, keepdims=keepdims)

    def min(self, x, axes, keepdims):
        return self.xp.min(x, axis=axes, keepdims=keepdims)

    def any(self, x, axes, keepdims):
        return self.xp.any(x, axis=axes, keepdims=keepdims)

    def all(self, x, axes, keepdims):
        return self.xp.all(x, axis=axes, keepdims=keepdims)

    def argmax(self, x, axis, keepdims):
        return self.xp.argmax(x, axis=axis, keepdims=keepdims).astype(np.int64, copy=False)

    def argmin(self, x, axis, keepdims):
        return self.xp.argmin(x, axis=axis, keepdims=keepdims).astype(np.int64, copy=False)

    #: float32/float16/complex64 running sums accumulate in the double type and round once,
    #: as torch's CPU kernels do (acc_type): a sequential float32 sum of 10k values drifts by
    #: ~1e-6 relative, the double accumulator keeps it to the final rounding (~5e-8)
    _WIDER = {np.dtype(np.float16): np.float64, np.dtype(np.float32): np.float64,
              np.dtype(np.complex64): np.complex128}

    def wide_accumulation(self, x) -> bool:
        """Whether ``x``'s device computes in float64 (cumsum's accumulator)."""
        return True

    def cumsum(self, x, axis):
        wide = self._WIDER.get(x.dtype)
        if wide is not None and self.wide_accumulation(x):
            return self.xp.cumsum(x, axis=axis, dtype=wide).astype(x.dtype)
        return self.xp.cumsum(x, axis=axis, dtype=x.dtype)

    def cumprod(self, x, axis):
        return self.xp.cumprod(x, axis=axis, dtype=x.dtype)

    # ------------------------------------------------------------------- movement
    def reshape(self, x, shape, copy=None):
        return self.xp.reshape(x, shape, copy=copy)

    def permute(self, x, axes):
        return self.xp.transpose(x, axes)

    def broadcast_to(self, x, shape):
        return self.xp.broadcast_to(x, shape)

    def index(self, x, key):
        # a trailing Ellipsis keeps integer-only keys a 0-d *view* (NumPy would copy)
        return x[key + (Ellipsis,)]

    def flip(self, x, axes):
        return self.xp.flip(x, axis=axes)

    def concat(self, xs: Sequence[Any], axis: int):
        return self.xp.concatenate(list(xs), axis=axis)

    def pad(self, x, widths, value):
        return self.xp.pad(x, widths, mode="constant", constant_values=value)

    def diagonal(self, x, offset, axis1, axis2):
        return self.xp.diagonal(x, offset=offset, axis1=axis1, axis2=axis2)

    # ------------------------------------------------------------------- indexing
    def gather_nd(self, x, indices):
        return x[tuple(indices)]

    def scatter_nd(self, x, indices, values, accumulate):
        if accumulate:
            self.xp.add.at(x, tuple(indices), values)
        else:
            x[tuple(indices)] = values

    def take_along_axis(self, x, index, axis):
        return self.xp.take_along_axis(x, index, axis=axis)

    def index_advanced(self, x, key):
        """Fast path: NumPy-style mixed basic/advanced indexing native to the library
        (``key`` holds ints, normalised slices, None and int64 arrays)."""
        return x[key]

    def index_put_advanced(self, x, key, values):
        """Fast path: ``x[key] = values`` (no accumulation) natively."""
        x[key] = values

    def nonzero(self, x):
        return tuple(i.astype(np.int64, copy=False) for i in self.xp.nonzero(x))

    # -------------------------------------------------------------------- sorting
    def argsort(self, x, axis, descending, stable):
        xp = self.xp
        if not descending:
            return xp.argsort(x, axis=axis, kind="stable" if stable else None).astype(np.int64)
        # stable descending: sort the reversed array ascending, map back, reverse again,
        # so that equal elements keep their original order
        n = x.shape[axis]
        idx = xp.argsort(xp.flip(x, axis=axis), axis=axis, kind="stable")
        return (n - 1 - xp.flip(idx, axis=axis)).astype(np.int64)

    def sort(self, x, axis, descending, stable):
        if not descending:
            return self.xp.sort(x, axis=axis, kind="stable" if stable else None)
        return self.xp.flip(self.xp.sort(x, axis=axis), axis=axis)

    def searchsorted(self, sorted_x, values, side):
        xp = self.xp
        if sorted_x.ndim == 1:
            return xp.searchsorted(sorted_x, values, side=side).astype(np.int64)
        lead = sorted_x.shape[:-1]
        s2 = xp.reshape(sorted_x, (-1, sorted_x.shape[-1]))
        v2 = xp.reshape(values, (-1, values.shape[-1]))
        rows = [xp.searchsorted(s2[i], v2[i], side=side) for i in range(s2.shape[0])]
        out = xp.stack(rows) if rows else xp.empty(
            v2.shape, dtype=np.int64, **self._device_kw(self.device_index(sorted_x)))
        return xp.reshape(out.astype(np.int64), lead + (values.shape[-1],))

    # ------------------------------------------------------------- linear algebra
    def matmul(self, a, b):
        return self.xp.matmul(a, b)

    def einsum(self, subscripts, *operands):
        """Native einsum fast path (the composite in core is used where absent)."""
        return self.xp.einsum(subscripts, *operands)

    # --------------------------------------------------------------------- random
    def random_bits(self, shape, key, counter, index):
        n = int(np.prod(shape)) if shape else 1
        bits = philox_bits(self.xp, n, key, counter, **self._device_kw(index))
        return self.xp.reshape(bits, shape)
