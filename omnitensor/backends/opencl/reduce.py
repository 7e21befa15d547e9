"""Axis reductions (sum, prod, max, min, any, all over any set of axes) and argmax/argmin.

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

from typing import Any

import numpy as np

from ...errors import UnsupportedDTypeError
from . import program_cache
from .array import CLArray, c_strides, new
from .clsrc import PRELUDE
from .cltypes import BY_NP, CType, pack_i32, pack_i64
from .elementwise import copy, fill
from .launch import run_items, set_bytes, set_mem


def _np(t: CType) -> np.dtype:
    """The NumPy dtype of a value type (only bit containers have none, and none reduces)."""
    assert t.np is not None
    return t.np


_BLOCK = 32  # outputs per work-item of the outer kernel

_LIMITS = {"i8": (-128, 127), "i16": (-32768, 32767), "i32": (-2147483648, 2147483647),
           "i64": ("(-9223372036854775807L - 1)", "9223372036854775807L"),
           "u8": (0, 255), "u16": (0, 65535), "u32": ("0u", "4294967295u"),
           "u64": ("0ul", "18446744073709551615ul"), "b1": (0, 1)}


def _acc_type(op: str, t: CType) -> str:
    return "uchar" if op in ("any", "all") else t.comp


def _init(op: str, t: CType) -> str:
    a = _acc_type(op, t)
    if op in ("any", "sum"):
        return f"({a})0" if t.kind != "c" or op == "any" else f"({a})(0, 0)"
    if op in ("all", "prod"):
        return f"({a})1" if t.kind != "c" or op == "all" else f"({a})(1, 0)"
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


def _vec_ok(op: str, t: CType) -> bool:
    return t.kind == "f" and op in ("sum", "prod", "max", "min")


def _vcomb(op: str, v: str, a: str, b: str) -> str:
    if op == "sum":
        return f"({a} + {b})"
    if op == "prod":
        return f"({a} * {b})"
    cmp = ">" if op == "max" else "<"
    return f"((({b} != {b}) | ({b} {cmp} {a})) ? {b} : {a})"


_RED = """
__kernel void {NAME}(__global {OC} *o, __global const {IC} *x, long xoff, long M, long K,
                     long mchunk, long kchunk, int nsplit, __global const long *L) {{
  long g = get_global_id(0);
  long nblocks = (M + mchunk - 1) / mchunk;
  if (g >= nblocks * nsplit) return;
  long mb = g / nsplit; int part = (int)(g - mb * nsplit);
  int nk = (int)L[0];
  __global const long *ksh = L + 1, *kst = L + 1 + nk;
  int nr = (int)L[1 + 2 * nk];
  __global const long *rsh = L + 2 + 2 * nk, *rst = L + 2 + 2 * nk + nr;
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

__kernel void {ONAME}(__global {OC} *o, __global const {IC} *x, long xoff, long Mo, long Mi,
                      long K, long kchunk, int nsplit, __global const long *L) {{
  long g = get_global_id(0);
  long nblk = (Mi + {B} - 1) / {B};
  if (g >= Mo * nblk * nsplit) return;
  int part = (int)(g % nsplit); long rest = g / nsplit;
  long blk = rest % nblk, mo = rest / nblk;
  int nk = (int)L[0];
  __global const long *ksh = L + 1, *kst = L + 1 + nk;
  int nr = (int)L[1 + 2 * nk];
  __global const long *rsh = L + 2 + 2 * nk, *rst = L + 2 + 2 * nk + nr;
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
        __global const {IC} *p = x + off;
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


def _source(op: str, t: CType, out: CType, acc_in: bool) -> str:
    """Inner and outer kernels of ``op`` reading ``t`` (or its accumulator type when
    ``acc_in``: a second pass over partials) and writing ``out``'s storage type."""
    a = _acc_type(op, t)
    ic = a if acc_in else t.c
    half_in = t.half and not acc_in

    def load(idx: str) -> str:
        return f"vload_half({idx}, x)" if half_in else f"x[{idx}]"

    name = _name(op, t, out, acc_in)
    kahan = op == "sum" and t.kind in "fc"
    if kahan:
        kdecl = f"{a} kc = ({a})(0);"
        add_total = "{ " + f"{a} y = acc - kc; {a} s = total + y; kc = (s - total) - y; total = s;" + " }"
    else:
        kdecl = ""
        add_total = f"total = {_comb(op, t, 'total', 'acc')};"
    vector = ""
    if _vec_ok(op, t):
        va = f"{a}8"

        def vload(q: int) -> str:  # PoCL would call vload8: dereference an align-4 type
            if half_in:
                return f"vload_half8(0, p + j + {8 * q})"
            return f"*(__global const u{va} *)(p + j + {8 * q})"
        vadd = ("{ " + va + " y = blk - vc; " + va + " s = outer + y; vc = (s - outer) - y; "
                "outer = s; }") if kahan else f"outer = {_vcomb(op, va, 'outer', 'blk')};"
        vector = _VECTOR.format(
            IC=ic, VA=va, INIT=_init(op, t), VADD=vadd, A=a, ADD_TOTAL=add_total,
            VKAHAN_DECL=f"{va} vc = ({va})(0);" if kahan else "",
            **{f"VLOAD{q}": vload(q) for q in range(4)},
            **{f"VCOMB{q}": _vcomb(op, va, f"b{q}", "v") for q in range(4)},
            VCOMB01=_vcomb(op, va, "b0", "b1"), VCOMB23=_vcomb(op, va, "b2", "b3"),
            VCOMBB=_vcomb(op, va, "blk", "blk2"),
            LANES=" ".join(f"acc = {_comb(op, t, 'acc', f'outer.s{lane}')};" for lane in range(8)))
    if out.half:
        store, store_o = "vstore_half_rte(total, m * nsplit + part, o);", \
            "vstore_half_rte(acc[j], ob + j, o);"
    else:
        store, store_o = f"o[m * nsplit + part] = ({out.c})total;", f"o[ob + j] = ({out.c})acc[j];"
    if kahan:  # rows are summed in blocks of 64 whose sums are Kahan-added per column
        okdecl = f"{a} tot[{_BLOCK}], cmp[{_BLOCK}]; " \
                 f"for (int j = 0; j < {_BLOCK}; j++) {{ tot[j] = ({a})(0); cmp[j] = ({a})(0); }}"
        flush = ("for (int j = 0; j < {B}; j++) { {A} y = acc[j] - cmp[j]; {A} s = tot[j] + y; "
                 "cmp[j] = (s - tot[j]) - y; tot[j] = s; acc[j] = ({A})(0); }"
                 ).replace("{B}", str(_BLOCK)).replace("{A}", a)
        okflush = "if (((k - k0) & 63) == 63) { " + flush + " }"
        okend = flush + f" for (int j = 0; j < {_BLOCK}; j++) acc[j] = tot[j];"
    else:
        okdecl = okflush = okend = ""
    return _RED.format(
        OKAHAN_DECL=okdecl, OKAHAN_FLUSH=okflush, OKAHAN_END=okend,
        NAME=name, ONAME="o" + name, OC=out.c, IC=ic, A=a, INIT=_init(op, t),
        KAHAN_DECL=kdecl, VECTOR=vector, LOAD_S=load("off + j * rs0"),
        COMB=_comb(op, t, "acc", "v"), ADD_TOTAL=add_total, STORE=store, B=_BLOCK,
        LOAD_O_FULL=load("off + j"), COMB_J=_comb(op, t, "acc[j]", "v"), STORE_O=store_o)


def _name(op: str, t: CType, out: CType, acc_in: bool) -> str:
    return f"red_{op}_{t.key}_{'a' if acc_in else 'x'}_{out.key}"


_BOOL = BY_NP[np.dtype(np.bool_)]


def _program(op: str, t: CType) -> str:
    from .clsrc import helpers
    acc = BY_NP[np.dtype(np.float32)] if t.half else t
    if op in ("any", "all"):
        return "\n".join([PRELUDE, _source(op, t, _BOOL, False)])
    parts = [PRELUDE, helpers(t), _UTYPES.format(T=t.comp, A=t.itemsize if not t.half else 4)
             if t.kind == "f" else "", _source(op, t, t, False)]
    if t.half:  # partials in float, then a float -> half final pass
        parts += [_source(op, t, acc, False), _source(op, t, t, True)]
    return "\n".join(parts)


_OPS = ("sum", "prod", "max", "min", "any", "all")
_UTYPES = "typedef {T}8 __attribute__((aligned({A}))) u{T}8;"


def _kernel(st: Any, op: str, t: CType, out: CType, acc_in: bool, outer: bool) -> Any:
    name = _name(op, t, out, acc_in)
    return program_cache.kernel(st, ("red", op, t.key), ("o" if outer else "") + name,
                                lambda: _program(op, t), st.build_options)


# ------------------------------------------------------------------------- driver
def _layout(shape: tuple, strides: tuple, axes: tuple) -> tuple:
    """(kept dims, kept strides, reduced dims, reduced strides): innermost first, coalesced."""
    kept = [(shape[d], strides[d]) for d in range(len(shape)) if d not in axes and shape[d] != 1]
    red = [(shape[d], strides[d]) for d in axes if shape[d] != 1]
    red.sort(key=lambda p: -abs(p[1]))  # smallest stride innermost

    def merge(dims: list) -> tuple[list, list]:
        out_n: list[int] = []
        out_s: list[int] = []
        for n, s in reversed(dims):  # innermost first
            if out_n and s == out_s[-1] * out_n[-1]:
                out_n[-1] *= n
            else:
                out_n.append(n)
                out_s.append(s)
        return out_n, out_s

    kn, ks = merge(kept)
    rn, rs = merge(red)
    return kn, ks, rn or [1], rs or [1]


def _plan(st: Any, M: int, K: int) -> tuple[int, int, int]:
    """(mchunk, nsplit, kchunk) for the inner kernel."""
    if not st.is_cpu:
        nsplit = max(1, min(K // 2048, 2048 // max(M, 1))) if M < 2048 else 1
        return 1, nsplit, -(-K // nsplit)
    par = 4 * st.compute_units
    if M * K <= 32768:
        return M, 1, K
    if M >= par:
        return max(1, -(-M // (4 * par))), 1, K
    nsplit = max(1, min(-(-2 * par // M), K // 4096))
    return 1, nsplit, -(-K // nsplit)


def _launch(st: Any, k: Any, args_mem: tuple, args_bytes: tuple, n: int) -> None:
    set_mem(k, args_mem)
    set_bytes(k, args_bytes)
    run_items(st, k, n)


def reduce(op: str, x: CLArray, axes: tuple, keepdims: bool, out_dtype: Any = None) -> CLArray:
    """``op`` of x over ``axes`` (sorted, unique, non-empty)."""
    st = x.state
    t = BY_NP.get(x.dtype)
    if t is None or (t.kind == "c" and op in ("max", "min")):
        raise UnsupportedDTypeError(f"{op}: the OpenCL backend does not reduce {x.dtype}")
    odt = np.dtype(np.bool_) if op in ("any", "all") else x.dtype
    axes = tuple(axes)
    kshape = tuple(1 if d in axes else n for d, n in enumerate(x.shape)) if keepdims else \
        tuple(n for d, n in enumerate(x.shape) if d not in axes)
    M = 1
    for d, n in enumerate(x.shape):
        if d not in axes:
            M *= n
    K = 1
    for d in axes:
        K *= x.shape[d]
    if M == 0:
        return new(st, kshape, odt)
    if K == 0:
        if op in ("max", "min"):
            raise ValueError(f"zero-size array to reduction operation {op} which has no "
                             f"identity")
        ident = {"sum": 0, "prod": 1, "any": False, "all": True}[op]
        return fill(new(st, kshape, odt), ident)
    kn, ks, rn, rs = _layout(x.shape, x.strides, axes)
    if len(kn) > 8 or len(rn) > 8:
        x = copy(x)
        kn, ks, rn, rs = _layout(x.shape, x.strides, axes)
    acc_t = BY_NP[np.dtype(np.float32)] if t.half else t
    tout = BY_NP[odt]
    outer = bool(kn) and ks[0] == 1 and kn[0] >= 8 and rs[0] != 1 and x.size > 4096
    if outer:
        Mi, Mo = kn[0], M // kn[0]
        okn, oks = kn[1:], ks[1:]
        nblk = -(-Mi // _BLOCK)
        nsplit = 1
        if st.is_cpu and Mo * nblk < 4 * st.compute_units and K >= 4096:
            nsplit = max(1, min(-(-8 * st.compute_units // (Mo * nblk)), K // 1024))
        kchunk = -(-K // nsplit)
        final = nsplit == 1
        ot = tout if final else (acc_t if op not in ("any", "all") else tout)
        res = new(st, (Mo, nsplit, Mi), _np(ot))
        lay = st.layout((len(okn), *okn, *oks, len(rn), *rn, *rs))
        k = _kernel(st, op, t, ot, False, True)
        _launch(st, k, (0, res.data, 1, x.data, 8, lay),
                (2, pack_i64(x.offset), 3, pack_i64(Mo), 4, pack_i64(Mi), 5, pack_i64(K),
                 6, pack_i64(kchunk), 7, pack_i32(nsplit)), Mo * nblk * nsplit)
        if not final:
            res = _second_pass(op, res, t, tout)
        return _shaped(res, kshape)
    mchunk, nsplit, kchunk = _plan(st, M, K)
    final = nsplit == 1
    ot = tout if final else (acc_t if op not in ("any", "all") else tout)
    res = new(st, (M, nsplit), _np(ot))
    lay = st.layout((len(kn), *kn, *ks, len(rn), *rn, *rs))
    k = _kernel(st, op, t, ot, False, False)
    nblocks = -(-M // mchunk)
    _launch(st, k, (0, res.data, 1, x.data, 8, lay),
            (2, pack_i64(x.offset), 3, pack_i64(M), 4, pack_i64(K), 5, pack_i64(mchunk),
             6, pack_i64(kchunk), 7, pack_i32(nsplit)), nblocks * nsplit)
    if not final:
        res = _second_pass(op, res, t, tout)
    return _shaped(res, kshape)


def _second_pass(op: str, part: CLArray, t: CType, tout: CType) -> CLArray:
    """Reduce the partials' split axis (axis 1 of (M, nsplit[, Mi]))."""
    st = part.state
    if part.dtype == tout.np:
        return reduce(op, part, (1,), False)
    # float16: float partials -> half result
    M, ns = part.shape[0], part.shape[1]
    Mi = part.shape[2] if part.ndim == 3 else 1
    res = new(st, (M, Mi), _np(tout))
    lay = st.layout((2, Mi, M, 1, ns * Mi, 1, ns, Mi)) if Mi > 1 else \
        st.layout((1, M, ns, 1, ns, 1))
    k = _kernel(st, op, t, t, True, False)
    _launch(st, k, (0, res.data, 1, part.data, 8, lay),
            (2, pack_i64(0), 3, pack_i64(M * Mi), 4, pack_i64(ns), 5, pack_i64(M * Mi),
             6, pack_i64(ns), 7, pack_i32(1)), 1)
    return res


def _shaped(res: CLArray, shape: tuple) -> CLArray:
    return CLArray(res.data, shape, c_strides(shape), 0, res.dtype, res.state, True)


