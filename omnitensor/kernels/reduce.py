"""Axis reduction kernels (sum, prod, max, min, any, all over any set of axes), any dialect.

The input is viewed as M outputs x K reduced elements with arbitrary strides (kept and
reduced axes are each coalesced; reduced axes are ordered smallest stride innermost). Two
generic kernels per (op, dtype):

* ``red_*`` ("inner"): a work-item reduces whole rows of K for a block of outputs, walking
  the reduced elements row by row; a unit-stride run of floats is read 8 wide into vector
  accumulators (PoCL does not reassociate float sums itself) in blocks whose sums are
  Kahan-added to the total, so float32 sums stay accurate for millions of elements;
* ``redo_*`` ("outer"): when the innermost kept axis is contiguous and every reduced axis
  is strided (``x.sum(0)`` of a row-major matrix), a work-item owns 32 adjacent outputs and
  streams the reduced rows through them, so memory is read in order.

When there are few outputs and many elements (a full reduction), K is split into parts
reduced in parallel into a partial array, which is then reduced again. float16 accumulates
in float32. NaN propagates through max/min; argmax/argmin return the first extreme, a NaN
counting as the extreme (torch).
"""
from __future__ import annotations

import numpy as np

from .ctype import BY_NP, CType
from .dialect import OPENCL_C, Dialect
from .helpers import helpers

#: outputs per work-item of the outer kernel
BLOCK = 32

_LIMITS = {"i8": (-128, 127), "i16": (-32768, 32767), "i32": (-2147483648, 2147483647),
           "i64": ("(-9223372036854775807L - 1)", "9223372036854775807L"),
           "u8": (0, 255), "u16": (0, 65535), "u32": ("0u", "4294967295u"),
           "u64": ("0ul", "18446744073709551615ul"), "b1": (0, 1)}


def _acc_type(op: str, t: CType) -> str:
    return "uchar" if op in ("any", "all") else t.comp


def _init(op: str, t: CType, d: Dialect = OPENCL_C) -> str:
    a = _acc_type(op, t)
    if op in ("any", "sum"):
        return f"({a})0" if t.kind != "c" or op == "any" else d.vec(a, "0", "0")
    if op in ("all", "prod"):
        return f"({a})1" if t.kind != "c" or op == "all" else d.vec(a, "1", "0")
    if t.kind == "f":
        return f"({a})(-INFINITY)" if op == "max" else f"({a})INFINITY"
    lo, hi = _LIMITS[t.key]
    return f"({a})({lo})" if op == "max" else f"({a})({hi})"


def _comb(op: str, t: CType, a: str, b: str) -> str:
    """Scalar combine of accumulator ``a`` with value ``b``."""
    if op == "any":
        return f"({a} | ({b} != 0))"
    if op == "all":
        return f"({a} & ({b} != 0))"
    k = t.kind
    if op == "sum":
        return f"({t.comp})(({t.wide}){a} + ({t.wide}){b})" if k in "iub" else f"({a} + {b})"
    if op == "prod":
        if k in "iub":
            return f"({t.comp})(({t.wide}){a} * ({t.wide}){b})"
        return f"{t.key}_mul({a}, {b})" if k == "c" else f"({a} * {b})"
    cmp = ">" if op == "max" else "<"
    if k == "f":
        return f"((({b} != {b}) || {b} {cmp} {a}) ? {b} : {a})"
    return f"(({b} {cmp} {a}) ? {b} : {a})"


def _vec_ok(op: str, t: CType, d: Dialect) -> bool:
    """Whether the 8-wide vector path is rendered (OpenCL's vector types: PoCL does not
    vectorise float reductions itself)."""
    return d.vectors and t.kind == "f" and op in ("sum", "prod", "max", "min")


def _vcomb(op: str, v: str, a: str, b: str) -> str:
    if op == "sum":
        return f"({a} + {b})"
    if op == "prod":
        return f"({a} * {b})"
    cmp = ">" if op == "max" else "<"
    return f"((({b} != {b}) | ({b} {cmp} {a})) ? {b} : {a})"


