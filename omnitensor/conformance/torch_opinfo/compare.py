"""Comparing a face output with torch's, in the plain form of :func:`convert.canon`.

:func:`compare` answers None (a match) or a :class:`Mismatch` naming its cause (structure,
dtype, shape, values) and where. Values match with torch.testing's tolerances for the
result's dtype; a float32/float16 result that misses torch's float32 result is still right
when it is no further from the float64 result than twice torch's own error (two correct
float32 implementations may round differently).
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable

import numpy as np

from .convert import Arr
from .oracle import TOLERANCES


#: dtypes whose results may round differently from torch's and are then judged against
#: the float64 result
_ROUNDED = ("float32", "float16", "bfloat16", "complex64")


@dataclasses.dataclass
class Mismatch:
    """Why an output differs: ``cause`` is structure, dtype, shape or values."""
    cause: str
    message: str


@dataclasses.dataclass
class Options:
    """How to compare: ``values=False`` for ops whose values are random or undefined
    (``empty``, dropout), ``abs_values`` for results defined up to sign or phase
    (``abs_outputs``: which top-level outputs, as eigenvectors and singular vectors are),
    ``loose_outputs`` top-level outputs compared by dtype and shape only (the indices of
    tied values), ``reference`` gives the float64 result on demand."""
    values: bool = True
    abs_values: bool = False
    abs_outputs: tuple[int, ...] = ()
    loose_outputs: tuple[int, ...] = ()
    reference: Callable[[], Any] | None = None


def _worst(actual: np.ndarray, expected: np.ndarray, bad: np.ndarray) -> str:
    diff = np.abs(actual.astype(np.complex128) - expected.astype(np.complex128))
    diff = np.where(bad, np.nan_to_num(diff, nan=np.inf), 0)
    idx = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.ndim else ()
    a, e = actual[idx], expected[idx]
    where = f" at {tuple(int(i) for i in idx)}" if idx else ""
    return (f"{int(bad.sum())}/{bad.size} elements differ, worst{where}: omnitensor {a!r}, "
            f"torch {e!r}")


def _close(a: np.ndarray, e: np.ndarray, dtype: str) -> np.ndarray:
    """Elementwise: does ``a`` match ``e`` (NaN matches NaN, infinities match exactly)."""
    rtol, atol = TOLERANCES.get(dtype, (0.0, 0.0))
    if rtol == 0.0 and atol == 0.0:
        both_nan = _isnan(a) & _isnan(e)
        return (a == e) | both_nan
    return np.isclose(a.astype(np.complex128), e.astype(np.complex128), rtol=rtol, atol=atol,
                      equal_nan=True)


def _isnan(x: np.ndarray) -> np.ndarray:
    return np.isnan(x) if x.dtype.kind in "fc" else np.zeros(x.shape, bool)


def _within_reference(a: np.ndarray, e: np.ndarray, ref: Any, dtype: str) -> np.ndarray:
    """Where ``a`` is as near the float64 ``ref`` as torch's ``e`` is (twice its error)."""
    if not isinstance(ref, Arr) or ref.values.shape != a.shape:
        return np.zeros(a.shape, bool)
    rtol, atol = TOLERANCES.get(dtype, (0.0, 0.0))
    r = ref.values.astype(np.complex128)
    err_a = np.abs(a.astype(np.complex128) - r)
    err_e = np.abs(e.astype(np.complex128) - r)
    ok = err_a <= 2 * err_e + atol + rtol * np.abs(r)
    return ok | (_isnan(a) & _isnan(ref.values))


def _arrays(actual: Arr, expected: Arr, where: str, opts: Options,
            ref: Any) -> Mismatch | None:
    if actual.dtype != expected.dtype:
        return Mismatch("dtype", f"{where}dtype {actual.dtype}, torch gives {expected.dtype}")
    if actual.shape != expected.shape:
        return Mismatch("shape", f"{where}shape {actual.shape}, torch gives {expected.shape}")
    if not opts.values or actual.values.size == 0:
        return None
    a, e = actual.values, expected.values
    if opts.abs_values:
        a, e = np.abs(a), np.abs(e)
        ref = Arr(np.abs(ref.values), ref.dtype, ref.shape) if isinstance(ref, Arr) else ref
    bad = ~_close(a, e, actual.dtype)
    if bad.any() and ref is not None:
        bad &= ~_within_reference(a, e, ref, actual.dtype)
    if bad.any():
        return Mismatch("values", where + _worst(a, e, bad))
    return None


def _numbers(actual: Any, expected: Any, where: str, opts: Options) -> Mismatch | None:
    if isinstance(actual, bool) != isinstance(expected, bool) or \
            isinstance(actual, complex) != isinstance(expected, complex):
        return Mismatch("structure", f"{where}{type(actual).__name__} {actual!r}, torch "
                                     f"gives {type(expected).__name__} {expected!r}")
    if not opts.values:
        return None
    ok = _close(np.asarray(actual), np.asarray(expected), "float64" if isinstance(
        expected, (float, complex)) else "int64")
    return None if bool(ok) else Mismatch("values", f"{where}{actual!r}, torch gives "
                                                    f"{expected!r}")


def compare(actual: Any, expected: Any, opts: Options | None = None,
            where: str = "") -> Mismatch | None:
    """None when ``actual`` (the face's, canonical) matches ``expected`` (torch's)."""
    opts = opts or Options()
    if isinstance(expected, Arr):
        if not isinstance(actual, Arr):
            return Mismatch("structure", f"{where}{_kind(actual)}, torch gives a tensor")
        mismatch = _arrays(actual, expected, where, opts, None)
        if mismatch is not None and mismatch.cause == "values" and \
                opts.reference is not None and actual.dtype in _ROUNDED:
            mismatch = _arrays(actual, expected, where, opts, _at(opts.reference(), where))
        return mismatch
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return Mismatch("structure", f"{where}{_kind(actual)}, torch gives a sequence "
                                         f"of {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            sub = opts
            if not where and i in opts.abs_outputs:
                sub = dataclasses.replace(sub, abs_values=True)
            if not where and i in opts.loose_outputs:
                sub = dataclasses.replace(sub, values=False)
            bad = compare(a, e, sub, f"{where}[{i}]")
            if bad is not None:
                return bad
        return None
    if isinstance(expected, (bool, int, float, complex)) and \
            isinstance(actual, (bool, int, float, complex)):
        return _numbers(actual, expected, where, opts)
    if actual != expected:
        return Mismatch("structure", f"{where}{_kind(actual)}, torch gives {_kind(expected)}")
    return None


def _kind(x: Any) -> str:
    if isinstance(x, Arr):
        return f"a {x.dtype} tensor of shape {x.shape}"
    if isinstance(x, list):
        return f"a sequence of {len(x)}"
    return repr(x)


def _at(tree: Any, where: str) -> Any:
    """The part of ``tree`` at the ``[1][0]`` path in ``where`` (after any label, as the
    ``grad of input 0: `` of a gradient), or None."""
    for part in re.findall(r"\[(\d+)\]", where):
        if not isinstance(tree, list) or int(part) >= len(tree):
            return None
        tree = tree[int(part)]
    return tree
