"""Scans: cumsum/cumprod along an axis, and nonzero (a count pass, a host prefix, a write
pass).

The kernels' design and source live in :mod:`omnitensor.kernels.scan` (rendered for the OpenCL C
dialect); this module picks the kernel, sizes the launch and runs it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import UnsupportedDTypeError
from ...kernels.scan import source as _source
from . import program_cache
from .array import CLArray, new
from .cltypes import BY_NP, CType, pack_i32, pack_i64
from .launch import run_items, set_bytes, set_mem

def _kernel(st: Any, name: str, t: CType) -> Any:
    return program_cache.kernel(st, ("scan", t.key), name, lambda: _source(t),
                                st.build_options)


def cumulative(op: str, x: CLArray, axis: int) -> CLArray:
    st = x.state
    t = BY_NP.get(x.dtype)
    if t is None:
        raise UnsupportedDTypeError(f"cum{op}: unsupported dtype {x.dtype}")
    out = new(st, x.shape, x.dtype)
    if x.size == 0:
        return out
    K = x.shape[axis]
    M = x.size // K
    ostr = out.strides
    kept = [d for d in range(x.ndim) if d != axis]
    ksh = [x.shape[d] for d in reversed(kept)]
    kxs = [x.strides[d] for d in reversed(kept)]
    kos = [ostr[d] for d in reversed(kept)]
    lay = st.layout((len(kept), *ksh, *kxs, *kos, x.strides[axis], ostr[axis]))
    par = 4 * st.compute_units if st.is_cpu else 1024
    if M >= par or K < 8192:
        mchunk = max(1, -(-M // (4 * par))) if st.is_cpu else 1
        nsplit = 1
    else:
        mchunk, nsplit = 1, max(1, min(-(-2 * par // M), K // 2048))
    kchunk = -(-K // nsplit)
    kern = _kernel(st, f"scan_{op}_{t.key}", t)
    tot = new(st, (M, nsplit), np.dtype(np.float32) if t.half else x.dtype) \
        if nsplit > 1 else None
    n = -(-M // mchunk) * nsplit
    set_mem(kern, (0, out.data, 1, x.data, 2, tot.data if tot is not None else st.dummy,
                   10, lay))
    common = (3, pack_i64(x.offset), 4, pack_i64(M), 5, pack_i64(K), 6, pack_i64(mchunk),
              7, pack_i64(kchunk), 8, pack_i32(nsplit))
    if nsplit > 1:
        set_bytes(kern, common + (9, pack_i32(1)))
        run_items(st, kern, n)
    set_bytes(kern, common + (9, pack_i32(2)))
    run_items(st, kern, n)
    return out


def nonzero(x: CLArray) -> tuple[CLArray, ...]:
    st = x.state
    t = BY_NP.get(x.dtype)
    if t is None:
        raise UnsupportedDTypeError(f"nonzero: unsupported dtype {x.dtype}")
    shape = x.shape if x.ndim else (1,)
    strides = x.strides if x.ndim else (1,)
    nd = len(shape)
    n = x.size
    i64 = np.dtype(np.int64)
    if n == 0:
        return tuple(new(st, (0,), i64) for _ in range(nd))
    lay = st.layout((nd, *reversed(shape), *reversed(strides)))
    groups = max(1, min(4 * st.compute_units if st.is_cpu else 256, n // 4096))
    chunk = -(-n // groups)
    groups = -(-n // chunk)
    cnt = new(st, (groups,), i64)
    kc = _kernel(st, f"nzcount_{t.key}", t)
    set_mem(kc, (0, cnt.data, 1, x.data, 5, lay))
    set_bytes(kc, (2, pack_i64(x.offset), 3, pack_i64(n), 4, pack_i64(chunk)))
    run_items(st, kc, groups)
    host = np.empty(groups, np.int64)
    st.read(host, cnt.data)  # the size is data-dependent
    total = int(host.sum())
    starts = np.concatenate([[0], np.cumsum(host)[:-1]]).astype(np.int64)
    out = new(st, (nd, total), i64)
    if total:
        sbuf = new(st, (groups,), i64)
        st.write(sbuf.data, starts)
        kw = _kernel(st, f"nzwrite_{t.key}", t)
        set_mem(kw, (0, out.data, 1, sbuf.data, 2, x.data, 7, lay))
        set_bytes(kw, (3, pack_i64(x.offset), 4, pack_i64(n), 5, pack_i64(chunk),
                       6, pack_i64(total)))
        run_items(st, kw, groups)
    return tuple(CLArray(out.data, (total,), (1,), d * total, i64, st, True) for d in range(nd))
