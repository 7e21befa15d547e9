"""Batched matmul: packed, register-blocked GEMM for float32/float64; a generic kernel else.

Fast path (real floats), BLAS-style:

1. pack A into row panels ``Ap[batch][ib][k][RM]`` and B into column panels
   ``Bp[batch][jb][k][W]`` (zero-padded to whole tiles). The packing kernels read any
   strides, so transposed, sliced or broadcast (stride-0 batch) operands need no other copy,
   and the main loop then streams both panels contiguously. Without packing, a row-major B
   with a power-of-two leading dimension maps every k to the same L1 set and the kernel runs
   at a fraction of the speed;
2. a work-item computes RM x W tiles of C (6 x 16 for float32: twelve 8-wide accumulators,
   i.e. twelve AVX2 registers): per k, W/8 vector loads of B, RM broadcasts of A, RM*W/8
   FMAs. Consecutive tiles of a work-item go down one column of tiles (the B panel stays in
   cache).

PoCL does not inline OpenCL builtins (``vload8``, ``fma``, ``min`` become calls), so the hot
loop uses plain vector dereferences of an alignment-4 typedef and ``a * b + c`` with
FP_CONTRACT on, which LLVM turns into ``vfmadd``.

Integer, bool, complex and float16 matmuls, and float32/float64 ones of fewer than
``_SMALL`` multiply-adds, use a generic strided kernel (4x4 tiles per work-item; integers
wrap, float16 accumulates in float32). For float32/float64 it contracts ``acc + a * b``
into an FMA like the fast path and sums k in the same order, so both paths give bitwise
equal results (a product and the products of its slices agree exactly, as the Array API
tests check). The two paths are separate programs: a first small matmul of a dtype compiles
one kernel, not four (a cold PoCL build costs ~0.3 s per kernel).
"""
from __future__ import annotations

from typing import Any

from ...errors import UnsupportedDTypeError
from . import program_cache
from .array import CLArray, new
from .clsrc import PRELUDE, complex_mul
from .cltypes import BY_NP, CType, pack_i64
from .elementwise import fill
from .launch import run_items, set_bytes, set_mem

#: (rows per tile, vector width, vectors per tile row)
_TILE = {"f32": (6, 8, 2), "f64": (6, 4, 2)}
#: float32/float64 matmuls of at most this many multiply-adds run the generic kernel
_SMALL = 1 << 15
#: k is summed in blocks of this many products, each block added to the total: the rounding
#: error grows with KB + K/KB instead of K (a 1024-long float32 dot was 3x NumPy's error).
#: Both kernels use the same blocks, so their results stay bitwise equal.
_KBLOCK = 64

_BATCH = """
inline void batch_offsets(__global const long *L, long bt, long *ao, long *bo) {
  int nb = (int)L[0];
  for (int d = 0; d < nb; d++) {
    long c = bt % L[1 + d]; bt /= L[1 + d];
    *ao += c * L[1 + nb + d]; *bo += c * L[1 + 2 * nb + d];
  }
}
"""

_GENERIC = """
{CONTRACT}
__kernel void gemmg_{K}(__global {C} *Cm, __global const {C} *A, long aoff, long sam, long sak,
                        __global const {C} *B, long boff, long sbk, long sbn, long M, long N,
                        long Kd, long tm, long tn, long tpw, long total,
                        __global const long *L) {{
  long g = get_global_id(0);
  long t1 = (g + 1) * tpw; t1 = t1 < total ? t1 : total;
  for (long t = g * tpw; t < t1; t++) {{
    long bt = t / (tm * tn), r = t - bt * tm * tn, jb = r / tm, ib = r - jb * tm;
    long ao = aoff, bo = boff;
    batch_offsets(L, bt, &ao, &bo);
    __global {C} *Cb = Cm + bt * M * N;
    long i1 = ib * 4 + 4 < M ? ib * 4 + 4 : M, j1 = jb * 4 + 4 < N ? jb * 4 + 4 : N;
    for (long i = ib * 4; i < i1; i++)
      for (long j = jb * 4; j < j1; j++) {{
        {ACC} acc = {ZERO};
        for (long k0 = 0; k0 < Kd; k0 += {KB}) {{
          long k1 = k0 + {KB} < Kd ? k0 + {KB} : Kd;
          {ACC} blk = {ZERO};
          for (long k = k0; k < k1; k++) {{ {ACC} a = {LOADA}; {ACC} b = {LOADB}; blk = {MAC}; }}
          acc = acc + blk;
        }}
        {STOREC}
      }}
  }}
}}
#pragma OPENCL FP_CONTRACT OFF
"""

