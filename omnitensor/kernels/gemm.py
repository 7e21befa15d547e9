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

Epilogues. Both product kernels take an optional :class:`Epilogue`: statements run on each
element of the product in place of the store into ``C`` (a compiled replay's bias add,
activation and casts fused into the GEMM: ``omnitensor.compiler.fusion``). The rendering is
dialect-neutral: the generic kernel takes one in every dialect (CUDA C included), the
register-blocked one where the dialect has vector types. The accumulation is unchanged, so
a product with an epilogue equals the product followed by the elementwise kernels.
"""
from __future__ import annotations

from dataclasses import dataclass

from .ctype import CType
from .dialect import OPENCL_C, Dialect
from .helpers import complex_mul

#: (rows per tile, vector width, vectors per tile row) of the register-blocked kernel
TILE = {"f32": (6, 8, 2), "f64": (6, 4, 2)}
#: k is summed in blocks of this many products, each block added to the total: the rounding
#: error grows with KB + K/KB instead of K (a 1024-long float32 dot was 3x NumPy's error).
#: Both kernels use the same blocks, so their results stay bitwise equal.
KBLOCK = 64
#: float32/float64 products of at most this many multiply-adds run the generic kernel
SMALL = 1 << 15


@dataclass(frozen=True)
class Epilogue:
    """What a product kernel does with each element instead of storing it into ``C``.

    The kernel then has no ``C`` parameter; ``params`` (parameter declarations: the
    epilogue's buffers and scalars) follow its own, ``setup`` runs once at its start, and
    ``element`` runs once per element of the product with ``long ot_bt, ot_i, ot_j`` (batch,
    row, column) and ``ot_v`` (the element, in the accumulator type) in scope and
    contraction into FMA off (the epilogue rounds as the elementwise kernels do)."""

    params: tuple[str, ...] = ()
    setup: str = ""
    element: str = ""


def uses_fast(t: CType, macs: int, d: Dialect = OPENCL_C) -> bool:
    """Whether a product of ``macs`` multiply-adds of type ``t`` runs the register-blocked
    kernel (float32/float64 above :data:`SMALL`, in a dialect with vector types)."""
    return t.key in TILE and d.vectors and macs > SMALL


def n_params(fast: bool, with_c: bool = True) -> int:
    """How many parameters the product kernel has before an epilogue's (``with_c``: the
    plain kernel, which stores into ``C``)."""
    return (9 if fast else 16) + (1 if with_c else 0)

_BATCH = """
{FN} void batch_offsets({G}const long *L, long bt, long *ao, long *bo) {{
  int nb = (int)L[0];
  for (int d = 0; d < nb; d++) {{
    long c = bt % L[1 + d]; bt /= L[1 + d];
    *ao += c * L[1 + nb + d]; *bo += c * L[1 + 2 * nb + d];
  }}
}}
"""

#: ``a * b + c`` in both float product kernels, as one FMA each, so a product and the
#: products of its slices agree bitwise. PoCL contracts ``c + a * b`` under FP_CONTRACT ON
#: (it inlines no builtin: ``fma()`` would be a call per multiply-add); Intel's OpenCL CPU
#: compiler contracted one kernel and not the other (slices differed in the last bit), so
#: every driver but PoCL builds with ``-DOT_EXPLICIT_FMA`` (``EXPLICIT_FMA``).
MAC_MACRO = """#ifndef OT_MAC
#ifdef OT_EXPLICIT_FMA
#define OT_MAC(a, b, c) fma((a), (b), (c))
#else
#define OT_MAC(a, b, c) ((c) + (a) * (b))
#endif
#endif"""
#: the build option that selects ``fma()`` (see :data:`MAC_MACRO`)
EXPLICIT_FMA = "-DOT_EXPLICIT_FMA"

_GENERIC = """
{CONTRACT}
{MAC_MACRO}
{KERNEL} void {NAME}({OUT}{G}const {C} *A, long aoff, long sam, long sak,
                        {G}const {C} *B, long boff, long sbk, long sbn, long M, long N,
                        long Kd, long tm, long tn, long tpw, long total,
                        {G}const long *L{EPARAMS}) {{
  {SETUP}
  long g = {GID};
  long tend = (g + 1) * tpw; tend = tend < total ? tend : total;
  for (long t = g * tpw; t < tend; t++) {{
    long bt = t / (tm * tn), r = t - bt * tm * tn, jb = r / tm, ib = r - jb * tm;
    long ao = aoff, bo = boff;
    batch_offsets(L, bt, &ao, &bo);
    {CB}
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
"""

