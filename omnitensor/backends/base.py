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

**Optional hooks** (:data:`OPTIONAL_HOOKS`): native fast paths and overrides of composites
that a backend may provide. Each is declared below with its contract and a ``None`` default;
callers ask :meth:`Backend.hook` (the one place hooks are consulted), which refuses names
not declared here, so a misspelt or undeclared hook is an error rather than a silent miss.

**Identity** that must be known *without importing the backend* (for ``omnitensor info``
on a machine without the vendor stack, and for ``omnitensor.distributed`` choosing a
transport) is a :class:`BackendSpec` in the registry; the backend object exposes it as
:attr:`Backend.spec`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ..kernels import primitives as _primitives

#: Elementwise functions of one operand and of two (Array API names; ``pow`` is the power
#: function), and those whose result is bool whatever the operand dtype: read from the
#: primitive table (``kernels/primitives.py``), less its optional hooks (sigmoid, rsqrt).
UNARY = _primitives.names(1, hooks=False)
BINARY = _primitives.names(2, hooks=False)
PREDICATES = _primitives.where(out="bool")
#: Reductions over a tuple of axes: ``backend.sum(x, axes, keepdims)``.
REDUCTIONS = ("sum", "prod", "max", "min", "any", "all")

#: ``xp.linalg`` routines a backend may provide natively as ``linalg_<name>`` (used by
#: ``omnitensor.linalg``; without one, NumPy's runs on a host copy).
LINALG = ("inv", "det", "slogdet", "solve", "cholesky", "eigh", "eig", "qr", "svd")
#: ``xp.fft`` routines a backend may provide natively as ``fft_<name>``.
FFT = ("fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft")

#: Every optional hook (attribute of :class:`Backend` defaulting to ``None``), by name: a
#: native fast path of a primitive composite, or an override of a composite op. The
#: contract of each is the docstring of its declaration below.
OPTIONAL_HOOKS = frozenset(
    ("sigmoid", "rsqrt", "einsum", "index_advanced", "index_put_advanced",
     "index_add_advanced", "take_along_axis", "device_timer", "spmm", "fused_kernels",
     "pinned_empty")
    + tuple("linalg_" + n for n in LINALG) + tuple("fft_" + n for n in FFT))


@dataclass(frozen=True)
class BackendSpec:
    """What the registry knows about a backend without importing it.

    ``device_type`` (``"opencl"``), ``target`` (``"module:Class"``, imported on first use),
    ``extra`` (the pip extra that installs it: ``pip install 'omnitensor[extra]'``; empty
    for the built-in cpu backend), ``packages`` (the distributions it needs, whose versions
    ``omnitensor info`` reports even when the backend finds no device), ``transport`` (the
    default collective transport of ``omnitensor.distributed`` for tensors of this type:
    ``"mpi"`` or ``"nccl"``, torch's {cpu: gloo, cuda: nccl}) and ``host`` (the host CPU
    itself: one device, written without an index, ``cpu``; not an accelerator)."""

    device_type: str
    target: str
    extra: str = ""
    packages: tuple[str, ...] = ()
    transport: str = "mpi"
    host: bool = False

    def device_name(self, index: int) -> str:
        """The device string of device ``index``: ``opencl:1``, or ``cpu``."""
        return self.device_type if self.host else f"{self.device_type}:{index}"


