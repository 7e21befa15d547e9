"""The ``cpu`` backend: NumPy, the reference every other backend is tested against."""
from __future__ import annotations

import importlib.util
import math
import os
import platform
import warnings
from typing import Any

import numpy as np

from . import threads
from ..base import BINARY, UNARY
from ..namespace_backend import NamespaceBackend, library_spmm, lookup

# NumPy reports overflow, division by zero and invalid values as RuntimeWarnings; torch
# returns inf/nan silently. Ignore them when the ufunc is called from omnitensor's own
# modules only, so the user's direct NumPy calls keep their warnings.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"omnitensor(\.|$)")


def _array_result(ufunc: Any) -> Any:
    """Wrap a ufunc so that 0-d inputs give 0-d arrays rather than NumPy scalars, and large
    calls run split over threads (``threads``). One wrapper per arity: ``*args`` would
    cost ~0.2 us per op on this hot path."""
    ndarray = np.ndarray
    asarray = np.asarray
    split = threads.split_call
    big = threads.MIN_ELEMENTS
    if getattr(ufunc, "nin", 1) == 2:
        def call(a: Any, b: Any, out: Any = None) -> Any:
            if (a.__class__ is ndarray and a.size >= big) or \
                    (b.__class__ is ndarray and b.size >= big):
                r = split(ufunc, (a, b), out)
                if r is not None:
                    return r
            if out is None:
                r = ufunc(a, b)
                return r if r.__class__ is ndarray else asarray(r)
            return ufunc(a, b, out=out)
    else:
        def call(a: Any, out: Any = None) -> Any:  # type: ignore[misc]
            if a.__class__ is ndarray and a.size >= big:
                r = split(ufunc, (a,), out)
                if r is not None:
                    return r
            if out is None:
                r = ufunc(a)
                return r if r.__class__ is ndarray else asarray(r)
            return ufunc(a, out=out)
    call.__name__ = getattr(ufunc, "__name__", "ufunc")
    call.__doc__ = f"NumPy's {call.__name__}, always returning an ndarray."
    return call


def _scipy_spmm(rows: Any, cols: Any, values: Any, shape: tuple[int, int], dense: Any) -> Any:
    """The ``spmm`` hook through SciPy's CSR product (imported on first use: SciPy is
    optional, and heavy to import)."""
    import scipy.sparse
    return library_spmm(scipy.sparse, np, rows, cols, values, shape, dense)


def _make_erf(name: str = "erf") -> Any:
    """SciPy's ``erf``/``erfc`` (exact to the last ulp), float16 through float32, or the
    ``math`` module's vectorised where SciPy is absent."""
    try:
        import scipy.special
        fn = getattr(scipy.special, name)

        def special(x: np.ndarray, out: Any = None) -> np.ndarray:
            if x.dtype == np.float16:  # scipy has no float16 loop: it would return float64
                r = fn(x.astype(np.float32)).astype(np.float16)
                if out is None:
                    return r
                out[...] = r
                return out
            return fn(x) if out is None else fn(x, out=out)
        return special
    except ImportError:  # pragma: no cover - scipy is usually present
        vec = np.vectorize(getattr(math, name), otypes=[np.float64])

        def special(x: np.ndarray, out: Any = None) -> np.ndarray:
            r = np.asarray(vec(x)).astype(x.dtype)
            if out is None or out is Ellipsis:
                return r
            out[...] = r
            return out
        return special


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


