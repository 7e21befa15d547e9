"""argmax / argmin along one axis (or the flattened array): first occurrence wins, a NaN
counts as the extreme (torch), so the first NaN is the answer when there is one.

The kernels' design and source live in :mod:`omnitensor.kernels.argreduce` (rendered for the OpenCL C
dialect); this module picks the kernel, sizes the launch and runs it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import UnsupportedDTypeError
from ...kernels.argreduce import source as _source
from . import program_cache
from .array import CLArray, c_strides, new
from .cltypes import BY_NP, pack_i32, pack_i64
from .elementwise import copy
from .launch import run_items, set_bytes, set_mem

def argreduce(op: str, x: CLArray, axis: int | None, keepdims: bool) -> CLArray:
    st = x.state
    t = BY_NP.get(x.dtype)
    if t is None or t.kind == "c":
        raise UnsupportedDTypeError(f"{op}: complex numbers are not ordered")
    if axis is None:
        if not x.contig:
            x = copy(x)
        out_shape = (1,) * x.ndim if keepdims else ()
        M, K, kstride = 1, x.size, 1
        kn, ks = [], []
        xoff = x.offset
    else:
        out_shape = tuple(1 if d == axis else n for d, n in enumerate(x.shape)) if keepdims \
            else tuple(n for d, n in enumerate(x.shape) if d != axis)
        K, kstride = x.shape[axis], x.strides[axis]
        kept = [(x.shape[d], x.strides[d]) for d in range(x.ndim) if d != axis]
        kn = [n for n, _ in reversed(kept)]
        ks = [s for _, s in reversed(kept)]
        M = 1
        for n in kn:
            M *= n
        xoff = x.offset
    if K == 0:
        raise ValueError(f"{op}: attempt to get {op} of an empty sequence")
    res_dt = np.dtype(np.int64)
    if M == 0:
        return new(st, out_shape, res_dt)
    mchunk, nsplit, kchunk = _plan(st, M, K)
    kern = program_cache.kernel(st, ("arg", op, t.key), f"{op}_{t.key}_x",
                                lambda: _source(op, t), st.build_options)
    idx = new(st, (M, nsplit), res_dt)
    vdt = np.dtype(np.float32) if t.half else x.dtype
    vals = new(st, (M, nsplit), vdt) if nsplit > 1 else None
    lay = st.layout((len(kn), *kn, *ks))
    _run(st, kern, idx, vals, x.data, st.dummy, xoff, M, K, kstride, mchunk, kchunk,
         nsplit, 0, lay)
    if nsplit > 1:
        assert vals is not None  # made above when nsplit > 1
        kern2 = program_cache.kernel(st, ("arg", op, t.key), f"{op}_{t.key}_p",
                                     lambda: _source(op, t), st.build_options)
        final = new(st, (M, 1), res_dt)
        lay2 = st.layout((1, M, nsplit))
        _run(st, kern2, final, None, vals.data, idx.data, 0, M, nsplit, 1, M, nsplit, 1, 1,
             lay2)
        idx = final
    return CLArray(idx.data, out_shape, c_strides(out_shape), 0, res_dt, st, True)


def _run(st: Any, k: Any, oi: CLArray, ov: Any, x: Any, xi: Any, xoff: int, M: int, K: int,
         kstride: int, mchunk: int, kchunk: int, nsplit: int, partials: int, lay: Any) -> None:
    set_mem(k, (0, oi.data, 1, ov.data if ov is not None else st.dummy, 2, x, 3, xi, 12, lay))
    set_bytes(k, (4, pack_i64(xoff), 5, pack_i64(M), 6, pack_i64(K), 7, pack_i64(kstride),
                  8, pack_i64(mchunk), 9, pack_i64(kchunk), 10, pack_i32(nsplit),
                  11, pack_i32(partials)))
    n = -(-M // mchunk) * nsplit
    run_items(st, k, n)


def _plan(st: Any, M: int, K: int) -> tuple[int, int, int]:
    from .reduce import _plan as plan
    mchunk, nsplit, kchunk = plan(st, M, K)
    return mchunk, min(nsplit, K), kchunk if nsplit <= K else 1
