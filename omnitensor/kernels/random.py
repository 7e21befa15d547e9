"""Counter-based random bits and ``arange`` fills.

``philox``: the Philox-4x32-10 stream of ``backends/philox.py``, bit for bit. Word ``i`` of
the output is word ``i % 4`` of the Philox block for the 64-bit counter ``counter + i // 4``
(low word first, upper two counter words 0) under the 2-word key; the rounds are the same
multiply-hi/xor rounds with the same key schedule, so every backend returns identical bits
for the same (key, counter). The round constants are passed in (``philox_source``), so this
package needs nothing from the backends.

``arange_<key>``: ``o[i] = start + i * step`` per dtype (integers in 64-bit arithmetic,
floats as ``i * step + start`` in the compute type, complex per component).
"""
from __future__ import annotations

from typing import Iterable

from .ctype import CType
from .dialect import OPENCL_C, Dialect

_PHILOX = """
{KERNEL} void philox({G}uint *o, long n, long chunk, uint k0, uint k1, ulong counter) {{
  long g = {GID};
  long nb = (n + 3) / 4, b0 = g * chunk, b1 = min(nb, b0 + chunk);
  for (long b = b0; b < b1; b++) {{
    ulong ctr = counter + (ulong)b;
    uint c0 = (uint)ctr, c1 = (uint)(ctr >> 32), c2 = 0, c3 = 0, a = k0, z = k1;
    for (int r = 0; r < {ROUNDS}; r++) {{
      uint hi0 = {MULHI}({M0}u, c0), lo0 = {M0}u * c0;
      uint hi1 = {MULHI}({M1}u, c2), lo1 = {M1}u * c2;
      c0 = hi1 ^ c1 ^ a; c1 = lo1; c2 = hi0 ^ c3 ^ z; c3 = lo0;
      a += {W0}u; z += {W1}u;
    }}
    long i = 4 * b;
    if (i + 3 < n) {{ o[i] = c0; o[i + 1] = c1; o[i + 2] = c2; o[i + 3] = c3; }}
    else {{
      if (i < n) o[i] = c0;
      if (i + 1 < n) o[i + 1] = c1;
      if (i + 2 < n) o[i + 2] = c2;
    }}
  }}
}}
"""


def philox_source(m0: int, m1: int, w0: int, w1: int, rounds: int,
                  d: Dialect = OPENCL_C) -> str:
    """The ``philox`` kernel with multipliers ``m0, m1``, Weyl increments ``w0, w1``."""
    return _PHILOX.format(KERNEL=d.kernel, G=d.glob, GID=d.gid, MULHI=d.fn("mul_hi"),
                          M0=m0, M1=m1, W0=w0, W1=w1, ROUNDS=rounds)


_ARANGE = """
{KERNEL} void arange_{K}({G}{C} *o, long n, {S} start, {S} step) {{
  long i = {GID};
  if (i >= n) return;
  {BODY}
}}
"""


def arange_source(dtypes: Iterable[CType], d: Dialect = OPENCL_C) -> str:
    """``arange_<key>`` for each of ``dtypes`` (arguments: out, n, start, step; start and
    step are long/ulong for integers, the compute type for floats, the complex type)."""
    parts = [d.prelude]
    for t in dtypes:
        c = d.ty(t.c)
        if t.kind in "iub":
            body = f"o[i] = ({c})(start + step * i);"
            s = "long" if t.kind != "u" else "ulong"
        elif t.kind == "f":
            body = t.store("o", "i", f"({t.comp})i * step + start", d)
            s = t.comp
        else:
            lit = d.vec(c, f"({t.real})i * step.x + start.x", f"({t.real})i * step.y + start.y")
            body = f"o[i] = {lit};"
            s = c
        parts.append(_ARANGE.format(K=t.key, C=c, S=s, BODY=body, KERNEL=d.kernel, G=d.glob,
                                    GID=d.gid))
    return "\n".join(parts)
