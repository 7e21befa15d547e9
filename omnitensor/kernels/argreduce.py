"""argmax / argmin kernels along one axis (or the flattened array): first occurrence wins, a NaN
counts as the extreme (torch), so the first NaN is the answer when there is one.

One kernel per (op, dtype) reads either the input (value ``x[base + k*stride]``, index k)
or the (value, index) partials of a split first pass; parts are combined in order with a
strict comparison, which keeps "first occurrence" across parts.
"""
from __future__ import annotations

from .ctype import CType
from .dialect import OPENCL_C, Dialect

_ARG = """
{KERNEL} void {NAME}({G}long *oi, {G}{A} *ov, {G}const {IC} *x,
                     {G}const long *xi, long xoff, long M, long K, long kstride,
                     long mchunk, long kchunk, int nsplit, int partials,
                     {G}const long *L) {{
  long g = {GID};
  long nblocks = (M + mchunk - 1) / mchunk;
  if (g >= nblocks * nsplit) return;
  long mb = g / nsplit; int part = (int)(g - mb * nsplit);
  int nk = (int)L[0];
  {G}const long *ksh = L + 1, *kst = L + 1 + nk;
  long k0 = part * kchunk, k1 = min(K, k0 + kchunk);
  if (k0 >= k1) return;
  long m1 = min(M, (mb + 1) * mchunk);
  for (long m = mb * mchunk; m < m1; m++) {{
    long base = xoff, rem = m;
    for (int d = 0; d < nk; d++) {{ long c = rem % ksh[d]; rem /= ksh[d]; base += c * kst[d]; }}
    {A} best = {LOAD0}; long bi = partials ? xi[base + k0 * kstride] : k0;
    for (long k = k0 + 1; k < k1; k++) {{
      {A} v = {LOADK};
      if ({BETTER}) {{ best = v; bi = partials ? xi[base + k * kstride] : k; }}
    }}
    oi[m * nsplit + part] = bi;
    if (nsplit > 1) ov[m * nsplit + part] = best;
  }}
}}
"""


def _better(op: str, t: CType) -> str:
    cmp = ">" if op == "argmax" else "<"
    if t.kind == "f":
        return f"!isnan(best) && (isnan(v) || v {cmp} best)"
    return f"v {cmp} best"


def source(op: str, t: CType, d: Dialect = OPENCL_C) -> str:
    """The argmax/argmin kernels of ``t``: ``<op>_<key>_x`` reads the input,
    ``<op>_<key>_p`` the (value, index) partials of a split first pass."""
    parts = [d.prelude]
    for partials in (False, True):
        ic = t.comp if partials else d.ty(t.c)
        half = t.half and not partials

        def load(idx: str, half: bool = half) -> str:  # called within this iteration
            return d.load_half(idx, "x") if half else f"x[{idx}]"
        parts.append(_ARG.format(
            KERNEL=d.kernel, G=d.glob, GID=d.gid,
            NAME=f"{op}_{t.key}_{'p' if partials else 'x'}", A=t.comp, IC=ic,
            LOAD0=load("base + k0 * kstride"), LOADK=load("base + k * kstride"),
            BETTER=_better(op, t)))
    return "\n".join(parts)