_MAIN = """
{CONTRACT_ON}
{MAC_MACRO}
#ifndef OT_U{V}
#define OT_U{V}
typedef {V} __attribute__((aligned({ALIGN}))) u{V};
#endif
{KERNEL} void {NAME}({OUT}{G}const {C} *Ap, {G}const {C} *Bp,
                       long M, long N, long Kd, long tm, long tn, long tpw,
                       long total{EPARAMS}) {{
  {SETUP}
  long g = {GID};
  long tend = (g + 1) * tpw; tend = tend < total ? tend : total;
  for (long t = g * tpw; t < tend; t++) {{
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
    long i0 = ib * {RM}, j0 = jb * {W};
    {STORE_TILE}
  }}
}}
{CONTRACT_OFF}
"""


def _element(ep: Epilogue, d: Dialect, ty: str, where: str, v: str) -> str:
    """The block running ``ep.element`` on one product element (row ``where`` gives
    ``ot_i, ot_j``) in its own compound statement, contraction off."""
    off = d.fp_contract(False)
    return ("{\n" + (off + "\n" if off else "") +
            f"long ot_bt = bt, {where}; {ty} ot_v = {v};\n{ep.element}\n}}")


def _epilogue_parts(ep: Epilogue | None, d: Dialect, c: str) -> dict:
    if ep is None:
        return dict(OUT=f"{d.glob}{c} *Cm, ", EPARAMS="", SETUP="")
    return dict(OUT="", EPARAMS="".join(f", {p}" for p in ep.params), SETUP=ep.setup)


def _generic_parts(t: CType, d: Dialect, ep: Epilogue | None = None) -> dict:
    acc = t.comp
    if t.kind == "c":
        zero, mac = d.vec(acc, "0", "0"), f"blk + {t.key}_mul(a, b)"
    elif t.kind in "iub":
        acc = t.wide
        zero, mac = "0", "blk + a * b"
    else:
        zero, mac = f"({acc})0", "OT_MAC(a, b, blk)" if t.key in TILE else "blk + a * b"
    if t.half:
        la, lb = d.load_half("ao + i * sam + k * sak", "A"), d.load_half("bo + k * sbk + j * sbn", "B")
        store = d.store_half("acc", "i * N + j", "Cb")
    else:
        la = f"({acc})A[ao + i * sam + k * sak]"
        lb = f"({acc})B[bo + k * sbk + j * sbn]"
        store = f"Cb[i * N + j] = ({d.ty(t.c)})({'acc != 0' if t.kind == 'b' else 'acc'});"
        if t.kind == "c" and not d.vectors:  # a CUDA complex is a struct: no cast
            store = "Cb[i * N + j] = acc;"
    cb = f"{d.glob}{d.ty(t.c)} *Cb = Cm + bt * M * N;"
    if ep is not None:
        store, cb = _element(ep, d, acc, "ot_i = i, ot_j = j", "acc"), ""
    # float32/float64: fused like the fast path's ``c += a * b`` (bitwise equal results)
    contract = d.fp_contract(True) if t.key in TILE else ""
    return dict(KERNEL=d.kernel, G=d.glob, GID=d.gid, CONTRACT_OFF=d.fp_contract(False),
                K=t.key, C=d.ty(t.c), ACC=acc, ZERO=zero, MAC=mac, LOADA=la, LOADB=lb, STOREC=store,
                CONTRACT=contract, MAC_MACRO=MAC_MACRO if t.key in TILE else "", KB=KBLOCK,
                CB=cb, NAME=f"gemmg_{t.key}",
                **_epilogue_parts(ep, d, d.ty(t.c)))


def generic_source(t: CType, d: Dialect = OPENCL_C) -> str:
    """The generic kernel ``gemmg_<key>`` (complex needs only the complex product helper)."""
    return "\n".join([d.prelude, complex_mul(t, d) if t.kind == "c" else "", batch_helper(d),
                      generic_kernel(t, d)])


def generic_kernel(t: CType, d: Dialect = OPENCL_C, name: str | None = None,
                   epilogue: Epilogue | None = None) -> str:
    """The generic product kernel alone (``name``, default ``gemmg_<key>``), with
    ``epilogue`` in place of its store when given; its program needs
    :func:`batch_helper` (and the complex product helper for complex types) before it."""
    parts = _generic_parts(t, d, epilogue)
    if name is not None:
        parts["NAME"] = name
    return _GENERIC.format(**parts)


def batch_helper(d: Dialect = OPENCL_C) -> str:
    """``batch_offsets``, which the packing and generic kernels call: once per program."""
    return _BATCH.format(FN=d.func, G=d.glob)


