"""Helpers of the backend contract suite (``test_backend_contract*.py``): a :class:`Probe`
wraps the backend of one device (cpu, opencl:0, sycl:0, cuda:0...: the ``device`` fixture)
and compares what its primitives return with the NumPy backend's or NumPy's float64 values.

Results must be arrays of the backend's own type (0-d arrays, never scalars) on the device
they were made for, with the dtype and shape ``backends/base.py`` promises. Float results
match in float64 with rtol 2e-5 (float32/complex64), 1e-11 (float64/complex128) or 2e-3
(float16); integer and bool results exactly (wrapping, Python-style ``//``/``%``, NumPy's
shift rules).
"""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot
from omnitensor.backends import registry
from omnitensor.backends.base import PREDICATES

#: the reference every backend is compared with
NP = registry.get_backend("cpu")
ALL = [np.dtype(d) for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                             "uint32", "uint64", "float16", "float32", "float64", "complex64",
                             "complex128")]
#: dpnp JIT-compiles every (kernel, dtype) on first use (0.1-0.5 s each) and instantiates
#: the same C++ templates for the narrower integer widths as for int64/uint64, so its
#: elementwise sweeps use one dtype per template family (the narrower widths appear in the
#: casting, reduction, indexing and layout tests); every other backend sweeps every dtype
#: (OpenCL generates distinct code per width: wrapping, shifts, promotions)
SWEEP = {"sycl": [np.dtype(d) for d in ("bool", "int64", "uint64", "float16", "float32",
                                        "float64", "complex64", "complex128")]}
RTOL = {"e": 2e-3, "f": 2e-5, "d": 1e-11, "F": 2e-5, "D": 1e-11}
rng = np.random.default_rng(1234)


class Probe:
    """The backend of one device, its primitives called on its own arrays."""

    def __init__(self, device: str) -> None:
        self.device = ot.device(device)
        self.be = self.device.backend
        self.idx = self.device.index
        self.type = self.device.type
        self.array_type = type(self.be.empty((1,), np.dtype(np.float32), self.idx))

    def __getattr__(self, name: str):
        return getattr(self.be, name)  # the primitives: bk.add(x, y), bk.sum(x, axes, keep)

    # -------------------------------------------------------------------- transfers
    def dev(self, a) -> object:
        """A device array holding a *copy* of ``a`` (a host backend may share memory with
        what it is given: core passes fresh arrays, and so do we)."""
        return self.be.from_numpy(np.array(a, copy=True), self.idx)

    def host(self, x) -> np.ndarray:
        assert isinstance(x, self.array_type), \
            f"{self.type}: expected a {self.array_type.__name__}, got {type(x).__name__}"
        assert self.be.device_index(x) == self.idx, f"result left {self.device}"
        queue = getattr(self.be, "_queues", None)
        if queue is not None and hasattr(x, "sycl_queue"):  # dpnp: one queue per device
            assert x.sycl_queue == queue[self.idx], "result is not on the device's queue"
        return np.array(self.be.to_numpy(x), copy=True)

    # ----------------------------------------------------------------------- dtypes
    def supports(self, dtype) -> bool:
        return self.be.supports_dtype(np.dtype(dtype), self.idx)

    def skip_dtype(self, dtype) -> None:
        if not self.supports(dtype):
            why = self.be.dtype_unsupported_reason(np.dtype(dtype), self.idx)
            pytest.skip(f"{self.device} has no {np.dtype(dtype)}: {why}")

    @property
    def dtypes(self) -> list[np.dtype]:
        return [d for d in ALL if self.supports(d)]

    def sweep(self) -> list[np.dtype]:
        """The dtypes elementwise sweeps use on this backend (see SWEEP)."""
        return [d for d in SWEEP.get(self.type, ALL) if self.supports(d)]

    # -------------------------------------------------------------------- checking
    def check(self, got, expected, *, exact=False, rtol=None, dtype=None, atol=None) -> None:
        """``got`` (a device array) equals ``expected`` (NumPy) in dtype, shape and value."""
        g = self.host(got)
        e = np.asarray(expected)
        assert g.dtype == (dtype or e.dtype), f"dtype {g.dtype} != {dtype or e.dtype}"
        assert g.shape == e.shape, f"shape {g.shape} != {e.shape}"
        if exact or g.dtype.kind in "biu":
            np.testing.assert_array_equal(g, e.astype(g.dtype) if e.dtype != g.dtype else e)
            return
        r = RTOL[g.dtype.char] if rtol is None else rtol
        wide_t = np.complex128 if g.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(g.astype(wide_t), e.astype(wide_t), rtol=r,
                                   atol=r * 0.1 if atol is None else atol, equal_nan=True)


def rand(shape, dtype, lo=-5.0, hi=5.0) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    if dtype.kind == "c":
        return (rng.uniform(lo, hi, shape) + 1j * rng.uniform(lo, hi, shape)).astype(dtype)
    return rng.uniform(lo, hi, shape).astype(dtype)


def wide(a: np.ndarray) -> np.ndarray:
    """The float64/complex128 copy NumPy computes references in."""
    if a.dtype.kind == "f":
        return a.astype(np.float64)
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    return a


def result_dtype(name: str, dtype: np.dtype) -> np.dtype:
    """The result dtype base.py promises for elementwise ``name`` on ``dtype`` operands."""
    if name in PREDICATES:
        return np.dtype(bool)
    if name in ("real", "imag", "abs") and dtype.kind == "c":
        return np.dtype(dtype.char.lower())
    return dtype


# kinds for which core's op row answers without calling the primitive (integers are their
# own floor; predicates of integers are constants; conj/real of reals are the input)
_FORWARDED = {"floor": "biu", "ceil": "biu", "trunc": "biu", "round": "biu",
              "isnan": "biu", "isinf": "biu", "isfinite": "biu", "signbit": "bui",
              "conj": "biuf", "real": "biuf", "imag": "biuf", "positive": "biufc", "sign": "b"}


def core_calls(name: str, dtype: np.dtype) -> bool:
    """Whether core ever hands primitive ``name`` operands of ``dtype`` (its dtype rule
    computes in that dtype); primitives are only called that way."""
    from omnitensor.core import dtypes as _dt
    from omnitensor.core.ops.elementwise import BINARY_OPS, UNARY_OPS
    from omnitensor.errors import DTypeError
    op = UNARY_OPS.get(name) or BINARY_OPS.get(name)
    if op is None:
        return True
    d = _dt.as_dtype(dtype)
    try:
        cd, _ = op.rule(name, d) if name in UNARY_OPS else op.rule(name, d, d)
    except DTypeError:
        return False
    if dtype.kind in _FORWARDED.get(name, ""):
        return False  # core's forward handles this kind without the primitive
    return cd is d
