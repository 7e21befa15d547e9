"""Scans: cumsum/cumprod along an axis, and nonzero (a count pass, a host prefix, a write
pass).

A cumulative op treats the array as M rows of K along the axis (strided input, C-contiguous
output). Many rows: a work-item scans whole rows sequentially. Few long rows: each row is
split into parts; pass 1 computes every part's total, pass 2 rescans each part starting from
the combination of the totals before it (an exclusive scan of at most a few dozen totals,
done by each work-item itself), so both passes are parallel.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pyopencl as cl

from ...errors import UnsupportedDTypeError
from . import program_cache
from .array import CLArray, new
from .clsrc import PRELUDE, helpers
from .cltypes import BY_NP, CType, pack_i32, pack_i64
from .launch import run_items, set_bytes, set_mem

_SCAN = """
__kernel void scan_{OP}_{K}(__global {C} *o, __global const {C} *x, __global {A} *tot,
                            long xoff, long M, long K, long mchunk, long kchunk, int nsplit,
                            int phase, __global const long *L) {{
  long g = get_global_id(0);
  long nblocks = (M + mchunk - 1) / mchunk;
  if (g >= nblocks * nsplit) return;
  long mb = g / nsplit; int part = (int)(g - mb * nsplit);
  int nk = (int)L[0];
  __global const long *ksh = L + 1, *kxs = L + 1 + nk, *kos = L + 1 + 2 * nk;
  long xs = L[1 + 3 * nk], os = L[2 + 3 * nk];
  long k0 = part * kchunk, k1 = min(K, k0 + kchunk);
  long m1 = min(M, (mb + 1) * mchunk);
  for (long m = mb * mchunk; m < m1; m++) {{
    long xb = xoff, ob = 0, rem = m;
    for (int d = 0; d < nk; d++) {{
      long c = rem % ksh[d]; rem /= ksh[d]; xb += c * kxs[d]; ob += c * kos[d];
    }}
    {A} acc = {INIT}, cmp = {INIT};
    if (phase == 1) {{
      for (long k = k0; k < k1; k++) {{ {A} v = {LOAD}; {STEP} }}
      tot[m * nsplit + part] = acc;
    }} else {{
      for (int p = 0; p < part; p++) {{ {A} v = tot[m * nsplit + p]; {STEP} }}
      for (long k = k0; k < k1; k++) {{ {A} v = {LOAD}; {STEP} {STORE} }}
    }}
  }}
}}

__kernel void nzcount_{K}(__global long *cnt, __global const {C} *x, long xoff, long n,
                          long chunk, __global const long *L) {{
  long g = get_global_id(0);
  long s = g * chunk, e = min(n, s + chunk), c = 0;
  if (s >= n) return;  /* work-items past the last chunk (GPU launches round up) */
  int nd = (int)L[0];
  for (long i = s; i < e; i++) {{
    long off = xoff, r = i;
    for (int d = 0; d < nd; d++) {{ long q = r % L[1 + d]; r /= L[1 + d]; off += q * L[1 + nd + d]; }}
    {A} v = {LOADN}; c += {NZ};
  }}
  cnt[g] = c;
}}

__kernel void nzwrite_{K}(__global long *out, __global const long *start,
                          __global const {C} *x, long xoff, long n, long chunk, long total,
                          __global const long *L) {{
  long g = get_global_id(0);
  long s = g * chunk, e = min(n, s + chunk);
  if (s >= n) return;
  long w = start[g];
  int nd = (int)L[0];
  for (long i = s; i < e; i++) {{
    long off = xoff, r = i;
    for (int d = 0; d < nd; d++) {{ long q = r % L[1 + d]; r /= L[1 + d]; off += q * L[1 + nd + d]; }}
    {A} v = {LOADN};
    if ({NZ}) {{
      r = i;
      for (int d = 0; d < nd; d++) {{ out[(nd - 1 - d) * total + w] = r % L[1 + d]; r /= L[1 + d]; }}
      w++;
    }}
  }}
}}
"""


def _comb(op: str, t: CType) -> str:
    k = t.kind
    if op == "sum":
        return f"({t.comp})(({t.wide})acc + ({t.wide})v)" if k in "iub" else "acc + v"
    if k in "iub":
        return f"({t.comp})(({t.wide})acc * ({t.wide})v)"
    return f"{t.key}_mul(acc, v)" if k == "c" else "acc * v"


def _step(op: str, t: CType) -> str:
    """One accumulation statement. Floating sums are compensated (Kahan): a plain float32
    running sum of 10k values drifts ~1e-6 relative, the compensated one stays at the final
    rounding, as torch's double accumulator does (the build never enables fast math, which
    could reassociate the correction away)."""
    if op == "sum" and t.kind in "fc":
        return "{ " + t.comp + " y = v - cmp; " + t.comp + " s = acc + y; cmp = (s - acc) - y; acc = s; }"
    return f"acc = {_comb(op, t)};"


def _source(t: CType) -> str:
    parts = [PRELUDE, helpers(t)]
    load = "vload_half(xb + k * xs, x)" if t.half else "x[xb + k * xs]"
    loadn = "vload_half(off, x)" if t.half else "x[off]"
    nz = "(v.x != 0 || v.y != 0)" if t.kind == "c" else "(v != 0)"
    for op in ("sum", "prod"):
        if t.kind == "c":
            init = "(" + t.comp + ")(0, 0)" if op == "sum" else "(" + t.comp + ")(1, 0)"
        else:
            init = f"({t.comp})({0 if op == 'sum' else 1})"
        store = "vstore_half_rte(acc, ob + k * os, o);" if t.half else "o[ob + k * os] = acc;"
        src = _SCAN.format(OP=op, K=t.key, C=t.c, A=t.comp, INIT=init, LOAD=load,
                           STEP=_step(op, t), STORE=store, LOADN=loadn, NZ=nz)
        if op == "prod":  # the nonzero kernels are emitted once
            src = src[:src.index("__kernel void nzcount")]
        parts.append(src)
    return "\n".join(parts)


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
    cl.enqueue_copy(st.queue, host, cnt.data, is_blocking=True)  # the size is data-dependent
    total = int(host.sum())
    starts = np.concatenate([[0], np.cumsum(host)[:-1]]).astype(np.int64)
    out = new(st, (nd, total), i64)
    if total:
        sbuf = new(st, (groups,), i64)
        cl.enqueue_copy(st.queue, sbuf.data, starts, is_blocking=True)
        kw = _kernel(st, f"nzwrite_{t.key}", t)
        set_mem(kw, (0, out.data, 1, sbuf.data, 2, x.data, 7, lay))
        set_bytes(kw, (3, pack_i64(x.offset), 4, pack_i64(n), 5, pack_i64(chunk),
                       6, pack_i64(total)))
        run_items(st, kw, groups)
    return tuple(CLArray(out.data, (total,), (1,), d * total, i64, st, True) for d in range(nd))
