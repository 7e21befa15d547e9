"""Gather/scatter with one index array per axis (``gather_nd``/``scatter_nd``), concat, pad.

Gathers and plain scatters only move bytes, so their kernels depend on the item size and
the number of index arrays. ``scatter_nd(accumulate=True)`` must sum duplicate indices: each
add is atomic (``atomic_add`` for 32/64-bit integers, a compare-and-swap loop on the bits
for floats and complex parts, and a CAS on the containing 32-bit word for 8/16-bit types and
float16). A plain scatter with duplicate indices keeps one of the values (the last one in C
order within a work-item's chunk; which chunk wins is unspecified, as in torch).
"""
from __future__ import annotations

from typing import Any, Sequence

from . import program_cache
from .array import CLArray, new, view
from .clsrc import PRELUDE
from .cltypes import BITS, BY_NP, CType, pack_i32, pack_i64
from .elementwise import copy_into, fill
from .launch import run, set_bytes, set_mem

_HEAD = """
__kernel void {NAME}(__global {XT} *x, long xoff, __global const {VT} *v, long voff,
                     {IDX_ARGS}, long n, long chunk, int flags, __global const long *L) {{
  long g = get_global_id(0);
  long s = g * chunk, e = min(n, s + chunk);
  int nd = (int)L[0];
  __global const long *sh = L + 1, *xs = L + 1 + nd, *vs = xs + {N};
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

_ATOMIC = {
    "i32": "atomic_add((volatile __global int *)p, val);",
    "u32": "atomic_add((volatile __global uint *)p, val);",
    "i64": "atom_add((volatile __global long *)p, val);",
    "u64": "atom_add((volatile __global ulong *)p, val);",
    "f32": "add_f32(p, val);",
    "f64": "add_f64(p, val);",
    "c64": "add_f32((__global float *)p, val.x); add_f32((__global float *)p + 1, val.y);",
    "c128": "add_f64((__global double *)p, val.x); add_f64((__global double *)p + 1, val.y);",
}

_ATOMIC_HELPERS = """
inline void add_f32(__global float *p, float v) {
  union { uint u; float f; } o, m;
  do { o.f = *p; m.f = o.f + v; }
  while (atomic_cmpxchg((volatile __global uint *)p, o.u, m.u) != o.u);
}
#ifdef cl_khr_int64_extended_atomics
inline void add_f64(__global double *p, double v) {
  union { ulong u; double f; } o, m;
  do { o.f = *p; m.f = o.f + v; }
  while (atom_cmpxchg((volatile __global ulong *)p, o.u, m.u) != o.u);
}
#endif
// 8- and 16-bit values: compare-and-swap the aligned 32-bit word that contains them
inline uint word_sub(uint w, int sh, uint mask, uint add, int kind) {
  uint cur = (w >> sh) & mask, nv;
  if (kind == 0) nv = cur + add;                       /* integer: wrapping add */
  else if (kind == 1) nv = cur | add;                  /* bool: logical or */
  else {                                               /* half: add in float */
    ushort hb = (ushort)cur, ab = (ushort)add;
    float f = vload_half(0, (__private half *)&hb) + vload_half(0, (__private half *)&ab);
    vstore_half_rte(f, 0, (__private half *)&hb); nv = hb;
  }
  return (w & ~(mask << sh)) | ((nv & mask) << sh);
}
inline void add_small(__global uchar *p, uint add, uint mask, int kind) {
  __global uint *w = (__global uint *)((ulong)p & ~(ulong)3);
  int sh = (int)((ulong)p & 3) * 8;
  uint o;
  do { o = *w; } while (atomic_cmpxchg((volatile __global uint *)w, o,
                                       word_sub(o, sh, mask, add, kind)) != o);
}
"""


def _source(nidx: int, st: Any) -> str:
    """gather/scatter kernels for every item size, and scatter_add for every dtype, with
    ``nidx`` index arrays."""
    idx_args = ", ".join(f"__global const long *i{j}, long io{j}" for j in range(nidx))
    qdecl = " ".join(f"long q{j} = io{j};" for j in range(nidx))
    qwalk = " ".join(f"q{j} += c * vs[(1 + {j}) * nd + d];" for j in range(nidx))
    offsum = "".join(f" + i{j}[q{j}] * xs[{j}]" for j in range(nidx))
    parts = [PRELUDE, _ATOMIC_HELPERS]

    def kern(name: str, xt: str, vt: str, body: str) -> str:
        return _HEAD.format(NAME=name, XT=xt, VT=vt, IDX_ARGS=idx_args, N=nidx, QDECL=qdecl,
                            QWALK=qwalk, OFFSUM=offsum, BODY=body)
    for t in BITS.values():
        # gather: x is the source, v the (contiguous) output
        parts.append(kern(f"gather_{t.key}_{nidx}", t.c, t.c, "((__global "
                          f"{t.c} *)v)[vo] = x[off];"))
        parts.append(kern(f"scatter_{t.key}_{nidx}", t.c, t.c, "x[off] = v[vo];"))
    i64atom = st.int64_atomics
    for t in BY_NP.values():
        if not st.supports(t.np):
            continue
        if t.key in _ATOMIC and (i64atom or t.itemsize < 8 or t.key == "c64"):
            body = f"__global {t.c} *p = x + off; {t.c} val = v[vo]; " \
                   f"if (flags) {{ {_ATOMIC[t.key]} }} else {{ *p = {_plain_add(t)}; }}"
        elif t.itemsize >= 4:  # no 64-bit atomics on this device: run serially
            body = f"__global {t.c} *p = x + off; {t.c} val = v[vo]; *p = {_plain_add(t)};"
        else:
            kind = 1 if t.kind == "b" else (2 if t.half else 0)
            mask = "0xffu" if t.itemsize == 1 else "0xffffu"
            cast = "ushort" if t.half else ("uchar" if t.itemsize == 1 else "ushort")
            body = (f"__global {t.c} *p = x + off; uint val = (uint)(({cast} *)(v + vo))[0]; "
                    f"if (flags) add_small((__global uchar *)p, val, {mask}, {kind}); "
                    f"else add_small((__global uchar *)p, val, {mask}, {kind});")
            body = body.replace(f"(({cast} *)(v + vo))", f"((__global const {cast} *)(v + vo))")
        parts.append(kern(f"scatter_add_{t.key}_{nidx}", t.c, t.c, body))
    return "\n".join(parts)


def _plain_add(t: CType) -> str:
    if t.kind in "iu":
        return f"({t.c})(({t.wide})*p + ({t.wide})val)"
    if t.kind == "b":
        return "*p | val"
    return "*p + val"


def _kernel(st: Any, name: str, nidx: int) -> Any:
    return program_cache.kernel(st, ("gather", nidx), name,
                                lambda: _source(nidx, st), st.build_options)


def _layout(st: Any, shape: tuple, x: CLArray, v_strides: tuple, idx: Sequence[CLArray]) -> Any:
    nd = len(shape)
    key = (nd, *reversed(shape), *x.strides, *reversed(v_strides))
    for a in idx:
        key += tuple(reversed(a.strides))
    return st.layout(key)


def _run(st: Any, k: Any, x: CLArray, v: Any, voff: int, idx: Sequence[CLArray], n: int,
         flags: int, lay: Any, serial: bool = False) -> None:
    nidx = len(idx)
    mem = [0, x.data, 2, v]
    byts = [1, pack_i64(x.offset), 3, pack_i64(voff)]
    for j, a in enumerate(idx):
        mem += (4 + 2 * j, a.data)
        byts += (5 + 2 * j, pack_i64(a.offset))
    base = 4 + 2 * nidx
    if serial or not st.is_cpu:
        groups = 1 if serial else n
    else:
        groups = max(1, min(4 * st.compute_units, n // 16384))
    chunk = -(-n // groups)
    groups = -(-n // chunk)
    mem += (base + 3, lay)
    byts += (base, pack_i64(n), base + 1, pack_i64(chunk), base + 2, pack_i32(flags))
    set_mem(k, tuple(mem))
    set_bytes(k, tuple(byts))
    if st.is_cpu or serial:
        run(st.queue, k, (groups,), (1,))
    else:
        run(st.queue, k, (-(-groups // 64) * 64,), (64,))


def gather_nd(x: CLArray, indices: tuple) -> CLArray:
    st = x.state
    shape = indices[0].shape if indices else ()
    out = new(st, shape, x.dtype)
    n = out.size
    if n == 0:
        return out
    if not indices:  # a 0-d source
        return copy_into(out, x)
    t = BITS[x.dtype.itemsize]
    k = _kernel(st, f"gather_{t.key}_{len(indices)}", len(indices))
    lay = _layout(st, shape, x, out.strides, indices)
    _run(st, k, x, out.data, 0, indices, n, 0, lay)
    return out


def scatter_nd(x: CLArray, indices: tuple, values: Any, accumulate: bool) -> None:
    st = x.state
    shape = indices[0].shape if indices else ()
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return
    if values.__class__ is not CLArray:
        values = fill(new(st, (), x.dtype), values)
    if values.shape != shape:
        from .array import broadcast_to
        values = broadcast_to(values, shape)
    if values.data is x.data:  # reading what we write: snapshot the values
        from .elementwise import copy
        values = copy(values)
    nidx = len(indices)
    if accumulate:
        t = BY_NP[x.dtype]
        k = _kernel(st, f"scatter_add_{t.key}_{nidx}", nidx)
        atomic = t.itemsize < 8 or t.key == "c64" or st.int64_atomics
        flags, serial = (1, False) if atomic else (0, True)
    else:
        t = BITS[x.dtype.itemsize]
        k = _kernel(st, f"scatter_{t.key}_{nidx}", nidx)
        flags, serial = 0, False
    lay = _layout(st, shape, x, values.strides, indices)
    _run(st, k, x, values.data, values.offset, indices, n, flags, lay, serial)


# --------------------------------------------------------------------- concat, pad
def concat(xs: list, axis: int) -> CLArray:
    ref = xs[0]
    shape = list(ref.shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    out = new(ref.state, tuple(shape), ref.dtype)
    pos = 0
    for x in xs:
        n = x.shape[axis]
        if n and x.size:
            dst = view(out, x.shape, out.strides, pos * out.strides[axis])
            copy_into(dst, x)
        pos += n
    return out


def pad(x: CLArray, widths: tuple, value: Any) -> CLArray:
    shape = tuple(n + a + b for n, (a, b) in zip(x.shape, widths))
    out = fill(new(x.state, shape, x.dtype), value)
    if x.size:
        off = sum(a * s for (a, _), s in zip(widths, out.strides))
        copy_into(view(out, x.shape, out.strides, off), x)
    return out
