"""Primitives dpnp lacks or gets wrong, composed on the device from dpnp kernels (no
host round trip).

* :func:`scatter_add` -- dpnp has no ``add.at`` (ufuncs there have no ``.at``), and a
  fancy-index ``x[idx] += v`` drops duplicates. We sort the flat target indices, sum runs
  of equal indices with a segmented Hillis-Steele scan (log2 of the longest run steps,
  each a few vector kernels; a tree-shaped sum, so floats keep their accuracy and integers
  stay exact, unlike a cumsum-and-subtract), then add one total per distinct index.
* :func:`searchsorted_batched` -- ``dpnp.searchsorted`` takes a 1-D sorted array only; a
  vectorised binary search does every row at once instead of one kernel per row.
* :func:`floor_divide_float` -- NumPy's float floor division (dpnp's is off by one).
* :func:`erf`, :func:`out_may_alias_x1`, :func:`broadcast_matrix` -- small fixes around
  dpnp 0.20's erf dtype, its ``out=`` handling and oneMKL's stride checks.
"""
from __future__ import annotations

import math
from typing import Any

import dpnp
import numpy as np

try:
    from dpnp.scipy.special import erf as _erf, erfc as _erfc
except ImportError:  # older dpnp: erf lived in the top namespace
    _erf, _erfc = dpnp.erf, dpnp.erfc


def _flat_keys(shape: tuple[int, ...], indices: tuple[Any, ...]) -> Any:
    """C-order flat positions of the index tuple within ``shape`` (int64, 1-D)."""
    key = None
    stride = 1
    for n, idx in zip(reversed(shape), reversed(indices)):
        term = idx if stride == 1 else idx * stride
        key = term if key is None else key + term
        stride *= n
    return dpnp.reshape(key, (-1,))


def scatter_add(x: Any, indices: tuple[Any, ...], values: Any, queue: Any) -> None:
    """In place ``x[indices] += values`` with duplicate indices accumulated (``or``-ed for
    bool, as NumPy's ``add.at``). ``indices``: one int64 array per axis, one shape S;
    ``values``: an array of shape S or a Python scalar."""
    if x.ndim == 0:  # no index arrays: every value lands on the single element
        total = dpnp.sum(values) if not np.isscalar(values) else values
        x[...] = _combine(x, total)
        return
    shape = indices[0].shape
    n = math.prod(shape)
    if n == 0:
        return
    if np.isscalar(values):
        values = dpnp.full(shape, values, dtype=x.dtype, sycl_queue=queue)
    keys = _flat_keys(x.shape, indices)
    vals = dpnp.reshape(values, (-1,))
    order = dpnp.argsort(keys, stable=True)  # stable: a deterministic summation order
    keys = dpnp.take(keys, order)
    vals = dpnp.take(vals, order)
    last = dpnp.empty(n, dtype=np.bool_, sycl_queue=queue)  # last of each run of equal keys
    last[-1] = True
    if n > 1:
        dpnp.not_equal(keys[:-1], keys[1:], out=last[:-1])
    distinct = int(dpnp.count_nonzero(last))  # one scalar read: sizes the masked gather
    if distinct < n:
        vals = _segmented_inclusive_scan(keys, vals, longest=n - distinct + 1)
        keys = keys[last]
        vals = vals[last]
    coords = dpnp.unravel_index(keys, x.shape)
    x[coords] = _combine(x[coords], vals)


def _combine(a: Any, b: Any) -> Any:
    return dpnp.logical_or(a, b) if a.dtype == np.bool_ else dpnp.add(a, b)


def _segmented_inclusive_scan(keys: Any, vals: Any, longest: int) -> Any:
    """Running totals within runs of equal (sorted) keys: element i holds the sum of its
    run up to i, so the last element of a run holds the run's total. ``longest`` bounds
    the run length, hence the number of doubling steps."""
    acc = dpnp.copy(vals)
    zero = False if acc.dtype == np.bool_ else 0
    d = 1
    while d < longest:
        same = keys[d:] == keys[:-d]  # sorted keys: equal at distance d => same run
        acc[d:] = _combine(acc[d:], dpnp.where(same, acc[:-d], zero))
        d *= 2
    return acc


def _before(a: Any, b: Any) -> Any:
    """``a < b`` in NumPy's sort order, where NaN sorts after every number."""
    lt = dpnp.less(a, b)
    if a.dtype.kind in "fc":
        lt = dpnp.logical_or(lt, dpnp.logical_and(dpnp.isnan(b), dpnp.logical_not(dpnp.isnan(a))))
    return lt


def searchsorted_batched(sorted_x: Any, values: Any, side: str, queue: Any) -> Any:
    """int64 insertion points of ``values[..., j]`` into the sorted last axis of
    ``sorted_x``, both with the same leading shape; NumPy's semantics per row."""
    lead = sorted_x.shape[:-1]
    n = sorted_x.shape[-1]
    m = values.shape[-1]
    s2 = dpnp.reshape(sorted_x, (-1, n))
    v2 = dpnp.reshape(values, (-1, m))
    lo = dpnp.zeros(v2.shape, dtype=np.int64, sycl_queue=queue)
    if n == 0 or v2.size == 0:
        return dpnp.reshape(lo, lead + (m,))
    hi = dpnp.full(v2.shape, n, dtype=np.int64, sycl_queue=queue)
    for _ in range(max(1, n.bit_length())):  # the range [lo, hi) halves each step
        mid = (lo + hi) // 2
        probe = dpnp.take_along_axis(s2, dpnp.minimum(mid, n - 1), axis=1)
        # go right when probe < v ('left') or probe <= v ('right')
        right = _before(probe, v2) if side == "left" else dpnp.logical_not(_before(v2, probe))
        active = lo < hi
        lo = dpnp.where(dpnp.logical_and(active, right), mid + 1, lo)
        hi = dpnp.where(dpnp.logical_and(active, dpnp.logical_not(right)), mid, hi)
    return dpnp.reshape(lo, lead + (m,))