class Backend:
    """Base class of device adapters. Subclasses set :attr:`name` and implement the
    methods below; optional hooks (:data:`OPTIONAL_HOOKS`: ``einsum``, ``linalg_*``,
    ``fft_*``...) default to ``None`` and are consulted through :meth:`hook`. A native
    override of a composite (a ``conv2d`` kernel, say) is added the same way: declared here
    with its contract, implemented by the backends that have one."""

    #: device type string: "cpu", "opencl", "sycl", "cuda"
    name: str = ""
    #: the registry's declaration of this backend (set by the registry when it loads it)
    spec: BackendSpec | None = None
    #: True when primitives return before the device has computed their result (enqueued
    #: on a queue or stream). Readers outside the backend's own queue order (a host
    #: transport such as MPI reading memory, a copy to another device or queue) must call
    #: :meth:`synchronize` first; ``to_numpy`` always waits by itself.
    asynchronous: bool = False
    #: True when the arrays are NumPy arrays in host memory, usable as host buffers
    #: without a copy (MPI reads and writes them in place)
    host_arrays: bool = False
    #: ops that copy data to the host to compute (listed by ``omnitensor info``)
    host_fallback_ops: tuple[str, ...] = ()
    #: True when binary/where primitives accept broadcastable operands of different shapes
    #: (NumPy-style); core then skips its ``broadcast_to`` calls on the hot path
    native_broadcasting: bool = False
    #: True when the array library raises IndexError for out-of-range indices itself
    #: (core then skips its one-sync bounds check)
    checks_index_bounds: bool = False
    #: True when ``matmul`` runs omnitensor's generated GEMM (``kernels/gemm.py``), not a
    #: library call (BLAS, oneMKL, cuBLAS): a compiled replay may then fuse elementwise
    #: epilogues into it (``compiler/fusion/gemm.py``)
    generated_gemm: bool = False

    if TYPE_CHECKING:
        # The elementwise primitives (UNARY, BINARY) and reductions (REDUCTIONS) each backend
        # sets as plain attributes, declared for type checkers; tests/backends/
        # test_backend_decls.py keeps this list equal to those tuples.
        negative: Callable[..., Any]
        positive: Callable[..., Any]
        abs: Callable[..., Any]
        exp: Callable[..., Any]
        expm1: Callable[..., Any]
        log: Callable[..., Any]
        log1p: Callable[..., Any]
        log2: Callable[..., Any]
        log10: Callable[..., Any]
        sqrt: Callable[..., Any]
        square: Callable[..., Any]
        sin: Callable[..., Any]
        cos: Callable[..., Any]
        tan: Callable[..., Any]
        asin: Callable[..., Any]
        acos: Callable[..., Any]
        atan: Callable[..., Any]
        sinh: Callable[..., Any]
        cosh: Callable[..., Any]
        tanh: Callable[..., Any]
        asinh: Callable[..., Any]
        acosh: Callable[..., Any]
        atanh: Callable[..., Any]
        erf: Callable[..., Any]
        erfc: Callable[..., Any]
        sign: Callable[..., Any]
        floor: Callable[..., Any]
        ceil: Callable[..., Any]
        round: Callable[..., Any]
        trunc: Callable[..., Any]
        reciprocal: Callable[..., Any]
        isnan: Callable[..., Any]
        isinf: Callable[..., Any]
        isfinite: Callable[..., Any]
        signbit: Callable[..., Any]
        logical_not: Callable[..., Any]
        bitwise_invert: Callable[..., Any]
        conj: Callable[..., Any]
        real: Callable[..., Any]
        imag: Callable[..., Any]
        add: Callable[..., Any]
        subtract: Callable[..., Any]
        multiply: Callable[..., Any]
        divide: Callable[..., Any]
        floor_divide: Callable[..., Any]
        remainder: Callable[..., Any]
        pow: Callable[..., Any]
        maximum: Callable[..., Any]
        minimum: Callable[..., Any]
        atan2: Callable[..., Any]
        hypot: Callable[..., Any]
        logaddexp: Callable[..., Any]
        copysign: Callable[..., Any]
        nextafter: Callable[..., Any]
        equal: Callable[..., Any]
        not_equal: Callable[..., Any]
        less: Callable[..., Any]
        less_equal: Callable[..., Any]
        greater: Callable[..., Any]
        greater_equal: Callable[..., Any]
        logical_and: Callable[..., Any]
        logical_or: Callable[..., Any]
        logical_xor: Callable[..., Any]
        bitwise_and: Callable[..., Any]
        bitwise_or: Callable[..., Any]
        bitwise_xor: Callable[..., Any]
        bitwise_left_shift: Callable[..., Any]
        bitwise_right_shift: Callable[..., Any]
        sum: Callable[..., Any]
        prod: Callable[..., Any]
        max: Callable[..., Any]
        min: Callable[..., Any]
        any: Callable[..., Any]
        all: Callable[..., Any]

    # ------------------------------------------------------------- identity, capability
    def unavailable_reason(self) -> str | None:
        """None when usable, else why not and what to do (shown by ``omnitensor info``)."""
        return None

    @property
    def pip_extra(self) -> str:
        """The pip extra that installs this backend (``""`` for the built-in cpu)."""
        return self.spec.extra if self.spec else ""

    @property
    def packages(self) -> tuple[str, ...]:
        """The distributions this backend needs."""
        return self.spec.packages if self.spec else ()

    @property
    def collective_transport(self) -> str:
        """The default ``omnitensor.distributed`` transport for this device type."""
        return self.spec.transport if self.spec else "mpi"

    def hook(self, name: str) -> Callable[..., Any] | None:
        """The optional hook ``name`` (one of :data:`OPTIONAL_HOOKS`) when this backend
        implements it, else None (the caller then runs its composite or host path).
        Raises AttributeError for a name that is not a declared hook."""
        if name not in OPTIONAL_HOOKS:
            raise AttributeError(f"{name!r} is not an optional backend hook declared in "
                                 f"omnitensor/backends/base.py (declared: "
                                 f"{', '.join(sorted(OPTIONAL_HOOKS))})")
        return getattr(self, name)

    def native_routines(self, prefix: str) -> tuple[str, ...]:
        """The ``linalg`` (``prefix="linalg"``) or ``fft`` routines this backend runs on
        the device; the others run on a host copy."""
        names = {"linalg": LINALG, "fft": FFT}[prefix]
        return tuple(n for n in names if self.hook(f"{prefix}_{n}") is not None)

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

    def memory_stats(self, index: int) -> dict[str, int]:
        """Counters of the backend's memory pool on device ``index`` (bytes), for
        ``omnitensor.memory``: ``allocated_bytes`` (held by arrays), ``reserved_bytes``
        (held from the driver, cache included) and, where the pool tracks them,
        ``peak_allocated_bytes``/``peak_reserved_bytes`` since the last reset; empty
        without a pool."""
        return {}

    def reset_peak_memory_stats(self, index: int) -> None:
        """Restart the peaks of :meth:`memory_stats` from the current figures (nothing to
        do without a pool)."""

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

    def accepts_dlpack_device(self, dl_device_type: int) -> bool:
        """Whether :meth:`from_dlpack` imports capsules of this DLPack device type
        (``2`` kDLCUDA, ``14`` kDLOneAPI...) without a host copy."""
        return False

    def from_dlpack(self, obj: Any) -> tuple[Any, int]:
        """(array, device index) sharing ``obj``'s memory, for a producer whose
        ``__dlpack_device__`` type :meth:`accepts_dlpack_device`."""
        raise BufferError(f"the {self.name} backend does not import DLPack capsules")

    # ------------------------------------------------------------------ device copies
    def host_view(self, x: Any) -> np.ndarray | None:
        """A NumPy array *sharing* x's memory (no copy) when x lives in host memory that
        the host may read now (pending work finished), else None. Only read it, and only
        while x is alive and unchanged: it serves one copy out of x."""
        return None

    def transfer_from(self, x: Any, src: "Backend", index: int) -> Any | None:
        """A new array on device ``index`` of this backend with the values of ``x``, an
        array of backend ``src`` (possibly this one, possibly another device of it),
        without a round trip through a NumPy copy; None when there is no such path (core
        then copies through ``src.to_numpy`` and :meth:`from_numpy`). The result never
        shares memory with x, and x is unchanged.

        This default serves a source whose memory the host can read in place
        (:meth:`host_view`: NumPy arrays, buffers of a host-memory OpenCL device): one copy
        from that memory into a new device array instead of two. Backends add direct
        device-to-device copies (OpenCL buffers of one context, SYCL USM across queues,
        CUDA peer copies)."""
        if src is self and self.host_arrays:
            return None  # core copies host arrays itself
        view = src.host_view(x)
        if view is None or self.host_arrays:
            return None  # a host destination gains nothing over to_numpy's one copy
        return self.from_numpy(view, index)

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

    def memory_span(self, x: Any) -> tuple[int, int, int]:
        """``(allocation, first, end)``: x's elements lie in bytes ``[first, end)`` of
        ``allocation``; two arrays can share memory only when their allocations are equal
        and their ranges intersect (an empty array occupies ``[0, 0)``). Compiled calls
        guard on it (aliasing between inputs). This default reads the array-exchange
        protocols (NumPy, SYCL USM, CUDA): one address space, allocation 0."""
        shape, item = tuple(x.shape), x.dtype.itemsize
        if 0 in shape:
            return (0, 0, 0)
        iface = getattr(x, "__array_interface__", None) or \
            getattr(x, "__cuda_array_interface__", None)
        if iface is not None:
            start = int(iface["data"][0] or 0)
        else:
            usm = x.__sycl_usm_array_interface__    # its data is the allocation's start
            start = int(usm["data"][0] or 0) + int(usm.get("offset", 0)) * item
        lo = hi = start
        for n, st in zip(shape, self.strides(x)):
            reach = (n - 1) * st * item
            if reach < 0:
                lo += reach
            else:
                hi += reach
        return (0, lo, hi + item)

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

    def as_strided(self, base: Any, shape: tuple[int, ...], strides: tuple[int, ...],
                   offset: int) -> Any:
        """A view of ``base`` (a C-contiguous array whose first element starts its storage)
        with element ``strides`` (>= 0) starting ``offset`` elements in (torch's
        ``as_strided``); core has checked that every element it reaches lies in ``base``.
        Writes through the view reach ``base``."""
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

    # ------------------------------------------------------------- optional hooks
    # Declared here, implemented where a stack has a native routine; consulted only through
    # :meth:`hook`. None means "not provided": the caller's composite (or host) path runs.

    #: ``sigmoid(x) -> 1 / (1 + exp(-x))`` in x's (floating) dtype, one fused kernel.
    sigmoid: Callable[..., Any] | None = None
    #: ``rsqrt(x) -> 1 / sqrt(x)`` in x's (floating) dtype.
    rsqrt: Callable[..., Any] | None = None
    #: ``einsum(subscripts, *operands)`` with NumPy's semantics on same-dtype operands
    #: (subscripts already validated by core).
    einsum: Callable[..., Any] | None = None
    #: ``index_advanced(x, key)``: NumPy-style mixed basic/advanced indexing, ``key`` a
    #: tuple of in-range ints, normalised slices, None and int64 index arrays; a new array.
    index_advanced: Callable[..., Any] | None = None
    #: ``index_put_advanced(x, key, values)``: in place ``x[key] = values`` (``key`` as
    #: for ``index_advanced``; values of x's dtype, broadcastable); duplicates: any wins.
    index_put_advanced: Callable[..., Any] | None = None
    #: ``index_add_advanced(x, key, values)``: in place ``x[key] += values`` with
    #: duplicate indices accumulated.
    index_add_advanced: Callable[..., Any] | None = None
    #: ``take_along_axis(x, index, axis)``: ``out[..i, j, k..] = x[..i, index[..i, j, k..],
    #: k..]`` along ``axis`` (torch's gather), ``index`` int64, in range, of x's shape in
    #: every other axis; a new array. dpnp's advanced indexing, the generic path, grows
    #: host memory ~0.7 KB per call (seen on 0.20), its take_along_axis does not.
    take_along_axis: Callable[..., Any] | None = None
    #: ``spmm(rows, cols, values, shape, dense) -> out``: the sparse-dense product
    #: ``out[rows[e]] += values[e] * dense[cols[e]]`` of an ``(m, k)`` sparse matrix of
    #: ``shape`` (duplicates sum) and a 2-D ``dense`` ``(k, n)``; rows/cols int64 ``(nnz,)``
    #: in range, values and dense float32 or float64 of one dtype; a new ``(m, n)`` array.
    #: None: core's composite of index ops runs (gather, scale, index_add).
    spmm: Callable[..., Any] | None = None
    #: ``pinned_empty(shape, numpy_dtype) -> numpy.ndarray``: an uninitialized host array in
    #: page-locked memory this device copies from faster (``Tensor.pin_memory()``; CUDA:
    #: ``cupyx.empty_pinned``). None: the device copies from ordinary host memory, and
    #: ``pin_memory()`` makes an ordinary contiguous copy.
    pinned_empty: Callable[..., Any] | None = None
    #: ``device_timer(index) -> timer``: device-side timing for ``omnitensor.profiler``,
    #: taken from the device's own clock (OpenCL profiling events, SYCL event profiling,
    #: CUDA events), created when a profiler starts recording on device ``index``. The
    #: timer has ``begin() -> token`` (called before a primitive is enqueued),
    #: ``end(token) -> handle`` (after it), ``close()`` (waits for the device and undoes
    #: whatever profiling needed, e.g. a profiling queue; called once, when recording
    #: stops) and, after ``close``, ``spans(handle) -> [(kernel_name or None, start_ns,
    #: end_ns), ...]``: what the device ran between ``begin`` and ``end``, on the host's
    #: ``time.perf_counter_ns`` clock. None: the device has no clock of its own to read
    #: (NumPy on the host), so ops there have host times only.
    device_timer: Callable[..., Any] | None = None
    #: ``fused_kernels() -> launcher class or None``: how ``omnitensor.compile`` runs a fused
    #: group (a :class:`~omnitensor.kernels.fused_spec.KernelSpec` rendered by
    #: ``omnitensor.kernels.fused`` in this backend's dialect) on this backend's arrays. The
    #: class (a ``backends.fused.FusedLauncher``) is built as ``Kernel(spec, n_inputs,
    #: fresh, out_args, inplace_args, fallback, device, handle=None)`` and called as
    #: ``kernel(*arrays) -> outputs``; it may add ``build_all(specs, device) -> handles``
    #: (one program for a whole plan; each handle is passed back as ``handle``) and
    #: ``CONCURRENT_BUILD`` (whether a plan may build on a background thread while the
    #: first replays run unfused; default True). None from the call: the JIT it needs is
    #: not installed. None as the hook: no fused kernels here (plans replay primitives).
    fused_kernels: Callable[..., Any] | None = None


