"""oneMKL (through dpnp) on the sycl backend's own arrays: GEMM, linalg, FFT.

The arrays are ``CLArray`` views of our USM blocks (``runtime.py``). A library call sees
them as dpnp arrays sharing that memory (:func:`as_dpnp`: no copy, the device's in-order
queue), and its results come back as arrays over dpnp's allocation (:func:`adopt`).
Ordering needs nothing more: dpnp submits to the same in-order queue, so its kernels run
after ours and ours after its.

Lifetime: a dpnp view holds our block's USM memory object, so the block's memory cannot be
freed under a queued oneMKL call (dpnp's keep-alive host task holds the view), and its
return to our pool is safe in queue order. Memory dpnp allocated is held by a
:class:`Foreign` buffer; when the last array over it dies the allocation is parked in the
pool's drop list and freed after the next queue wait: freeing it at once could block, with
the GIL held, on a copy queued behind one of dpnp's keep-alive host tasks, which needs the
GIL (a deadlock).

Threads take turns inside oneMKL (``sync.ONEMKL_LOCK``): two first calls of one routine at
once deadlock on its C++ static initialisation.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import dpnp
from dpnp.dpnp_array import dpnp_array
from dpnp.tensor import usm_ndarray

from ..opencl.array import CLArray
from ..opencl.array import is_c_contig
from .sync import ONEMKL_LOCK


class Foreign:
    """A USM allocation made by dpnp (or imported through DLPack) that our arrays use."""

    __slots__ = ("mem", "int_ptr", "pool")

    def __init__(self, mem: Any, pool: Any) -> None:
        self.mem = mem
        self.int_ptr = mem._pointer
        self.pool = pool

    def __del__(self) -> None:
        pool = self.pool
        if pool is not None:
            pool._drop.append(self.mem)  # freed after the next queue wait


def as_usm(x: CLArray) -> Any:
    """A ``usm_ndarray`` sharing x's memory (same shape, strides and offset)."""
    return usm_ndarray(x.shape, dtype=x.dtype, buffer=x.data.mem, offset=x.offset,
                       strides=x.strides if x.size else None)


def as_dpnp(x: Any) -> Any:
    """A dpnp array sharing a CLArray's memory; anything else unchanged."""
    if x.__class__ is not CLArray:
        return x
    return dpnp_array._create_from_usm_ndarray(as_usm(x))


def adopt(r: Any, st: Any) -> CLArray:
    """A CLArray over a dpnp (or usm_ndarray) result's memory, on state ``st``."""
    u = r.get_array() if isinstance(r, dpnp_array) else r
    item = u.dtype.itemsize
    data = Foreign(u.usm_data, st.pool)
    strides = tuple(s for s in u.strides)  # usm_ndarray strides are in elements
    shape = tuple(u.shape)
    return CLArray(data, shape, strides, int(u._element_offset), np.dtype(u.dtype), st,
                   is_c_contig(shape, strides) if item else True)


def call(fn: Callable[..., Any], st: Any, *args: Any, **kw: Any) -> Any:
    """``fn(*args, **kw)`` (a dpnp routine) on dpnp views of the CLArray arguments; array
    results (also inside a tuple) come back as CLArrays."""
    args = tuple(as_dpnp(a) for a in args)
    with ONEMKL_LOCK:
        r = fn(*args, **kw)
    return _back(r, st)


def _back(r: Any, st: Any) -> Any:
    if isinstance(r, (dpnp_array, usm_ndarray)):
        return adopt(r, st)
    if isinstance(r, tuple):
        return tuple(_back(v, st) for v in r)
    if hasattr(r, "_fields") or isinstance(r, list):  # named tuples of results
        return tuple(_back(v, st) for v in r)
    return r


def matmul_into(a: CLArray, b: CLArray, out: CLArray) -> CLArray:
    """``out = a @ b`` by oneMKL (a, b of one dtype; ``out`` C-contiguous, fresh)."""
    a_, b_, o_ = as_dpnp(a), as_dpnp(b), as_dpnp(out)
    with ONEMKL_LOCK:
        dpnp.matmul(a_, b_, out=o_)
    return out