_PACK = """
// Ap[bt][ib][k][RM] <- A (any strides), zero rows past M; one work-item per panel
__kernel void packa_{K}(__global {C} *P, __global const {C} *A, long aoff, long sam, long sak,
                        long M, long Kd, long tm, long npanels, __global const long *L) {{
  long g = get_global_id(0);
  if (g >= npanels) return;
  long ib = g % tm, bt = g / tm, ao = aoff, bo = 0;
  batch_offsets(L, bt, &ao, &bo);
  __global {C} *p = P + g * Kd * {RM};
  long r0 = ib * {RM}, nr = M - r0 < {RM} ? M - r0 : {RM};
  for (long k = 0; k < Kd; k++) {{
    __global const {C} *a = A + ao + r0 * sam + k * sak;
    for (int r = 0; r < {RM}; r++) p[k * {RM} + r] = r < nr ? a[r * sam] : ({C})0;
  }}
}}
// Bp[bt][jb][k][W] <- B (any strides), zero columns past N; one work-item per panel
__kernel void packb_{K}(__global {C} *P, __global const {C} *B, long boff, long sbk, long sbn,
                        long N, long Kd, long tn, long npanels, __global const long *L) {{
  long g = get_global_id(0);
  if (g >= npanels) return;
  long jb = g % tn, bt = g / tn, ao = 0, bo = boff;
  batch_offsets(L, bt, &ao, &bo);
  __global {C} *p = P + g * Kd * {W};
  long c0 = jb * {W}, nc = N - c0 < {W} ? N - c0 : {W};
  if (nc == {W} && sbn == 1) {{
    for (long k = 0; k < Kd; k++) {{
      __global const {C} *b = B + bo + k * sbk + c0;
      for (int c = 0; c < {W}; c++) p[k * {W} + c] = b[c];
    }}
  }} else {{
    for (long k = 0; k < Kd; k++) {{
      __global const {C} *b = B + bo + k * sbk + c0 * sbn;
      for (int c = 0; c < {W}; c++) p[k * {W} + c] = c < nc ? b[c * sbn] : ({C})0;
    }}
  }}
}}

#pragma OPENCL FP_CONTRACT ON
typedef {V} __attribute__((aligned({ALIGN}))) u{V};
__kernel void gemm_{K}(__global {C} *Cm, __global const {C} *Ap, __global const {C} *Bp,
                       long M, long N, long Kd, long tm, long tn, long tpw, long total) {{
  long g = get_global_id(0);
  long t1 = (g + 1) * tpw; t1 = t1 < total ? t1 : total;
  for (long t = g * tpw; t < t1; t++) {{
    long bt = t / (tm * tn), r = t - bt * tm * tn, jb = r / tm, ib = r - jb * tm;
    __global const {C} *ap = Ap + (bt * tm + ib) * Kd * {RM};
    __global const {C} *bp = Bp + (bt * tn + jb) * Kd * {W};
    {DECL_O}
    for (long k0 = 0; k0 < Kd; k0 += {KB}) {{
      long k1 = k0 + {KB} < Kd ? k0 + {KB} : Kd;
      {DECL}
      for (long k = k0; k < k1; k++) {{
        {LOADS}
        {FMAS}
        ap += {RM}; bp += {W};
      }}
      {ADD_O}
    }}
    __global {C} *Cb = Cm + bt * M * N;
    long i0 = ib * {RM}, j0 = jb * {W};
    if (i0 + {RM} <= M && j0 + {W} <= N) {{
      {STORES}
    }} else {{
      {C} tile[{RM}][{W}];
      {SPILL}
      for (int i = 0; i < {RM}; i++)
        for (int j = 0; j < {W}; j++)
          if (i0 + i < M && j0 + j < N) Cb[(i0 + i) * N + j0 + j] = tile[i][j];
    }}
  }}
}}
#pragma OPENCL FP_CONTRACT OFF
"""


