"""Scan kernels: cumsum/cumprod along an axis, and nonzero (a count pass, a host prefix, a write
pass).

A cumulative op treats the array as M rows of K along the axis (strided input, C-contiguous
output). Many rows: a work-item scans whole rows sequentially. Few long rows: each row is
split into parts; pass 1 computes every part's total, pass 2 rescans each part starting from
the combination of the totals before it (an exclusive scan of at most a few dozen totals,
done by each work-item itself), so both passes are parallel.
"""
from __future__ import annotations

from .ctype import CType
from .dialect import OPENCL_C, Dialect
from .helpers import helpers

_SCAN = """
{KERNEL} void scan_{OP}_{K}({G}{C} *o, {G}const {C} *x, {G}{A} *tot,
                            long xoff, long M, long K, long mchunk, long kchunk, int nsplit,
                            int phase, {G}const long *L) {{
  long g = {GID};
  long nblocks = (M + mchunk - 1) / mchunk;
  if (g >= nblocks * nsplit) return;
  long mb = g / nsplit; int part = (int)(g - mb * nsplit);
  int nk = (int)L[0];
  {G}const long *ksh = L + 1, *kxs = L + 1 + nk, *kos = L + 1 + 2 * nk;
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

{KERNEL} void nzcount_{K}({G}long *cnt, {G}const {C} *x, long xoff, long n,
                          long chunk, {G}const long *L) {{
  long g = {GID};
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

{KERNEL} void nzwrite_{K}({G}long *out, {G}const long *start,
                          {G}const {C} *x, long xoff, long n, long chunk, long total,
                          {G}const long *L) {{
  long g = {GID};
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


def source(t: CType, d: Dialect = OPENCL_C) -> str:
    """cumsum/cumprod (``scan_<op>_<key>``) and nonzero (``nzcount_<key>``,
    ``nzwrite_<key>``) kernels of ``t``."""
    parts = [d.prelude, helpers(t, d)]
    load = d.load_half("xb + k * xs", "x") if t.half else "x[xb + k * xs]"
    loadn = d.load_half("off", "x") if t.half else "x[off]"
    nz = "(v.x != 0 || v.y != 0)" if t.kind == "c" else "(v != 0)"
    for op in ("sum", "prod"):
        if t.kind == "c":
            init = d.vec(t.comp, "0", "0") if op == "sum" else d.vec(t.comp, "1", "0")
        else:
            init = f"({t.comp})({0 if op == 'sum' else 1})"
        store = d.store_half("acc", "ob + k * os", "o") if t.half else "o[ob + k * os] = acc;"
        src = _SCAN.format(KERNEL=d.kernel, G=d.glob, GID=d.gid, OP=op, K=t.key, C=d.ty(t.c), A=t.comp, INIT=init, LOAD=load,
                           STEP=_step(op, t), STORE=store, LOADN=loadn, NZ=nz)
        if op == "prod":  # the nonzero kernels are emitted once
            src = src[:src.index(f"{d.kernel} void nzcount")]
        parts.append(src)
    return "\n".join(parts)