def _tile(t: CType, d: Dialect) -> tuple[int, int, int, int, str]:
    if not d.vectors:
        raise ValueError(f"the register-blocked GEMM needs 8-wide vector types, which the "
                         f"{d.name} dialect lacks: use generic_source")
    rm, vw, nv = TILE[t.key]
    return rm, vw, nv, vw * nv, f"{t.c}{vw}"


def fast_source(t: CType, d: Dialect = OPENCL_C) -> str:
    """The packing kernels ``packa_<key>``/``packb_<key>`` and the register-blocked kernel
    ``gemm_<key>`` (float32/float64; OpenCL's vector types: tuned for PoCL's AVX code)."""
    rm, _vw, _nv, w, _v = _tile(t, d)
    pack = _PACK.format(KERNEL=d.kernel, G=d.glob, GID=d.gid, K=t.key, C=t.c, RM=rm, W=w)
    return "\n".join([d.prelude, batch_helper(d), pack, fast_kernel(t, d)])


def fast_kernel(t: CType, d: Dialect = OPENCL_C, name: str | None = None,
                epilogue: Epilogue | None = None) -> str:
    """The register-blocked product kernel alone (``name``, default ``gemm_<key>``) over
    panels packed by ``packa_<key>``/``packb_<key>``, with ``epilogue`` in place of its
    stores when given."""
    rm, vw, nv, w, v = _tile(t, d)
    decl = " ".join(f"{v} c{r}_{j} = ({v})(0);" for r in range(rm) for j in range(nv))
    loads = " ".join(f"{v} b{j} = *({d.glob}const u{v} *)(bp + {j * vw});"
                     for j in range(nv))
    fmas = " ".join("{ " + f"{v} a = ({v})(ap[{r}]); " +
                    " ".join(f"c{r}_{j} = OT_MAC(a, b{j}, c{r}_{j});" for j in range(nv)) + " }"
                    for r in range(rm))
    decl_o = " ".join(f"{v} o{r}_{j} = ({v})(0);" for r in range(rm) for j in range(nv))
    add_o = " ".join(f"o{r}_{j} += c{r}_{j};" for r in range(rm) for j in range(nv))
    stores = " ".join(f"*({d.glob}u{v} *)(Cb + (i0 + {r}) * N + j0 + {j * vw}) = o{r}_{j};"
                      for r in range(rm) for j in range(nv))
    spill = " ".join(f"*(u{v} *)(&tile[{r}][{j * vw}]) = o{r}_{j};"
                     for r in range(rm) for j in range(nv))
    c = t.c
    if epilogue is None:
        store_tile = (f"{d.glob}{c} *Cb = Cm + bt * M * N;\n"
                      f"    if (i0 + {rm} <= M && j0 + {w} <= N) {{\n      {stores}\n"
                      f"    }} else {{\n      {c} tile[{rm}][{w}];\n      {spill}\n"
                      f"      for (int i = 0; i < {rm}; i++)\n"
                      f"        for (int j = 0; j < {w}; j++)\n"
                      f"          if (i0 + i < M && j0 + j < N) "
                      f"Cb[(i0 + i) * N + j0 + j] = tile[i][j];\n    }}")
    else:  # through a tile: the epilogue is scalar code, one element at a time; whole
        # tiles loop without bounds checks (constant trip counts LLVM vectorizes)
        el = _element(epilogue, d, c, "ot_i = i0 + i, ot_j = j0 + j", "tile[i][j]")
        store_tile = (f"{c} tile[{rm}][{w}];\n    {spill}\n"
                      f"    if (i0 + {rm} <= M && j0 + {w} <= N) {{\n"
                      f"      for (int i = 0; i < {rm}; i++)\n"
                      f"        for (int j = 0; j < {w}; j++) {el}\n"
                      f"    }} else {{\n"
                      f"      for (int i = 0; i < {rm}; i++)\n"
                      f"        for (int j = 0; j < {w}; j++)\n"
                      f"          if (i0 + i < M && j0 + j < N) {el}\n    }}")
    return _MAIN.format(KERNEL=d.kernel, G=d.glob, GID=d.gid, CONTRACT_ON=d.fp_contract(True),
                        MAC_MACRO=MAC_MACRO,
                        CONTRACT_OFF=d.fp_contract(False), K=t.key, C=c, V=v, RM=rm, W=w,
                        DECL=decl, LOADS=loads, FMAS=fmas, DECL_O=decl_o, ADD_O=add_o,
                        KB=KBLOCK, ALIGN=t.itemsize, STORE_TILE=store_tile,
                        NAME=name or f"gemm_{t.key}", **_epilogue_parts(epilogue, d, c))