# ``linalg_<name>(*arrays, **kw)`` / ``fft_<name>(x, **kw)``: NumPy's ``numpy.linalg.<name>``
# / ``numpy.fft.<name>`` semantics on this backend's arrays (results are arrays, tuples for
# multi-output routines).
for _name in LINALG:
    setattr(Backend, "linalg_" + _name, None)
for _name in FFT:
    setattr(Backend, "fft_" + _name, None)
del _name


# --------------------------------------------------------------- attribute classification
# Everything that stands between core and a backend (capture's recorder, a segmented
# replay's deferral, the profiler's timers, the multi-GPU device guard: one
# ``backends/interpose.py`` proxy with a policy each) decides what to do with a backend
# attribute from its kind, declared here once. ``tests/backends/test_attribute_kinds.py``
# checks that every public attribute of every real backend has one, so a new primitive
# cannot be silently run unrecorded, untimed or on the wrong device.

#: a primitive: device work on arrays (recorded, deferred, timed, guarded)
OP = "op"
#: a primitive whose result reaches the host or has a data-dependent shape (a graph
#: break for a capture; timed and guarded as an op)
HOST_READ = "host_read"
#: ``host_view``: a zero-copy host view of device memory (no device work, so not timed;
#: a graph break for a capture, since the host then reads the values)
HOST_VIEW = "host_view"
#: an optional hook (:data:`OPTIONAL_HOOKS`): a primitive that may be absent (None)
HOOK = "hook"
#: :meth:`Backend.hook`, the lookup of optional hooks
HOOK_LOOKUP = "hook_lookup"
#: waits for the device (timed by the profiler, never recorded)
SYNC = "sync"
#: identity, capability, layout and memory-pool queries and plumbing: answered by the
#: backend as is, never recorded, timed or guarded
QUERY = "query"
#: plain data: names, flags, the spec, the array namespace
DATA = "data"

