"""The backend contract: what every device adapter provides to core.

Core (``omnitensor/core``) owns every dtype rule, shape rule and backward formula; a backend
only executes primitives on *its own array type* (``numpy.ndarray``, ``cupy.ndarray``,
``dpnp.ndarray``, the OpenCL backend's ``CLArray``). Core guarantees, before it calls a
primitive:

* operands of an elementwise primitive have the **same dtype** and are **already broadcast to
  the output shape** (core calls :meth:`Backend.broadcast_to`, a stride-0 view); an operand
  may instead be a **Python scalar** (``bool``/``int``/``float``/``complex``) already
  representable in that dtype;
* axes are normalised (non-negative, sorted, unique), indices are in range and non-negative,
  shapes are valid: a backend never validates user input, it only raises
  :class:`~omnitensor.errors.UnsupportedDTypeError` for a dtype its device lacks;
* dtypes are passed as ``numpy.dtype`` objects (every stack understands them).

Every array type must expose ``.shape`` (tuple of ints), ``.dtype`` (a ``numpy.dtype``)
and ``.ndim``. Results are always new arrays of the backend's type (0-d arrays, never
scalars), except where a method says it returns a view.

**Elementwise primitives** are plain attributes called like NumPy ufuncs:
``backend.add(a, b)``, ``backend.exp(x)``, each accepting ``out=`` (an array of the result
dtype and shape) for in-place ops. ``out`` may alias an input element for element; a
partial overlap must behave as if every input were read before any output is written. Names and semantics are the
Array API's (listed in :data:`UNARY` and :data:`BINARY`). Results have the operands' dtype,
except predicates (:data:`PREDICATES`: comparisons, ``isnan``...) which return ``bool``, and
``real``/``imag``/``abs`` of complex input which return the real dtype. Core never asks an
integer operand for a float-only function (it casts first). NaN propagates through
``maximum``/``minimum`` and through ``max``/``min`` reductions (torch and the standard).

Views: ``reshape`` (when possible), ``permute``, ``broadcast_to``, ``index`` (basic
indexing), ``flip``, ``diagonal`` return views sharing memory, so that in-place writes
through a view reach its base, as in torch.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

#: Elementwise functions of one operand (Array API names).
UNARY = (
    "negative", "positive", "abs", "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt",
    "square", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
    "acosh", "atanh", "erf", "erfc", "sign", "floor", "ceil", "round", "trunc", "reciprocal",
    "isnan", "isinf", "isfinite", "signbit", "logical_not", "bitwise_invert", "conj",
    "real", "imag",
)
#: Elementwise functions of two operands (Array API names; ``pow`` is the power function).
BINARY = (
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "pow", "maximum",
    "minimum", "atan2", "hypot", "logaddexp", "copysign", "nextafter", "equal", "not_equal",
    "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
    "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift",
)
#: Elementwise functions whose result is bool whatever the operand dtype.
PREDICATES = frozenset((
    "isnan", "isinf", "isfinite", "signbit", "logical_not", "equal", "not_equal", "less",
    "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
))
#: Reductions over a tuple of axes: ``backend.sum(x, axes, keepdims)``.
REDUCTIONS = ("sum", "prod", "max", "min", "any", "all")


class Backend:
    """Base class of device adapters. Subclasses set :attr:`name` and implement the
    methods below; optional fast paths (``conv2d``, ``softmax``, ``einsum``, ``linalg_*``,
    ``fft_*``) are looked up by core with ``getattr(backend, name, None)``."""

    #: device type string: "cpu", "opencl", "sycl", "cuda"
    name: str = ""
    #: True when ops are enqueued asynchronously (core then never assumes a result is ready)
    asynchronous: bool = False
    #: True when binary/where primitives accept broadcastable operands of different shapes
    #: (NumPy-style); core then skips its ``broadcast_to`` calls on the hot path
    native_broadcasting: bool = False
    #: True when the array library raises IndexError for out-of-range indices itself
    #: (core then skips its one-sync bounds check)
    checks_index_bounds: bool = False

    # ------------------------------------------------------------- identity, capability
    def unavailable_reason(self) -> str | None:
        """None when usable, else why not and what to do (shown by ``omnitensor info``)."""
        return None

    def version(self) -> str:
        """Versions of the libraries behind this backend, e.g. ``"pyopencl 2026.1"``."""
        raise NotImplementedError

    def device_count(self) -> int:
        """How many devices of this type the machine has."""
        raise NotImplementedError

    def device_info(self, index: int) -> dict[str, Any]:
        """Facts about one device: at least ``name``, ``memory`` (bytes), ``fp16`` and
        ``fp64`` (bools); optionally ``platform``, ``vendor``, ``compute_units``,
        ``driver`` and ``notes`` (a list of strings)."""
        raise NotImplementedError

    def supports_dtype(self, dtype: np.dtype, index: int) -> bool:
        """Whether device ``index`` can hold and compute ``dtype``."""
        return True

    def dtype_unsupported_reason(self, dtype: np.dtype, index: int) -> str | None:
        """None when the device handles ``dtype``; else why not (the missing extension or
        aspect), for the error core raises when such a tensor is created."""
        if self.supports_dtype(dtype, index):
            return None
        return f"the device does not support {dtype}"

    def synchronize(self, index: int) -> None:
        """Wait until every op enqueued on device ``index`` has finished."""

    def empty_cache(self, index: int | None = None) -> None:
        """Return memory the backend's pool holds but no array uses to the driver, on
        device ``index`` (every device when None); nothing to do without a pool."""

    def device_index(self, x: Any) -> int:
        """The device index an array lives on."""
        return 0

    # ------------------------------------------------------------------------ DLPack
    # Used by ``Tensor.__dlpack__``/``__dlpack_device__`` only when the array type has no
    # ``__dlpack__`` of its own (NumPy, CuPy and dpnp arrays export themselves).
    def dlpack_device(self, x: Any) -> tuple[int, int]:
        """``__dlpack_device__`` of array x: ``(device_type, device_id)`` with DLPack's
        codes (``1`` kDLCPU when the export is host memory, ``4`` kDLOpenCL...). Raises
        BufferError when the backend cannot export."""
        raise BufferError(f"the {self.name} backend cannot export DLPack capsules; use "
                          f".cpu() first")

    def dlpack_export(self, x: Any, *, copy: bool | None = None, dl_device: Any = None,
                      max_version: tuple[int, int] | None = None) -> Any:
        """``__dlpack__`` of array x: a DLPack capsule (``"dltensor_versioned"`` when
        ``max_version >= (1, 0)``, else the legacy ``"dltensor"``) on ``dl_device`` (None:
        the device :meth:`dlpack_device` reports). ``copy=True`` always copies, ``False``
        never does (BufferError when a copy would be needed), None copies only when
        needed. A zero-copy capsule must keep x's memory alive until its consumer
        releases it."""
        raise BufferError(f"the {self.name} backend cannot export DLPack capsules; use "
                          f".cpu() first")

    # ---------------------------------------------------------------------- memory
    def empty(self, shape: tuple[int, ...], dtype: np.dtype, index: int) -> Any:
        """An uninitialised C-contiguous array."""
        raise NotImplementedError

    def full(self, shape: tuple[int, ...], value: Any, dtype: np.dtype, index: int) -> Any:
        """A C-contiguous array filled with the Python scalar ``value``."""
        raise NotImplementedError

    def arange(self, start: Any, step: Any, n: int, dtype: np.dtype, index: int) -> Any:
        """The 1-D array ``start + step * i`` for ``i`` in ``range(n)`` (core computes the
        length ``n``, so every backend agrees on it)."""
        raise NotImplementedError

    def from_numpy(self, array: np.ndarray, index: int) -> Any:
        """An array on device ``index`` with ``array``'s values, dtype and shape. A host
        backend may share memory with ``array`` (torch's ``from_numpy``); core passes a
        fresh array when it needs a copy."""
        raise NotImplementedError

    def to_numpy(self, x: Any) -> np.ndarray:
        """A host NumPy array with x's values; waits for pending work first."""
        raise NotImplementedError

    def astype(self, x: Any, dtype: np.dtype) -> Any:
        """A new array with values converted as C casts do (float -> int truncates;
        anything -> bool is ``!= 0``)."""
        raise NotImplementedError

    def copy(self, x: Any) -> Any:
        """A C-contiguous copy."""
        raise NotImplementedError

    def contiguous(self, x: Any) -> Any:
        """x itself when C-contiguous, else a C-contiguous copy."""
        raise NotImplementedError

    def strides(self, x: Any) -> tuple[int, ...]:
        """x's strides in elements (not bytes)."""
        raise NotImplementedError

    def assign(self, dst: Any, src: Any) -> None:
        """Write ``src`` (an array of dst's dtype broadcast to dst's shape, or a Python
        scalar) into ``dst`` in place; ``dst`` may be a strided view."""
        raise NotImplementedError

    def assign_from_host(self, dst: Any, host: np.ndarray) -> None:
        """Write the host array ``host`` (dst's shape and dtype) into ``dst`` in place
        (``dst`` may be a strided view); ``host`` may be reused once this returns.
        Backends override it to copy straight into dst's memory; this default makes a
        device array first (an extra allocation and device copy)."""
        self.assign(dst, self.from_numpy(host, self.device_index(dst)))

    # -------------------------------------------------------------------- elementwise
    def where(self, cond: Any, a: Any, b: Any) -> Any:
        """``a`` where ``cond`` else ``b``; cond is bool, a/b share a dtype, all broadcast
        to one shape. One of a/b may be a Python scalar, never both: the array operand
        carries the result dtype."""
        raise NotImplementedError

    # --------------------------------------------------------------------- reductions
    # sum, prod, max, min, any, all: f(x, axes: tuple[int, ...], keepdims: bool).
    # axes is non-empty, sorted and unique; x's dtype is the accumulation dtype
    # (core casts ints to int64 for sum/prod); any/all return bool; float16 may
    # accumulate in float32 internally.

    def argmax(self, x: Any, axis: int | None, keepdims: bool) -> Any:
        """int64 index of the first maximum along ``axis`` (flattened when None); a NaN
        counts as the maximum (torch)."""
        raise NotImplementedError

    def argmin(self, x: Any, axis: int | None, keepdims: bool) -> Any:
        """int64 index of the first minimum; a NaN counts as the minimum (torch)."""
        raise NotImplementedError

    def cumsum(self, x: Any, axis: int) -> Any:
        """Inclusive cumulative sum along ``axis`` in x's dtype."""
        raise NotImplementedError

    def cumprod(self, x: Any, axis: int) -> Any:
        """Inclusive cumulative product along ``axis`` in x's dtype."""
        raise NotImplementedError

    # ----------------------------------------------------------------------- movement
    def reshape(self, x: Any, shape: tuple[int, ...], copy: bool | None = None) -> Any:
        """x with a new shape (same size, C order). A view when strides allow; with
        ``copy=False`` raise ValueError instead of copying; ``copy=True`` always copies."""
        raise NotImplementedError

    def permute(self, x: Any, axes: tuple[int, ...]) -> Any:
        """A view with axes reordered (``numpy.transpose``)."""
        raise NotImplementedError

    def broadcast_to(self, x: Any, shape: tuple[int, ...]) -> Any:
        """A read-only view of x broadcast to ``shape`` (stride 0 on new/size-1 axes)."""
        raise NotImplementedError

    def index(self, x: Any, key: tuple[Any, ...]) -> Any:
        """Basic indexing view. ``key`` is normalised: one entry per axis of x in order,
        plus ``None`` entries that insert an axis of size 1; each axis entry is an
        in-range non-negative ``int`` (drops the axis) or a ``slice(start, stop, step)``
        with an in-range ``start``, a non-zero ``step`` (negative allowed) and ``stop``
        an int, or None when a negative step runs through index 0 (NumPy's meaning). The
        length is ``len(range(start, -1 if stop is None else stop, step))``."""
        raise NotImplementedError

    def flip(self, x: Any, axes: tuple[int, ...]) -> Any:
        """x reversed along ``axes`` (a view where the array type allows)."""
        raise NotImplementedError

    def concat(self, xs: Sequence[Any], axis: int) -> Any:
        """Join same-dtype arrays along an existing axis."""
        raise NotImplementedError

    def pad(self, x: Any, widths: tuple[tuple[int, int], ...], value: Any) -> Any:
        """Constant padding: ``widths[i] = (before, after)`` for every axis, both >= 0."""
        raise NotImplementedError

    def diagonal(self, x: Any, offset: int, axis1: int, axis2: int) -> Any:
        """The diagonal of the (axis1, axis2) planes, appended as the last axis."""
        raise NotImplementedError

    # ------------------------------------------------------------------------ indexing
    def gather_nd(self, x: Any, indices: tuple[Any, ...]) -> Any:
        """``x[i0, i1, ..., i_{ndim-1}]`` with one int64 index array per axis of x, all of
        one (broadcast) shape S; returns an array of shape S. Indices are in range."""
        raise NotImplementedError

    def scatter_nd(self, x: Any, indices: tuple[Any, ...], values: Any,
                   accumulate: bool) -> None:
        """In place: ``x[i0, ..., i_{ndim-1}] = values`` (or ``+=`` with duplicates summed
        when ``accumulate``); values has shape S (or is a scalar) and x's dtype; x may be
        a strided view, and the writes must reach its base. Without ``accumulate``, which
        of several values for one duplicated index lands is unspecified (as in torch)."""
        raise NotImplementedError

    def nonzero(self, x: Any) -> tuple[Any, ...]:
        """One int64 array per axis with the coordinates of non-zero elements, C order."""
        raise NotImplementedError

    # ------------------------------------------------------------------------ sorting
    def sort(self, x: Any, axis: int, descending: bool, stable: bool) -> Any:
        """Sorted copy along ``axis``; NaN sorts as larger than every number."""
        raise NotImplementedError

    def argsort(self, x: Any, axis: int, descending: bool, stable: bool) -> Any:
        """int64 indices that sort x along ``axis`` (NaN largest). With ``stable``, equal
        elements keep their order in both directions."""
        raise NotImplementedError

    def searchsorted(self, sorted_x: Any, values: Any, side: str) -> Any:
        """int64 insertion points of ``values`` into the last axis of ``sorted_x``; both
        have the same leading shape (or sorted_x is 1-D)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ linear algebra
    def matmul(self, a: Any, b: Any) -> Any:
        """(..., M, K) @ (..., K, N) with identical batch shapes (core broadcasts them)."""
        raise NotImplementedError

    # ------------------------------------------------------------------------- random
    def random_bits(self, shape: tuple[int, ...], key: tuple[int, int], counter: int,
                    index: int) -> Any:
        """uint32 Philox-4x32-10 stream, identical on every backend: element ``i`` (C
        order) is word ``i % 4`` of the block for counter ``counter + i // 4`` (a 64-bit
        counter as two words, low first, upper two words 0) under the 2-word ``key``."""
        raise NotImplementedError