def floor_divide_float(a: Any, b: Any) -> Any:
    """NumPy's (and torch's, and Python's) float floor division, on the device.

    dpnp computes ``floor(a / b)``: when the rounded quotient lands on an integer the true
    quotient is just below, that is one too big (``2.999 // 1`` -> 3 in float16, and ~7%
    of operands near integer multiples in float32/64), and ``inf // 2`` is inf instead of
    nan. This is NumPy's ``npy_divmod``: floor of ``(a - fmod(a, b)) / b`` adjusted to the
    sign of ``b``; float16 runs in float32 and rounds once at the end, as NumPy does."""
    x = a if isinstance(a, dpnp.ndarray) else b
    dtype = x.dtype
    work = np.dtype(np.float32) if dtype == np.float16 else dtype
    a = dpnp.full(x.shape, a, dtype=work, sycl_queue=x.sycl_queue) if np.isscalar(a) \
        else dpnp.astype(a, work, copy=False)
    b = dpnp.full(x.shape, b, dtype=work, sycl_queue=x.sycl_queue) if np.isscalar(b) \
        else dpnp.astype(b, work, copy=False)
    mod = dpnp.fmod(a, b)
    div = dpnp.divide(dpnp.subtract(a, mod), b)
    # fmod has the sign of a; Python's remainder has the sign of b: one quotient less
    adjust = dpnp.logical_and(mod != 0, dpnp.not_equal(b < 0, mod < 0))
    div = dpnp.subtract(div, adjust.astype(work))
    floordiv = dpnp.floor(div)
    floordiv = dpnp.add(floordiv, (dpnp.subtract(div, floordiv) > 0.5).astype(work))
    quotient = dpnp.divide(a, b)
    res = dpnp.where(div == 0, dpnp.copysign(dpnp.zeros_like(div), quotient), floordiv)
    res = dpnp.where(b == 0, quotient, res)
    return res if work == dtype else res.astype(dtype)


# ------------------------------------------------------------- small dpnp fixes
def out_may_alias_x1(fn: Any) -> Any:
    """dpnp (0.20) routes ``f(x1, x2, out=x1)`` to an in-place kernel and raises
    ValueError for functions that have none (maximum, minimum, atan2, hypot, logaddexp,
    copysign, nextafter). ``order="C"`` skips that branch; dpnp.tensor then writes the
    result into ``out`` through its ordinary kernel, which handles the overlap."""
    def call(x1: Any, x2: Any, out: Any = None) -> Any:
        if out is not None and out is x1:
            return fn(x1, x2, out=out, order="C")
        return fn(x1, x2, out=out)
    call.__name__ = getattr(fn, "__name__", "binary")
    call.__doc__ = f"dpnp's {call.__name__}, accepting out= aliasing the first operand."
    return call


def int_scalar_as_array(fn: Any) -> Any:
    """Wrap a binary dpnp function so that a Python int (or bool) operand of an integer or
    bool array becomes an array of the array's shape and dtype (``dpnp.full_like``) first.

    Why: plain ``dpnp.not_equal(x_int64, -100)`` grows the heap by ~80-140 B a call (16,000
    calls, a ``queue.wait()`` every 100), the same comparison with a ``full_like`` operand by
    <1-20 B. The cause is Intel's OpenCL CPU runtime: its ``Context::USMFree`` leaves an
    80-byte map node behind for every distinct USM address it frees, and dpnp's path for a
    Python int makes tiny USM temporaries, which glibc keeps placing at new addresses (see
    ``tests/soak/sycl_leak_repro.py``). ``cross_entropy``'s ``ne(target, ignore_index)``
    hit it every training step. The fill costs one contiguous kernel; the result is the same
    (dpnp's weak-scalar rule gives the array's dtype too). Out-of-range scalars keep dpnp's
    path."""
    def call(a: Any, b: Any, out: Any = None) -> Any:
        if type(b) in _PY_INTS and _fits(a, b):
            b = dpnp.full_like(a, b)
        elif type(a) in _PY_INTS and _fits(b, a):
            a = dpnp.full_like(b, a)
        return fn(a, b, out=out)
    call.__name__ = getattr(fn, "__name__", "binary")
    call.__doc__ = getattr(fn, "__doc__", None)
    call.__wrapped__ = fn  # type: ignore[attr-defined]
    return call


_PY_INTS = (int, bool)


def _fits(x: Any, v: int) -> bool:
    """Whether the Python int ``v`` is exactly representable in the integer/bool array x."""
    kind = getattr(getattr(x, "dtype", None), "kind", "")
    if kind == "b":
        return type(v) is bool
    if kind not in "iu" or not kind:
        return False
    info = np.iinfo(x.dtype)
    return info.min <= v <= info.max


def broadcast_matrix(x: Any) -> bool:
    """Whether one of x's two matrix axes repeats elements (stride 0, size > 1)."""
    st, sh = x.strides, x.shape
    return any(st[i] == 0 and sh[i] > 1 for i in (-1, -2) if -i <= len(sh))


def _keep_half(fn: Any) -> Any:
    """dpnp's special function ``fn``, keeping float16 (it computes float16 in float32 and
    returns that)."""
    def call(x: Any, out: Any = None) -> Any:
        if x.dtype != np.float16:
            return fn(x, out=out)
        r = fn(x).astype(np.float16)
        if out is None:
            return r
        out[...] = r
        return out
    call.__name__ = fn.__name__
    return call


erf = _keep_half(_erf)
erfc = _keep_half(_erfc)
