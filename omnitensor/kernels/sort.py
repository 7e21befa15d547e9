"""Sorting kernels along an axis (stable merge sort of (key, index) pairs) and searchsorted.

The sorted axis is moved last and copied into contiguous rows. Pass 1: every work-item
insertion-sorts a run of 32 keys (and writes the identity permutation). Then bottom-up
merge passes double the run width, ping-ponging between two buffers; each work-item merges
one pair of runs. Merges take from the left run on ties, so the sort is stable in both
directions: descending order uses the reversed comparison, which keeps equal elements in
their original order (what the NumPy backend returns). NaN sorts as larger than every number
(last ascending, first descending). float16 keys are sorted as float32.
"""
from __future__ import annotations

from .ctype import CType
from .dialect import OPENCL_C, Dialect

#: keys insertion-sorted per work-item before the merge passes
RUN = 32

_SRC = """
{FN} int lt_{K}({T} a, {T} b) {{ return {LT}; }}
{FN} int before_{K}({T} a, {T} b, int desc) {{ return desc ? lt_{K}(b, a) : lt_{K}(a, b); }}

{KERNEL} void runsort_{K}({G}{T} *k, {G}long *ix, long K, long runs, long total,
                          int desc) {{
  long g = {GID};
  if (g >= total) return;
  long row = g / runs, lo = (g - row * runs) * {R}, hi = min(K, lo + {R});
  {G}{T} *p = k + row * K; {G}long *q = ix + row * K;
  for (long i = lo; i < hi; i++) q[i] = i;
  for (long i = lo + 1; i < hi; i++) {{
    {T} key = p[i]; long id = q[i]; long j = i - 1;
    while (j >= lo && before_{K}(key, p[j], desc)) {{ p[j + 1] = p[j]; q[j + 1] = q[j]; j--; }}
    p[j + 1] = key; q[j + 1] = id;
  }}
}}

{KERNEL} void merge_{K}({G}{T} *dk, {G}long *di, {G}const {T} *sk,
                        {G}const long *si, long K, long w, long pairs, long total,
                        int desc) {{
  long g = {GID};
  if (g >= total) return;
  long row = g / pairs, lo = (g - row * pairs) * 2 * w;
  long mid = min(K, lo + w), hi = min(K, lo + 2 * w);
  long b = row * K, i = lo, j = mid, o = lo;
  while (i < mid && j < hi) {{
    if (before_{K}(sk[b + j], sk[b + i], desc)) {{ dk[b + o] = sk[b + j]; di[b + o] = si[b + j]; j++; }}
    else {{ dk[b + o] = sk[b + i]; di[b + o] = si[b + i]; i++; }}
    o++;
  }}
  for (; i < mid; i++, o++) {{ dk[b + o] = sk[b + i]; di[b + o] = si[b + i]; }}
  for (; j < hi; j++, o++) {{ dk[b + o] = sk[b + j]; di[b + o] = si[b + j]; }}
}}

{KERNEL} void search_{K}({G}long *out, {G}const {T} *s, {G}const {T} *v,
                         long n, long V, long K, long batched, int right) {{
  long g = {GID};
  if (g >= n) return;
  {G}const {T} *row = s + (batched ? (g / V) * K : 0);
  {T} x = v[g];
  long lo = 0, hi = K;
  while (lo < hi) {{
    long m = lo + (hi - lo) / 2;
    int go_right = right ? !lt_{K}(x, row[m]) : lt_{K}(row[m], x);
    if (go_right) lo = m + 1; else hi = m;
  }}
  out[g] = lo;
}}
"""


def _lt(t: CType) -> str:
    if t.kind == "f":
        return "a < b || (isnan(b) && !isnan(a))"
    return "a < b"


def source(t: CType, d: Dialect = OPENCL_C) -> str:
    """Run sort, merge and searchsorted kernels of key type ``t``."""
    return d.prelude + _SRC.format(K=t.key, T=d.ty(t.c), LT=_lt(t), R=RUN, KERNEL=d.kernel,
                                   G=d.glob, GID=d.gid, FN=d.func)