def _generic_parts(t: CType) -> dict:
    acc = t.comp
    if t.kind == "c":
        zero, mac = f"({acc})(0, 0)", f"blk + {t.key}_mul(a, b)"
    elif t.kind in "iub":
        acc = t.wide
        zero, mac = "0", "blk + a * b"
    else:
        zero, mac = f"({acc})0", "blk + a * b"
    if t.half:
        la, lb = "vload_half(ao + i * sam + k * sak, A)", "vload_half(bo + k * sbk + j * sbn, B)"
        store = "vstore_half_rte(acc, i * N + j, Cb);"
    else:
        la = f"({acc})A[ao + i * sam + k * sak]"
        lb = f"({acc})B[bo + k * sbk + j * sbn]"
        store = f"Cb[i * N + j] = ({t.c})({'acc != 0' if t.kind == 'b' else 'acc'});"
    # float32/float64: fused like the fast path's ``c += a * b`` (bitwise equal results)
    contract = "#pragma OPENCL FP_CONTRACT ON" if t.key in _TILE else ""
    return dict(K=t.key, C=t.c, ACC=acc, ZERO=zero, MAC=mac, LOADA=la, LOADB=lb, STOREC=store,
                CONTRACT=contract, KB=_KBLOCK)


def _source(t: CType) -> str:
    """The generic kernel's program (complex needs only the complex product helper)."""
    return "\n".join([PRELUDE, complex_mul(t) if t.kind == "c" else "", _BATCH,
                      _GENERIC.format(**_generic_parts(t))])


def _fast_source(t: CType) -> str:
    """The packing kernels and the register-blocked kernel (float32/float64)."""
    parts = [PRELUDE, _BATCH]
    rm, vw, nv = _TILE[t.key]
    w = vw * nv
    v = f"{t.c}{vw}"
    decl = " ".join(f"{v} c{r}_{j} = ({v})(0);" for r in range(rm) for j in range(nv))
    loads = " ".join(f"{v} b{j} = *(__global const u{v} *)(bp + {j * vw});"
                     for j in range(nv))
    fmas = " ".join("{ " + f"{v} a = ({v})(ap[{r}]); " +
                    " ".join(f"c{r}_{j} += a * b{j};" for j in range(nv)) + " }"
                    for r in range(rm))
    decl_o = " ".join(f"{v} o{r}_{j} = ({v})(0);" for r in range(rm) for j in range(nv))
    add_o = " ".join(f"o{r}_{j} += c{r}_{j};" for r in range(rm) for j in range(nv))
    stores = " ".join(f"*(__global u{v} *)(Cb + (i0 + {r}) * N + j0 + {j * vw}) = o{r}_{j};"
                      for r in range(rm) for j in range(nv))
    spill = " ".join(f"*(u{v} *)(&tile[{r}][{j * vw}]) = o{r}_{j};"
                     for r in range(rm) for j in range(nv))
    parts.append(_PACK.format(K=t.key, C=t.c, V=v, RM=rm, W=w, DECL=decl, LOADS=loads,
                              FMAS=fmas, STORES=stores, SPILL=spill, DECL_O=decl_o,
                              ADD_O=add_o, KB=_KBLOCK, ALIGN=t.itemsize))
    return "\n".join(parts)


def _kernel(st: Any, name: str, t: CType) -> Any:
    if name.startswith("gemmg_"):
        return program_cache.kernel(st, ("gemm", t.key), name, lambda: _source(t),
                                    st.build_options)
    return program_cache.kernel(st, ("gemmf", t.key), name, lambda: _fast_source(t),
                                st.build_options)


