"""Sorting along an axis (stable merge sort of (key, index) pairs) and searchsorted.

The kernels' design and source live in :mod:`omnitensor.kernels.sort` (rendered for the OpenCL C
dialect); this module picks the kernel, sizes the launch and runs it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import UnsupportedDTypeError
from ...kernels.sort import RUN as _RUN
from ...kernels.sort import source as _source
from . import program_cache
from .array import CLArray, new, permute
from .cltypes import BY_NP, CType, pack_i32, pack_i64
from .elementwise import astype, copy
from .launch import run_items, set_bytes, set_mem

def _kernel(st: Any, name: str, t: CType) -> Any:
    return program_cache.kernel(st, ("sort", t.key), name, lambda: _source(t),
                                st.build_options)


def _go(st: Any, k: Any, n: int, mem: tuple, byts: tuple) -> None:
    set_mem(k, mem)
    set_bytes(k, byts)
    run_items(st, k, n)


def _key_type(x: CLArray) -> CType:
    t = BY_NP.get(x.dtype)
    if t is None or t.kind == "c":
        raise UnsupportedDTypeError(f"sort: {x.dtype} is not ordered")
    return t


def sort(x: CLArray, axis: int, descending: bool, values: bool) -> CLArray:
    """Sorted values (``values``) or the int64 sorting indices of x along ``axis``."""
    st = x.state
    orig_dtype = x.dtype
    if x.dtype == np.float16:
        x = astype(x, np.dtype(np.float32))
    t = _key_type(x)
    nd = x.ndim
    perm = tuple(d for d in range(nd) if d != axis) + (axis,)
    xp = permute(x, perm)
    K = x.shape[axis] if nd else 1
    M = x.size // K if K else 0
    keys = copy(xp)  # contiguous rows, sorted in place
    idx = new(st, xp.shape, np.dtype(np.int64))
    if x.size and K > 0:
        keys, idx = _sort_rows(st, t, keys, idx, M, K, int(bool(descending)))
    res = keys if values else idx
    if values and orig_dtype != res.dtype:
        res = astype(res, orig_dtype)
    if axis == nd - 1 or nd == 0:
        return res
    inv = tuple(np.argsort(perm))
    return copy(permute(res, inv))


def _sort_rows(st: Any, t: CType, keys: CLArray, idx: CLArray, M: int, K: int, desc: int
               ) -> tuple[CLArray, CLArray]:
    runs = -(-K // _RUN)
    k1 = _kernel(st, f"runsort_{t.key}", t)
    _go(st, k1, M * runs, (0, keys.data, 1, idx.data),
        (2, pack_i64(K), 3, pack_i64(runs), 4, pack_i64(M * runs), 5, pack_i32(desc)))
    if K <= _RUN:
        return keys, idx
    k2 = _kernel(st, f"merge_{t.key}", t)
    src_k, src_i = keys, idx
    dst_k, dst_i = new(st, keys.shape, keys.dtype), new(st, idx.shape, idx.dtype)
    w = _RUN
    while w < K:
        pairs = -(-K // (2 * w))
        _go(st, k2, M * pairs, (0, dst_k.data, 1, dst_i.data, 2, src_k.data, 3, src_i.data),
            (4, pack_i64(K), 5, pack_i64(w), 6, pack_i64(pairs), 7, pack_i64(M * pairs),
             8, pack_i32(desc)))
        src_k, dst_k = dst_k, src_k
        src_i, dst_i = dst_i, src_i
        w *= 2
    return src_k, src_i


def searchsorted(sorted_x: CLArray, values: CLArray, side: str) -> CLArray:
    st = sorted_x.state
    if sorted_x.dtype == np.float16:
        sorted_x = astype(sorted_x, np.dtype(np.float32))
        values = astype(values, np.dtype(np.float32))
    t = _key_type(sorted_x)
    s = sorted_x if sorted_x.contig else copy(sorted_x)
    v = values if values.contig else copy(values)
    out = new(st, values.shape, np.dtype(np.int64))
    n = out.size
    if n == 0:
        return out
    K = s.shape[-1] if s.ndim else 1
    V = v.shape[-1] if v.ndim else 1
    batched = 1 if s.ndim > 1 else 0
    if K == 0:
        from .elementwise import fill
        return fill(out, 0)
    k = _kernel(st, f"search_{t.key}", t)
    if s.offset:  # the kernel indexes from the buffer start (views are rare here)
        s = copy(s)
    if v.offset:
        v = copy(v)
    _go(st, k, n, (0, out.data, 1, s.data, 2, v.data),
        (3, pack_i64(n), 4, pack_i64(V), 5, pack_i64(K), 6, pack_i64(batched),
         7, pack_i32(1 if side == "right" else 0)))
    return out