#: Attributes whose result reaches the host or has a data-dependent shape, with what that
#: means for a captured program (a graph break there; ``omnitensor.compile``'s messages).
HOST_READS: dict[str, str] = {
    "to_numpy": "a host read of a tensor's values (.item(), bool(), .tolist(), printing, "
                ".numpy())",
    "host_view": "a host read of a tensor's values",
    "dlpack_export": "a DLPack export",
    "from_dlpack": "a DLPack import",
    "transfer_from": "a copy between devices (move data to the device outside the "
                     "compiled function)",
    "nonzero": "nonzero (a data-dependent shape)",
}
#: Primitives besides :data:`UNARY`, :data:`BINARY`, :data:`REDUCTIONS` and the host reads.
PRIMITIVES = frozenset((
    "empty", "full", "arange", "from_numpy", "astype", "copy", "contiguous",
    "assign", "assign_from_host", "where", "argmax", "argmin", "cumsum", "cumprod",
    "reshape", "permute", "broadcast_to", "index", "flip", "concat", "pad", "diagonal",
    "as_strided", "gather_nd", "scatter_nd", "sort", "argsort", "searchsorted",
    "matmul", "random_bits",
))
#: Callables that are not device work on arrays (``state(index)``: the per-device runtime
#: state of the OpenCL and SYCL backends, for kernels compiled outside them;
#: ``device_timer``, an optional hook, is the profiler's own clock, not an op).
QUERIES = frozenset((
    "unavailable_reason", "version", "device_count", "device_info", "supports_dtype",
    "dtype_unsupported_reason", "native_routines", "empty_cache", "memory_stats",
    "reset_peak_memory_stats", "memory_allocated", "memory_reserved", "device_index",
    "dlpack_device", "accepts_dlpack_device", "strides", "memory_span",
    "wide_accumulation", "state", "fused_kernels", "device_timer",
))
#: Non-callable attributes (class flags, the spec, backend-specific state).
DATA_ATTRIBUTES = frozenset((
    "name", "spec", "asynchronous", "host_arrays", "host_fallback_ops",
    "native_broadcasting", "checks_index_bounds", "generated_gemm", "pip_extra",
    "packages", "collective_transport", "widens_bfloat16", "xp", "is_rocm",
))

#: Every public backend attribute -> its kind.
ATTRIBUTE_KINDS: dict[str, str] = {
    **{n: OP for n in UNARY + BINARY + REDUCTIONS},
    **{n: OP for n in PRIMITIVES},
    **{n: HOST_READ for n in HOST_READS if n != "host_view"},
    "host_view": HOST_VIEW,
    **{n: HOOK for n in OPTIONAL_HOOKS - QUERIES},
    "hook": HOOK_LOOKUP,
    "synchronize": SYNC,
    **{n: QUERY for n in QUERIES},
    **{n: DATA for n in DATA_ATTRIBUTES},
}


def attribute_kind(name: str) -> str | None:
    """The declared kind of backend attribute ``name`` (:data:`ATTRIBUTE_KINDS`); private
    names (``_queue``) are the backend's own state, :data:`DATA`; None: undeclared."""
    if name.startswith("_"):
        return DATA
    return ATTRIBUTE_KINDS.get(name)