class NumpyBackend(NamespaceBackend):
    """Device type ``cpu``: one device, NumPy arrays, synchronous."""

    name = "cpu"
    xp = np
    #: NumPy raises IndexError for out-of-range indices: core skips its own device check
    checks_index_bounds = True
    #: operands of different (broadcastable) shapes go straight to the ufuncs
    native_broadcasting = True
    #: NumPy arrays are host memory: MPI and other host consumers use them in place
    host_arrays = True

    def host_view(self, x):
        return x

    def fused_kernels(self) -> Any:
        """The launcher of ``omnitensor.compile``'s fused kernels: Python loop nests
        compiled by numba, or None without numba (the ``compile`` extra; the hook's
        contract is in backends/base.py)."""
        if importlib.util.find_spec("numba") is None:
            return None
        from .fused import Kernel
        return Kernel

    def __init__(self) -> None:
        super().__init__()
        for name in UNARY + BINARY:
            fn = lookup(np, name)
            if isinstance(fn, np.ufunc):
                setattr(self, name, _array_result(fn))
        self.round = _array_result(np.rint)  # half to even, and a ufunc (np.round is not)
        erf = _make_erf()
        self.erf = lambda x, out=None: np.asarray(erf(x, out=out))
        erfc = _make_erf("erfc")
        self.erfc = lambda x, out=None: np.asarray(erfc(x, out=out))
        if importlib.util.find_spec("scipy") is not None:  # optional: SciPy's sparse matmul
            self.spmm = _scipy_spmm

    def version(self) -> str:
        return f"numpy {np.__version__}"

    def device_count(self) -> int:
        return 1

    def device_info(self, index: int) -> dict[str, Any]:
        try:
            memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):  # pragma: no cover
            memory = 0
        return {"name": _cpu_name(), "memory": memory, "fp16": True, "fp64": True,
                "compute_units": os.cpu_count() or 1, "platform": "NumPy"}

    def broadcast_to(self, x, shape):
        # np.broadcast_to is pure Python (~3 us); the ndarray constructor with stride-0
        # axes builds the same read-only view in C when x exposes a contiguous buffer
        if x.flags.c_contiguous and x.size:
            lead = len(shape) - x.ndim
            strides = [0] * lead
            for n_in, n_out, st in zip(x.shape, shape[lead:], x.strides):
                if n_in == n_out:
                    strides.append(st)
                elif n_in == 1:
                    strides.append(0)
                else:
                    raise ValueError(f"cannot broadcast {x.shape} to {shape}")
            out = np.ndarray(shape, x.dtype, x, 0, tuple(strides))
            out.flags.writeable = False
            return out
        return np.broadcast_to(x, shape)

    def from_numpy(self, array, index):
        return np.asarray(array)

    def to_numpy(self, x):
        return x

    def where(self, cond, a, b):
        r = np.where(cond, a, b)
        return r if type(r) is np.ndarray else np.asarray(r)

    # Reductions call ``ufunc.reduce`` directly: np.sum/np.max add ~5 us of Python
    # wrappers per call, which dominates small tensors.
    def sum(self, x, axes, keepdims):
        if x.dtype == np.float16:  # accumulate in float32, as torch does
            r = np.add.reduce(x, axis=axes, dtype=np.float32, keepdims=keepdims)
            return np.asarray(r, dtype=np.float16)
        return np.asarray(np.add.reduce(x, axis=axes, dtype=x.dtype, keepdims=keepdims))

    def prod(self, x, axes, keepdims):
        if x.dtype == np.float16:
            r = np.multiply.reduce(x, axis=axes, dtype=np.float32, keepdims=keepdims)
            return np.asarray(r, dtype=np.float16)
        return np.asarray(np.multiply.reduce(x, axis=axes, dtype=x.dtype, keepdims=keepdims))

    def max(self, x, axes, keepdims):
        return np.asarray(np.maximum.reduce(x, axis=axes, keepdims=keepdims))

    def min(self, x, axes, keepdims):
        return np.asarray(np.minimum.reduce(x, axis=axes, keepdims=keepdims))

    def any(self, x, axes, keepdims):
        return np.asarray(np.logical_or.reduce(x, axis=axes, keepdims=keepdims))

    def all(self, x, axes, keepdims):
        return np.asarray(np.logical_and.reduce(x, axis=axes, keepdims=keepdims))

    def full(self, shape, value, dtype, index):
        out = np.empty(shape, dtype)  # empty + fill: np.full is a slow Python wrapper
        out.fill(value)
        return out

    def argmax(self, x, axis, keepdims):
        return np.asarray(np.argmax(x, axis=axis, keepdims=keepdims), dtype=np.int64)

    def argmin(self, x, axis, keepdims):
        return np.asarray(np.argmin(x, axis=axis, keepdims=keepdims), dtype=np.int64)

    def index_add_advanced(self, x, key, values):
        """Fast path: ``x[key] += values`` with duplicates accumulated."""
        np.add.at(x, key, values)

    def gather_nd(self, x, indices):
        return np.asarray(x[tuple(indices)])

    def index(self, x, key):
        # a trailing Ellipsis keeps integer-only keys a 0-d *view* (NumPy would copy)
        return x[key + (Ellipsis,)]

    def reshape(self, x, shape, copy=None):
        try:
            return np.reshape(x, shape, copy=copy)
        except ValueError as e:
            raise ValueError(str(e)) from None

    def diagonal(self, x, offset, axis1, axis2):
        # NumPy's diagonal is a read-only view; torch's is writable
        d = np.diagonal(x, offset=offset, axis1=axis1, axis2=axis2)
        if x.flags.writeable:
            d.flags.writeable = True
        return d