_RED = """
{KERNEL} void {NAME}({G}{OC} *o, {G}const {IC} *x, long xoff, long M, long K,
                     long mchunk, long kchunk, int nsplit, {G}const long *L) {{
  long g = {GID};
  long nblocks = (M + mchunk - 1) / mchunk;
  if (g >= nblocks * nsplit) return;
  long mb = g / nsplit; int part = (int)(g - mb * nsplit);
  int nk = (int)L[0];
  {G}const long *ksh = L + 1, *kst = L + 1 + nk;
  int nr = (int)L[1 + 2 * nk];
  {G}const long *rsh = L + 2 + 2 * nk, *rst = L + 2 + 2 * nk + nr;
  long r0 = rsh[0], rs0 = rst[0];
  long k0 = part * kchunk, k1 = min(K, k0 + kchunk);
  long m1 = min(M, (mb + 1) * mchunk);
  for (long m = mb * mchunk; m < m1; m++) {{
    long base = xoff, rem = m;
    for (int d = 0; d < nk; d++) {{ long c = rem % ksh[d]; rem /= ksh[d]; base += c * kst[d]; }}
    {A} total = {INIT};
    {KAHAN_DECL}
    long i = k0;
    while (i < k1) {{
      long row = i / r0, col = i - row * r0, off = base + col * rs0, r = row;
      for (int d = 1; d < nr; d++) {{ long c = r % rsh[d]; r /= rsh[d]; off += c * rst[d]; }}
      long cnt = r0 - col < k1 - i ? r0 - col : k1 - i;
      long j = 0;
      {VECTOR}
      while (j < cnt) {{  /* blocks of <= 256 terms, each added to the total (Kahan) */
        long je = cnt - j < 256 ? cnt : j + 256;
        {A} acc = {INIT};
        for (; j < je; j++) {{ {A} v = {LOAD_S}; acc = {COMB}; }}
        {ADD_TOTAL}
      }}
      i += cnt;
    }}
    {STORE}
  }}
}}

{KERNEL} void {ONAME}({G}{OC} *o, {G}const {IC} *x, long xoff, long Mo, long Mi,
                      long K, long kchunk, int nsplit, {G}const long *L) {{
  long g = {GID};
  long nblk = (Mi + {B} - 1) / {B};
  if (g >= Mo * nblk * nsplit) return;
  int part = (int)(g % nsplit); long rest = g / nsplit;
  long blk = rest % nblk, mo = rest / nblk;
  int nk = (int)L[0];
  {G}const long *ksh = L + 1, *kst = L + 1 + nk;
  int nr = (int)L[1 + 2 * nk];
  {G}const long *rsh = L + 2 + 2 * nk, *rst = L + 2 + 2 * nk + nr;
  long base = xoff + blk * {B}, rem = mo;
  for (int d = 0; d < nk; d++) {{ long c = rem % ksh[d]; rem /= ksh[d]; base += c * kst[d]; }}
  long nb = min((long){B}, Mi - blk * {B});
  {A} acc[{B}];
  {OKAHAN_DECL}
  for (int j = 0; j < {B}; j++) acc[j] = {INIT};
  long k0 = part * kchunk, k1 = min(K, (part + 1) * kchunk);
  for (long k = k0; k < k1; k++) {{
    long off = base, r = k;
    for (int d = 0; d < nr; d++) {{ long c = r % rsh[d]; r /= rsh[d]; off += c * rst[d]; }}
    if (nb == {B}) {{
      for (int j = 0; j < {B}; j++) {{ {A} v = {LOAD_O_FULL}; acc[j] = {COMB_J}; }}
    }} else {{
      for (int j = 0; j < nb; j++) {{ {A} v = {LOAD_O_FULL}; acc[j] = {COMB_J}; }}
    }}
    {OKAHAN_FLUSH}
  }}
  {OKAHAN_END}
  long ob = (mo * nsplit + part) * Mi + blk * {B};
  for (int j = 0; j < nb; j++) {{ {STORE_O} }}
}}
"""

_VECTOR = """
      if (rs0 == 1 && cnt >= 32) {{
        /* 8-wide loads into four independent accumulators (no add-latency chain), blocks
           of 1024 combined into a vector total (Kahan for sums), lanes folded at the end */
        {G}const {IC} *p = x + off;
        {VA} outer = ({VA})({INIT}); {VKAHAN_DECL}
        long jv = cnt & ~(long)31;
        while (j < jv) {{
          long je = jv - j < 1024 ? jv : j + 1024;
          {VA} b0 = ({VA})({INIT}), b1 = b0, b2 = b0, b3 = b0;
          for (; j < je; j += 32) {{
            {VA} v = {VLOAD0}; b0 = {VCOMB0}; v = {VLOAD1}; b1 = {VCOMB1};
            v = {VLOAD2}; b2 = {VCOMB2}; v = {VLOAD3}; b3 = {VCOMB3};
          }}
          {VA} blk = {VCOMB01}; {VA} blk2 = {VCOMB23}; blk = {VCOMBB};
          {VADD}
        }}
        {A} acc = {INIT};
        {LANES}
        {ADD_TOTAL}
      }}
"""


