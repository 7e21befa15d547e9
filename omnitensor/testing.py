"""Test helpers shared by the test suite and the conformance command: per-dtype
tolerances and ``assert_close`` against a NumPy float64 reference."""
from __future__ import annotations

from typing import Any

import numpy as np

from .core.dtypes import DType, as_dtype
from .core.tensor import Tensor

#: (rtol, atol) per dtype name, for results compared with a float64 NumPy reference
TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-2, 1e-3),
    "float32": (2e-5, 1e-6),
    "float64": (1e-11, 1e-13),
    "complex64": (2e-5, 1e-6),
    "complex128": (1e-11, 1e-13),
}


def tolerance(dtype: Any) -> tuple[float, float]:
    d = as_dtype(dtype)
    return TOLERANCES.get(d.name, (0.0, 0.0))


def to_numpy(x: Any) -> np.ndarray:
    if isinstance(x, Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def assert_close(actual: Any, expected: Any, *, rtol: float | None = None,
                 atol: float | None = None, dtype: Any = None, check_dtype: bool = True,
                 equal_nan: bool = True, msg: str = "") -> None:
    """Assert a tensor matches a reference (NumPy array, tensor or scalar), with the
    tolerance of ``actual``'s dtype unless given."""
    a = to_numpy(actual)
    e = to_numpy(expected)
    if isinstance(actual, Tensor):
        # the backend array must carry the dtype and shape the tensor claims
        if a.dtype != actual.dtype.np:
            raise AssertionError(f"{msg}tensor says {actual.dtype.name} but its "
                                 f"{actual.device} data is {a.dtype}")
        if a.shape != tuple(actual.shape):
            raise AssertionError(f"{msg}tensor says shape {actual.shape} but its data has "
                                 f"{a.shape}")
    if isinstance(actual, Tensor) and check_dtype and dtype is not None:
        want = as_dtype(dtype)
        if actual.dtype is not want:
            raise AssertionError(f"{msg}dtype {actual.dtype.name} != expected {want.name}")
    if a.shape != e.shape:
        raise AssertionError(f"{msg}shape {a.shape} != expected {e.shape}")
    d: DType = actual.dtype if isinstance(actual, Tensor) else as_dtype(a.dtype)
    r0, a0 = tolerance(d)
    rtol = r0 if rtol is None else rtol
    atol = a0 if atol is None else atol
    if a.dtype.kind in "biu" and e.dtype.kind in "biu":
        if not np.array_equal(a, e):
            bad = np.argwhere(a != e)[:5]
            raise AssertionError(f"{msg}values differ at {bad.tolist()}: {a.ravel()[:10]} vs "
                                 f"{e.ravel()[:10]}")
        return
    a64 = a.astype(np.complex128 if a.dtype.kind == "c" or e.dtype.kind == "c" else np.float64)
    e64 = e.astype(a64.dtype)
    if not np.allclose(a64, e64, rtol=rtol, atol=atol, equal_nan=equal_nan):
        diff = np.abs(a64 - e64)
        diff = np.where(np.isnan(diff), np.inf, diff)
        i = np.unravel_index(np.argmax(diff), diff.shape) if diff.ndim else ()
        raise AssertionError(
            f"{msg}values differ (rtol={rtol}, atol={atol}): worst at {i}: {a64[i]} vs "
            f"expected {e64[i]}")