def _split(st: Any, n: int, per: int) -> tuple[int, int]:
    """(work-items, items per work-item) for n items, at least ``per`` each on a CPU."""
    if not st.is_cpu:
        return n, 1
    groups = max(1, min(16 * st.compute_units, n // per))
    chunk = -(-n // groups)
    return -(-n // chunk), chunk


def matmul(a: CLArray, b: CLArray) -> CLArray:
    st = a.state
    t = BY_NP.get(a.dtype)
    if t is None:
        raise UnsupportedDTypeError(f"matmul: unsupported dtype {a.dtype}")
    batch = a.shape[:-2]
    M, Kd = a.shape[-2], a.shape[-1]
    N = b.shape[-1]
    out = new(st, batch + (M, N), a.dtype)
    if out.size == 0:
        return out
    if Kd == 0:
        return fill(out, 0)
    nbt = 1
    for n in batch:
        nbt *= n
    # batch layout (innermost first); size-1 batch axes dropped; strides may be 0
    dims = [(n, sa, sb) for n, sa, sb in zip(batch, a.strides[:-2], b.strides[:-2]) if n != 1]
    dims.reverse()
    lay = st.layout((len(dims), *[d[0] for d in dims], *[d[1] for d in dims],
                     *[d[2] for d in dims]))
    if t.key in _TILE and nbt * M * N * Kd > _SMALL:
        _fast(st, t, a, b, out, nbt, M, N, Kd, lay)
        return out
    tm, tn = -(-M // 4), -(-N // 4)
    total = nbt * tm * tn
    groups, tpw = _split(st, total, 1)
    k = _kernel(st, f"gemmg_{t.key}", t)
    set_mem(k, (0, out.data, 1, a.data, 5, b.data, 16, lay))
    set_bytes(k, (2, pack_i64(a.offset), 3, pack_i64(a.strides[-2]), 4, pack_i64(a.strides[-1]),
                  6, pack_i64(b.offset), 7, pack_i64(b.strides[-2]), 8, pack_i64(b.strides[-1]),
                  9, pack_i64(M), 10, pack_i64(N), 11, pack_i64(Kd), 12, pack_i64(tm),
                  13, pack_i64(tn), 14, pack_i64(tpw), 15, pack_i64(total)))
    run_items(st, k, groups)
    return out


def _fast(st: Any, t: CType, a: CLArray, b: CLArray, out: CLArray, nbt: int, M: int, N: int,
          Kd: int, lay: Any) -> None:
    rm, vw, nv = _TILE[t.key]
    w = vw * nv
    tm, tn = -(-M // rm), -(-N // w)
    ap = new(st, (nbt * tm * Kd * rm,), a.dtype)
    bp = new(st, (nbt * tn * Kd * w,), a.dtype)
    ka = _kernel(st, f"packa_{t.key}", t)
    set_mem(ka, (0, ap.data, 1, a.data, 9, lay))
    set_bytes(ka, (2, pack_i64(a.offset), 3, pack_i64(a.strides[-2]), 4, pack_i64(a.strides[-1]),
                   5, pack_i64(M), 6, pack_i64(Kd), 7, pack_i64(tm), 8, pack_i64(nbt * tm)))
    run_items(st, ka, nbt * tm)
    kb = _kernel(st, f"packb_{t.key}", t)
    set_mem(kb, (0, bp.data, 1, b.data, 9, lay))
    set_bytes(kb, (2, pack_i64(b.offset), 3, pack_i64(b.strides[-2]), 4, pack_i64(b.strides[-1]),
                   5, pack_i64(N), 6, pack_i64(Kd), 7, pack_i64(tn), 8, pack_i64(nbt * tn)))
    run_items(st, kb, nbt * tn)
    total = nbt * tm * tn
    groups, tpw = _split(st, total, 1)
    if st.is_cpu:  # ~2 tiles per work-group at least: PoCL's per-group cost is a few us
        groups = min(groups, 32 * st.compute_units)
        tpw = -(-total // groups)
        groups = -(-total // tpw)
    k = _kernel(st, f"gemm_{t.key}", t)
    set_mem(k, (0, out.data, 1, ap.data, 2, bp.data))
    set_bytes(k, (3, pack_i64(M), 4, pack_i64(N), 5, pack_i64(Kd), 6, pack_i64(tm),
                  7, pack_i64(tn), 8, pack_i64(tpw), 9, pack_i64(total)))
    run_items(st, k, groups)