def _source(op: str, t: CType, out: CType, acc_in: bool, d: Dialect = OPENCL_C) -> str:
    """Inner and outer kernels of ``op`` reading ``t`` (or its accumulator type when
    ``acc_in``: a second pass over partials) and writing ``out``'s storage type."""
    a = _acc_type(op, t)
    ic = a if acc_in else d.ty(t.c)
    half_in = t.half and not acc_in

    def load(idx: str) -> str:
        if t.kind == "c" and op in ("any", "all"):  # a complex is true when a part is
            return f"(uchar)(x[{idx}].x != 0 || x[{idx}].y != 0)"
        return d.load_half(idx, "x") if half_in else f"x[{idx}]"

    kname = name(op, t, out, acc_in)
    kahan = op == "sum" and t.kind in "fc"
    if kahan:
        kdecl = f"{a} kc = {d.splat(a, '0')};"
        add_total = "{ " + f"{a} y = acc - kc; {a} s = total + y; kc = (s - total) - y; total = s;" + " }"
    else:
        kdecl = ""
        add_total = f"total = {_comb(op, t, 'total', 'acc')};"
    vector = ""
    if _vec_ok(op, t, d):
        va = f"{a}8"

        def vload(q: int) -> str:  # PoCL would call vload8: dereference an align-4 type
            if half_in:
                return f"vload_half8(0, p + j + {8 * q})"
            return f"*({d.glob}const u{va} *)(p + j + {8 * q})"
        vadd = ("{ " + va + " y = blk - vc; " + va + " s = outer + y; vc = (s - outer) - y; "
                "outer = s; }") if kahan else f"outer = {_vcomb(op, va, 'outer', 'blk')};"
        vector = _VECTOR.format(
            G=d.glob, IC=ic, VA=va, INIT=_init(op, t, d), VADD=vadd, A=a, ADD_TOTAL=add_total,
            VKAHAN_DECL=f"{va} vc = ({va})(0);" if kahan else "",
            **{f"VLOAD{q}": vload(q) for q in range(4)},
            **{f"VCOMB{q}": _vcomb(op, va, f"b{q}", "v") for q in range(4)},
            VCOMB01=_vcomb(op, va, "b0", "b1"), VCOMB23=_vcomb(op, va, "b2", "b3"),
            VCOMBB=_vcomb(op, va, "blk", "blk2"),
            LANES=" ".join(f"acc = {_comb(op, t, 'acc', f'outer.s{lane}')};" for lane in range(8)))
    if out.half:
        store = d.store_half("total", "m * nsplit + part", "o")
        store_o = d.store_half("acc[j]", "ob + j", "o")
    else:
        oc = d.ty(out.c)
        store, store_o = f"o[m * nsplit + part] = ({oc})total;", f"o[ob + j] = ({oc})acc[j];"
    if kahan:  # rows are summed in blocks of 64 whose sums are Kahan-added per column
        z = d.splat(a, "0")
        okdecl = f"{a} tot[{BLOCK}], cmp[{BLOCK}]; " \
                 f"for (int j = 0; j < {BLOCK}; j++) {{ tot[j] = {z}; cmp[j] = {z}; }}"
        flush = ("for (int j = 0; j < {B}; j++) { {A} y = acc[j] - cmp[j]; {A} s = tot[j] + y; "
                 "cmp[j] = (s - tot[j]) - y; tot[j] = s; acc[j] = {Z}; }"
                 ).replace("{B}", str(BLOCK)).replace("{A}", a).replace("{Z}", z)
        okflush = "if (((k - k0) & 63) == 63) { " + flush + " }"
        okend = flush + f" for (int j = 0; j < {BLOCK}; j++) acc[j] = tot[j];"
    else:
        okdecl = okflush = okend = ""
    return _RED.format(
        KERNEL=d.kernel, G=d.glob, GID=d.gid, OKAHAN_DECL=okdecl, OKAHAN_FLUSH=okflush, OKAHAN_END=okend,
        NAME=kname, ONAME="o" + kname, OC=d.ty(out.c), IC=ic, A=a, INIT=_init(op, t, d),
        KAHAN_DECL=kdecl, VECTOR=vector, LOAD_S=load("off + j * rs0"),
        COMB=_comb(op, t, "acc", "v"), ADD_TOTAL=add_total, STORE=store, B=BLOCK,
        LOAD_O_FULL=load("off + j"), COMB_J=_comb(op, t, "acc[j]", "v"), STORE_O=store_o)


def name(op: str, t: CType, out: CType, acc_in: bool) -> str:
    """The inner kernel's name (the outer one is ``"o" + name``)."""
    return f"red_{op}_{t.key}_{'a' if acc_in else 'x'}_{out.key}"


_BOOL = BY_NP[np.dtype(np.bool_)]


def program(op: str, t: CType, d: Dialect = OPENCL_C) -> str:
    """Every kernel reducing ``t`` with ``op``: into ``t`` (bool for any/all), and for
    float16 the float32 partials and their float -> half final pass."""
    acc = BY_NP[np.dtype(np.float32)] if t.half else t
    if op in ("any", "all"):
        return "\n".join([d.prelude, _source(op, t, _BOOL, False, d)])
    utypes = _UTYPES.format(T=t.comp, A=t.itemsize if not t.half else 4) \
        if t.kind == "f" and d.vectors else ""
    parts = [d.prelude, helpers(t, d), utypes, _source(op, t, t, False, d)]
    if t.half:  # partials in float, then a float -> half final pass
        parts += [_source(op, t, acc, False, d), _source(op, t, t, True, d)]
    return "\n".join(parts)


#: the reductions generated here
OPS = ("sum", "prod", "max", "min", "any", "all")
_UTYPES = "typedef {T}8 __attribute__((aligned({A}))) u{T}8;"
