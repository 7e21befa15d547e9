"""Batched matmul kernels: packed, register-blocked GEMM for float32/float64; a generic one
else.

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

from .ctype import CType
from .dialect import OPENCL_C, Dialect
from .helpers import complex_mul

#: (rows per tile, vector width, vectors per tile row) of the register-blocked kernel
TILE = {"f32": (6, 8, 2), "f64": (6, 4, 2)}
#: k is summed in blocks of this many products, each block added to the total: the rounding
#: error grows with KB + K/KB instead of K (a 1024-long float32 dot was 3x NumPy's error).
#: Both kernels use the same blocks, so their results stay bitwise equal.
KBLOCK = 64

_BATCH = """
{FN} void batch_offsets({G}const long *L, long bt, long *ao, long *bo) {{
  int nb = (int)L[0];
  for (int d = 0; d < nb; d++) {{
    long c = bt % L[1 + d]; bt /= L[1 + d];
    *ao += c * L[1 + nb + d]; *bo += c * L[1 + 2 * nb + d];
  }}
}}
"""

_GENERIC = """
{CONTRACT}
{KERNEL} void gemmg_{K}({G}{C} *Cm, {G}const {C} *A, long aoff, long sam, long sak,
                        {G}const {C} *B, long boff, long sbk, long sbn, long M, long N,
                        long Kd, long tm, long tn, long tpw, long total,
                        {G}const long *L) {{
  long g = {GID};
  long t1 = (g + 1) * tpw; t1 = t1 < total ? t1 : total;
  for (long t = g * tpw; t < t1; t++) {{
    long bt = t / (tm * tn), r = t - bt * tm * tn, jb = r / tm, ib = r - jb * tm;
    long ao = aoff, bo = boff;
    batch_offsets(L, bt, &ao, &bo);
    {G}{C} *Cb = Cm + bt * M * N;
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
{CONTRACT_OFF}
"""

_PACK = """
// Ap[bt][ib][k][RM] <- A (any strides), zero rows past M; one work-item per panel
{KERNEL} void packa_{K}({G}{C} *P, {G}const {C} *A, long aoff, long sam, long sak,
                        long M, long Kd, long tm, long npanels, {G}const long *L) {{
  long g = {GID};
  if (g >= npanels) return;
  long ib = g % tm, bt = g / tm, ao = aoff, bo = 0;
  batch_offsets(L, bt, &ao, &bo);
  {G}{C} *p = P + g * Kd * {RM};
  long r0 = ib * {RM}, nr = M - r0 < {RM} ? M - r0 : {RM};
  for (long k = 0; k < Kd; k++) {{
    {G}const {C} *a = A + ao + r0 * sam + k * sak;
    for (int r = 0; r < {RM}; r++) p[k * {RM} + r] = r < nr ? a[r * sam] : ({C})0;
  }}
}}
// Bp[bt][jb][k][W] <- B (any strides), zero columns past N; one work-item per panel
{KERNEL} void packb_{K}({G}{C} *P, {G}const {C} *B, long boff, long sbk, long sbn,
                        long N, long Kd, long tn, long npanels, {G}const long *L) {{
  long g = {GID};
  if (g >= npanels) return;
  long jb = g % tn, bt = g / tn, ao = 0, bo = boff;
  batch_offsets(L, bt, &ao, &bo);
  {G}{C} *p = P + g * Kd * {W};
  long c0 = jb * {W}, nc = N - c0 < {W} ? N - c0 : {W};
  if (nc == {W} && sbn == 1) {{
    for (long k = 0; k < Kd; k++) {{
      {G}const {C} *b = B + bo + k * sbk + c0;
      for (int c = 0; c < {W}; c++) p[k * {W} + c] = b[c];
    }}
  }} else {{
    for (long k = 0; k < Kd; k++) {{
      {G}const {C} *b = B + bo + k * sbk + c0 * sbn;
      for (int c = 0; c < {W}; c++) p[k * {W} + c] = c < nc ? b[c * sbn] : ({C})0;
    }}
  }}
}}

{CONTRACT_ON}
typedef {V} __attribute__((aligned({ALIGN}))) u{V};
{KERNEL} void gemm_{K}({G}{C} *Cm, {G}const {C} *Ap, {G}const {C} *Bp,
                       long M, long N, long Kd, long tm, long tn, long tpw, long total) {{
  long g = {GID};
  long t1 = (g + 1) * tpw; t1 = t1 < total ? t1 : total;
  for (long t = g * tpw; t < t1; t++) {{
    long bt = t / (tm * tn), r = t - bt * tm * tn, jb = r / tm, ib = r - jb * tm;
    {G}const {C} *ap = Ap + (bt * tm + ib) * Kd * {RM};
    {G}const {C} *bp = Bp + (bt * tn + jb) * Kd * {W};
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
    {G}{C} *Cb = Cm + bt * M * N;
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
{CONTRACT_OFF}
"""


def _generic_parts(t: CType, d: Dialect) -> dict:
    acc = t.comp
    if t.kind == "c":
        zero, mac = d.vec(acc, "0", "0"), f"blk + {t.key}_mul(a, b)"
    elif t.kind in "iub":
        acc = t.wide
        zero, mac = "0", "blk + a * b"
    else:
        zero, mac = f"({acc})0", "blk + a * b"
    if t.half:
        la, lb = d.load_half("ao + i * sam + k * sak", "A"), d.load_half("bo + k * sbk + j * sbn", "B")
        store = d.store_half("acc", "i * N + j", "Cb")
    else:
        la = f"({acc})A[ao + i * sam + k * sak]"
        lb = f"({acc})B[bo + k * sbk + j * sbn]"
        store = f"Cb[i * N + j] = ({d.ty(t.c)})({'acc != 0' if t.kind == 'b' else 'acc'});"
        if t.kind == "c" and not d.vectors:  # a CUDA complex is a struct: no cast
            store = "Cb[i * N + j] = acc;"
    # float32/float64: fused like the fast path's ``c += a * b`` (bitwise equal results)
    contract = d.fp_contract(True) if t.key in TILE else ""
    return dict(KERNEL=d.kernel, G=d.glob, GID=d.gid, CONTRACT_OFF=d.fp_contract(False),
                K=t.key, C=d.ty(t.c), ACC=acc, ZERO=zero, MAC=mac, LOADA=la, LOADB=lb, STOREC=store,
                CONTRACT=contract, KB=KBLOCK)


def generic_source(t: CType, d: Dialect = OPENCL_C) -> str:
    """The generic kernel ``gemmg_<key>`` (complex needs only the complex product helper)."""
    return "\n".join([d.prelude, complex_mul(t, d) if t.kind == "c" else "", _batch(d),
                      _GENERIC.format(**_generic_parts(t, d))])


def _batch(d: Dialect) -> str:
    return _BATCH.format(FN=d.func, G=d.glob)


def fast_source(t: CType, d: Dialect = OPENCL_C) -> str:
    """The packing kernels ``packa_<key>``/``packb_<key>`` and the register-blocked kernel
    ``gemm_<key>`` (float32/float64; OpenCL's vector types: tuned for PoCL's AVX code)."""
    if not d.vectors:
        raise ValueError(f"the register-blocked GEMM needs 8-wide vector types, which the "
                         f"{d.name} dialect lacks: use generic_source")
    parts = [d.prelude, _batch(d)]
    rm, vw, nv = TILE[t.key]
    w = vw * nv
    v = f"{t.c}{vw}"
    decl = " ".join(f"{v} c{r}_{j} = ({v})(0);" for r in range(rm) for j in range(nv))
    loads = " ".join(f"{v} b{j} = *({d.glob}const u{v} *)(bp + {j * vw});"
                     for j in range(nv))
    fmas = " ".join("{ " + f"{v} a = ({v})(ap[{r}]); " +
                    " ".join(f"c{r}_{j} += a * b{j};" for j in range(nv)) + " }"
                    for r in range(rm))
    decl_o = " ".join(f"{v} o{r}_{j} = ({v})(0);" for r in range(rm) for j in range(nv))
    add_o = " ".join(f"o{r}_{j} += c{r}_{j};" for r in range(rm) for j in range(nv))
    stores = " ".join(f"*({d.glob}u{v} *)(Cb + (i0 + {r}) * N + j0 + {j * vw}) = o{r}_{j};"
                      for r in range(rm) for j in range(nv))
    spill = " ".join(f"*(u{v} *)(&tile[{r}][{j * vw}]) = o{r}_{j};"
                     for r in range(rm) for j in range(nv))
    parts.append(_PACK.format(KERNEL=d.kernel, G=d.glob, GID=d.gid,
                              CONTRACT_ON=d.fp_contract(True), CONTRACT_OFF=d.fp_contract(False),
                              K=t.key, C=t.c, V=v, RM=rm, W=w, DECL=decl, LOADS=loads,
                              FMAS=fmas, STORES=stores, SPILL=spill, DECL_O=decl_o,
                              ADD_O=add_o, KB=KBLOCK, ALIGN=t.itemsize))
    return "\n".join(parts)
