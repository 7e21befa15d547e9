"""Gather/scatter kernels with one index array per axis (``gather_nd``/``scatter_nd``).

Gathers and plain scatters only move bytes, so their kernels depend on the item size and
the number of index arrays. ``scatter_nd(accumulate=True)`` must sum duplicate indices: each
add is atomic (an atomic add for 32/64-bit integers, a compare-and-swap loop on the bits
for floats and complex parts, and a CAS on the containing 32-bit word for 8/16-bit types and
float16). A plain scatter with duplicate indices keeps one of the values (the last one in C
order within a work-item's chunk; which chunk wins is unspecified, as in torch).
"""
from __future__ import annotations

from typing import Iterable

from .ctype import BITS, CType
from .dialect import OPENCL_C, Dialect

_HEAD = """
{KERNEL} void {NAME}({G}{XT} *x, long xoff, {G}const {VT} *v, long voff,
                     {IDX_ARGS}, long n, long chunk, int flags, {G}const long *L) {{
  long g = {GID};
  long s = g * chunk, e = min(n, s + chunk);
  int nd = (int)L[0];
  {G}const long *sh = L + 1, *xs = L + 1 + nd, *vs = xs + {N};
  for (long i = s; i < e; i++) {{
    long r = i, vo = voff; {QDECL}
    for (int d = 0; d < nd; d++) {{
      long c = r % sh[d]; r /= sh[d]; vo += c * vs[d]; {QWALK}
    }}
    long off = xoff {OFFSUM};
    {BODY}
  }}
}}
"""


def _atomic(t: CType, d: Dialect) -> str | None:
    """The atomic ``*p += val`` statement of dtype ``t`` (None: a CAS on the 32-bit word)."""
    g = d.glob
    return {
        "i32": d.atomic_add(32, "int", "p", "val"),
        "u32": d.atomic_add(32, "uint", "p", "val"),
        "i64": d.atomic_add(64, "long", "p", "val"),
        "u64": d.atomic_add(64, "ulong", "p", "val"),
        "f32": "add_f32(p, val);",
        "f64": "add_f64(p, val);",
        "c64": f"add_f32(({g}float *)p, val.x); add_f32(({g}float *)p + 1, val.y);",
        "c128": f"add_f64(({g}double *)p, val.x); add_f64(({g}double *)p + 1, val.y);",
    }.get(t.key)


def _atomic_helpers(d: Dialect) -> str:
    """Float adds by compare-and-swap on their bits, and 8/16-bit adds by a CAS on the
    aligned 32-bit word containing them."""
    g, fn = d.glob, d.func
    f64 = (f"{fn} void add_f64({g}double *p, double v) {{\n"
           "  union { ulong u; double f; } o, m;\n"
           "  do { o.f = *p; m.f = o.f + v; }\n"
           f"  while ({d.atomic_cas(64, 'p', 'o.u', 'm.u')} != o.u);\n}}\n")
    half = (f"float f = {d.half_bits_to_float('hb')} + {d.half_bits_to_float('ab')};\n"
            f"    {d.float_to_half_bits('f', 'hb')} nv = hb;")
    return f"""
{fn} void add_f32({g}float *p, float v) {{
  union {{ uint u; float f; }} o, m;
  do {{ o.f = *p; m.f = o.f + v; }}
  while ({d.atomic_cas(32, 'p', 'o.u', 'm.u')} != o.u);
}}
{d.if_int64_atomics(f64)}// 8- and 16-bit values: compare-and-swap the aligned 32-bit word that contains them
{fn} uint word_sub(uint w, int sh, uint mask, uint add, int kind) {{
  uint cur = (w >> sh) & mask, nv;
  if (kind == 0) nv = cur + add;                       /* integer: wrapping add */
  else if (kind == 1) nv = cur | add;                  /* bool: logical or */
  else {{                                               /* half: add in float */
    ushort hb = (ushort)cur, ab = (ushort)add;
    {half}
  }}
  return (w & ~(mask << sh)) | ((nv & mask) << sh);
}}
{fn} void add_small({g}uchar *p, uint add, uint mask, int kind) {{
  {g}uint *w = ({g}uint *)((ulong)p & ~(ulong)3);
  int sh = (int)((ulong)p & 3) * 8;
  uint o;
  do {{ o = *w; }} while ({d.atomic_cas(32, 'w', 'o', 'word_sub(o, sh, mask, add, kind)')} != o);
}}
"""


def source(nidx: int, dtypes: Iterable[CType], int64_atomics: bool,
           d: Dialect = OPENCL_C) -> str:
    """gather/scatter kernels for every item size, and scatter_add for each of ``dtypes``,
    with ``nidx`` index arrays; without ``int64_atomics`` 64-bit scatter_adds are plain
    (the runtime then launches them on one work-item)."""
    g = d.glob
    idx_args = ", ".join(f"{g}const long *i{j}, long io{j}" for j in range(nidx))
    qdecl = " ".join(f"long q{j} = io{j};" for j in range(nidx))
    qwalk = " ".join(f"q{j} += c * vs[(1 + {j}) * nd + d];" for j in range(nidx))
    offsum = "".join(f" + i{j}[q{j}] * xs[{j}]" for j in range(nidx))
    parts = [d.prelude, _atomic_helpers(d)]

    def kern(name: str, xt: str, vt: str, body: str) -> str:
        return _HEAD.format(NAME=name, XT=xt, VT=vt, IDX_ARGS=idx_args, N=nidx, QDECL=qdecl,
                            QWALK=qwalk, OFFSUM=offsum, BODY=body, KERNEL=d.kernel, G=g,
                            GID=d.gid)
    for t in BITS.values():
        c = d.ty(t.c)
        # gather: x is the source, v the (contiguous) output
        parts.append(kern(f"gather_{t.key}_{nidx}", c, c, f"(({g}{c} *)v)[vo] = x[off];"))
        parts.append(kern(f"scatter_{t.key}_{nidx}", c, c, "x[off] = v[vo];"))
    for t in dtypes:
        c = d.ty(t.c)
        atomic = _atomic(t, d)
        if atomic is not None and (int64_atomics or t.itemsize < 8 or t.key == "c64"):
            body = f"{g}{c} *p = x + off; {c} val = v[vo]; " \
                   f"if (flags) {{ {atomic} }} else {{ *p = {_plain_add(t, d)}; }}"
        elif t.itemsize >= 4:  # no 64-bit atomics on this device: run serially
            body = f"{g}{c} *p = x + off; {c} val = v[vo]; *p = {_plain_add(t, d)};"
        else:
            kind = 1 if t.kind == "b" else (2 if t.half else 0)
            mask = "0xffu" if t.itemsize == 1 else "0xffffu"
            cast = "ushort" if t.half else ("uchar" if t.itemsize == 1 else "ushort")
            body = (f"{g}{c} *p = x + off; uint val = (uint)(({g}const {cast} *)(v + vo))[0]; "
                    f"if (flags) add_small(({g}uchar *)p, val, {mask}, {kind}); "
                    f"else add_small(({g}uchar *)p, val, {mask}, {kind});")
        parts.append(kern(f"scatter_add_{t.key}_{nidx}", c, c, body))
    return "\n".join(parts)


def _plain_add(t: CType, d: Dialect) -> str:
    if t.kind in "iu":
        return f"({d.ty(t.c)})(({t.wide})*p + ({t.wide})val)"
    if t.kind == "b":
        return "*p | val"
    return "*p + val"
