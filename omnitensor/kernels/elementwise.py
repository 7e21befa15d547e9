"""Elementwise kernels (unary, binary, where, casts, copies, fills): source for any dialect.

Each (op, dtype) has a few generic variants with one argument list, compiled only when
first launched: contiguous operands (each work-item runs one plain loop over a contiguous
chunk, which PoCL's compiler vectorizes), the same with some operands Python scalars (passed
by value, hoisted out of the loop), and any strides (the output is walked in C order, row by
row, with per-operand strides from a small layout buffer: any ndim, 0 for broadcast,
negative for flips, axes coalesced first). Nothing depends on the shape, so the number of
kernels stays small: ops of a family and dtype share one program (``ops.FAMILY``), signed
integers reuse the unsigned kernel where two's complement makes the bits identical
(:func:`kernel_type`), copies and ``where`` depend only on the item size, and casts are
canonicalised to bit-equivalent pairs (:func:`canonical_cast`).

Kernel arguments: ``o`` (output), ``p0..p{k-1}`` (inputs), ``L`` (the layout buffer of the
strided variant, else unused) and ``P``, one by-value struct of offsets, sizes, the scalar
mask and the scalar operands, packed by :func:`pack_params`.
"""
from __future__ import annotations

import struct
from typing import Callable, Sequence

import numpy as np

from . import ops
from .ctype import BITS, BY_NP, CType
from .dialect import OPENCL_C, Dialect
from .helpers import helpers

#: the bit of the ``mode`` field that selects the strided walk (scalar bits are below it)
STRIDED = 256


def gen_kernel(name: str, ins: Sequence[CType], out: CType, expr: str,
               names: Sequence[str], scalar_ok: Sequence[bool],
               d: Dialect = OPENCL_C) -> str:
    """Source of the kernels of one elementwise op computing ``out = expr(names...)``, all
    with the same arguments: ``name`` (contiguous operands), ``name_m<mask>`` (contiguous,
    the operands in bit-mask ``mask`` are Python scalars passed by value and hoisted) and
    ``name_s`` (any strides; scalars selected by the bits of ``mode``).

    Only the variants a program launches get compiled, and each is a single plain loop:
    PoCL compiles a kernel in ~0.06 s of CPU that way, more than twice as fast as one loop
    selecting between loaded and scalar operands. Pointers are ``restrict``: the launcher
    only lets an output alias an input element for element (it snapshots partial
    overlaps), which is safe for a loop where iteration i only touches element i."""
    k = len(ins)
    # scalar arguments travel in one by-value struct: PoCL copies every kernel argument at
    # each enqueue (~0.3 us apiece), so 4-6 arguments instead of 12 save ~2 us per launch.
    # Layout (mirrored by ``pack_params``): 6 longs, 2 ints, then one 16-byte slot per input
    fields = " ".join(f"{t.scalar_c} s{i} __attribute__((aligned(16)));"
                      for i, t in enumerate(ins))
    typedef = (f"typedef struct __attribute__((aligned(16))) {{ long oo, o0, o1, o2, n, chunk; "
               f"int mode, pad; {fields} }} P_{name};")
    text = _LoopText(name, ins, out, expr, names, scalar_ok, d)
    parts = [typedef]
    for mask in range(1 << k):
        if any(mask >> i & 1 and not scalar_ok[i] for i in range(k)):
            continue
        if k > 1 and mask == (1 << k) - 1:  # never all scalars (core computes those)
            continue
        parts.append(text.contiguous(mask))
    parts.append(text.strided())
    return "".join(parts)


class _LoopText:
    """The pieces of ``gen_kernel``'s kernels: the shared signature and prologue, the loop
    body, and the contiguous and strided kernels built from them."""

    def __init__(self, name: str, ins: Sequence[CType], out: CType, expr: str,
                 names: Sequence[str], scalar_ok: Sequence[bool], d: Dialect) -> None:
        self.name, self.ins, self.out, self.names, self.scalar_ok, self.d = \
            name, ins, out, names, scalar_ok, d
        g = d.glob
        args = [f"{g}{d.ty(out.c)} * {d.restrict} o"]
        args += [f"{g}const {d.ty(t.c)} * {d.restrict} p{i}" for i, t in enumerate(ins)]
        args += [f"{g}const long *L", f"P_{name} P"]
        # OpenCL converts with a cast; a CUDA vector (complex, 16-byte bits) is a struct
        # already of its own type
        self.cast = expr if out.comp[-1].isdigit() and not d.vectors else \
            f"({out.comp})({expr})"
        unpack = ("long oo = P.oo, n = P.n, chunk = P.chunk; int mode = P.mode; " +
                  " ".join(f"long o{i} = P.o{i}; {t.scalar_c} s{i} = P.s{i};"
                           for i, t in enumerate(ins)))
        self.head = f"""{", ".join(args)}) {{
  {unpack}
  long s = {d.gid} * chunk;
  long e = s + chunk < n ? s + chunk : n;
  if (s >= e) return;"""

    def body(self, idx_of: Callable[[int], str], store_idx: str, mask: int | None) -> str:
        """Load the operands (``mask``: hoisted scalars; None: scalars chosen by ``mode``),
        compute, store."""
        lines = []
        for i, (t, nm) in enumerate(zip(self.ins, self.names)):
            if mask is not None and mask >> i & 1:
                continue  # hoisted scalar
            ld = t.load(f"p{i}", idx_of(i), self.d)
            if mask is None and self.scalar_ok[i]:
                ld = f"((mode >> {i}) & 1) ? s{i} : {ld}"
            lines.append(f"{t.comp} {nm} = {ld};")
        lines.append(self.out.store("o", store_idx, self.cast, self.d))
        return " ".join(lines)

    def contiguous(self, mask: int) -> str:
        """The contiguous kernel with the operands of bit-mask ``mask`` hoisted scalars."""
        offs = " ".join(f"p{i} += o{i};" for i in range(len(self.ins)))
        hoist = " ".join(f"{t.comp} {nm} = s{i};"
                         for i, (t, nm) in enumerate(zip(self.ins, self.names)) if mask >> i & 1)
        kname = self.name if mask == 0 else f"{self.name}_m{mask}"
        return f"""
{self.d.kernel} void {kname}({self.head}
  o += oo; {offs} {hoist}
  for (long i = s; i < e; i++) {{ {self.body(lambda i: 'i', 'i', mask)} }}
}}
"""

    def strided(self) -> str:
        """The any-strides kernel: rows of the innermost axis, a unit-stride fast loop."""
        k, g = len(self.ins), self.d.glob
        strides = " ".join(f"{g}const long *t{i} = L + {i + 2} * nd + 1;" for i in range(k))
        start = " ".join(f"long q{i} = o{i} + col * t{i}[0];" for i in range(k))
        walk = " ".join(f"q{i} += c * t{i}[d];" for i in range(k))
        unit = " && ".join(["to[0] == 1"] + [f"t{i}[0] == 1" for i in range(k)])
        return f"""
{self.d.kernel} void {self.name}_s({self.head}
  int nd = (int)L[0];
  {g}const long *sh = L + 1;
  {g}const long *to = L + nd + 1;
  {strides}
  long n0 = sh[0];
  long i = s;
  while (i < e) {{
    long row = i / n0, col = i - row * n0;
    long qo = oo + col * to[0]; {start}
    long r = row;
    for (int d = 1; d < nd; d++) {{
      long ext = sh[d]; long c = r % ext; r /= ext;
      qo += c * to[d]; {walk}
    }}
    long cnt = n0 - col < e - i ? n0 - col : e - i;
    if ({unit}) {{
      for (long j = 0; j < cnt; j++) {{ {self.body(lambda i: f"q{i} + j", "qo + j", None)} }}
    }} else {{
      for (long j = 0; j < cnt; j++) {{
        {self.body(lambda i: f"q{i} + j * t{i}[0]", "qo + j * to[0]", None)}
      }}
    }}
    i += cnt;
  }}
}}
"""


def fill_template(tmpl: str, t: CType, d: Dialect = OPENCL_C) -> str:
    """An op-table template (``ops.UNARY``/``ops.BINARY``) filled in for dtype ``t``."""
    rs = t.comp if d.vectors else t.real  # OpenCL broadcasts a vector cast; CUDA cannot
    return tmpl.format(T=t.comp, W=t.wide or "ulong", K=t.key, V=d.vec_ctor(t.comp), RS=rs)


def out_type(op: str, t: CType) -> CType:
    """The CType of ``op``'s result on operands of ``t``."""
    if op in ops.BOOL_OUT:
        return BY_NP[np.dtype(np.bool_)]
    if t.kind == "c" and op in ops.REAL_OUT:
        return BY_NP[np.dtype(np.float32 if t.key == "c64" else np.float64)]
    return t


def op_kernel_source(op: str, t: CType, d: Dialect = OPENCL_C) -> str | None:
    """The kernels of elementwise ``op`` on ``t`` (None when the op is not computed for
    ``t``: core's dtype rules never ask for it)."""
    names: tuple[str, ...]
    ins: tuple[CType, ...]
    if op in ops.UNARY:
        tmpl, names, ins = ops.expr(ops.UNARY, op, t.kind), ("x",), (t,)
    else:
        tmpl, names, ins = ops.expr(ops.BINARY, op, t.kind), ("a", "b"), (t, t)
    if tmpl is None:
        return None
    return gen_kernel(f"ew_{op}_{t.key}", ins, out_type(op, t), fill_template(tmpl, t, d),
                      names, (True,) * len(ins), d)


def family_source(family: str, t: CType, d: Dialect = OPENCL_C) -> str:
    """All kernels of one family for dtype ``t`` (one program build)."""
    parts = [d.prelude, helpers(t, d)]
    for op, fam in ops.FAMILY.items():
        if fam == family:
            src = op_kernel_source(op, t, d)
            if src:
                parts.append(src)
    return "\n".join(parts)


def op_program_source(op: str, t: CType, d: Dialect = OPENCL_C) -> str:
    """A whole program holding only ``op``'s kernels on ``t`` (one build per op, for
    compilers that take seconds for a family)."""
    src = op_kernel_source(op, t, d)
    if src is None:
        raise KeyError(f"{op} is not computed for {t.np}")
    return "\n".join((d.prelude, helpers(t, d), src))


def cast_source(src: CType, dsts: Sequence[CType], d: Dialect = OPENCL_C) -> str:
    """The cast kernels ``cast_<src>_<dst>`` from ``src`` to each of ``dsts``."""
    parts = [d.prelude]
    for t in dsts:
        e = ops.cast_expr(src.kind, t.kind, t.c, t.comp, t.real, d.vec_ctor(t.c))
        parts.append(gen_kernel(f"cast_{src.key}_{t.key}", (src,), t, e, ("x",), (False,),
                                d))
    return "\n".join(parts)


def move_source(d: Dialect = OPENCL_C, only: str | None = None) -> str:
    """Copy (with scalar fill) and where, per item size (``only``: just the kernel of that
    name, for runtimes where one program per kernel compiles faster)."""
    parts = [d.prelude]
    cond = BY_NP[np.dtype(np.bool_)]
    for t in BITS.values():
        if only in (None, f"copy_{t.key}"):
            parts.append(gen_kernel(f"copy_{t.key}", (t,), t, "x", ("x",), (True,), d))
        if only in (None, f"where_{t.key}"):
            parts.append(gen_kernel(f"where_{t.key}", (cond, t, t), t, "c ? a : b",
                                    ("c", "a", "b"), (False, True, True), d))
    return "\n".join(parts)


#: the unsigned type of each integer width: two's complement makes +, -, *, ==, &... give
#: the same bits for signed and unsigned operands, so those ops share one kernel
UNSIGNED = {t.itemsize: t for t in BY_NP.values() if t.kind == "u"}


def kernel_type(op: str, t: CType) -> CType:
    """The CType whose kernel computes ``op`` on ``t`` (the unsigned one of the same width
    for sign-agnostic integer ops; scalars are still packed with ``t`` itself)."""
    return UNSIGNED[t.itemsize] if t.kind == "i" and op in ops.SIGN_AGNOSTIC else t


def canonical_cast(ts: CType, td: CType) -> tuple[CType, CType]:
    """A (source, destination) pair whose cast kernel produces the same bits: integer
    destinations up to 32 bits only keep low bits (signedness is irrelevant), and an
    integer source that is not widened only gives its low bits too (from a float, only
    destinations under 32 bits: a float converts to int32 and uint32 differently, see
    ``ops.cast_expr``). Fewer distinct kernels means less compile time (each costs
    ~0.1-0.2 s on PoCL)."""
    if td.kind in "iu" and (td.itemsize < (8 if ts.kind in "biu" else 4) or ts.kind in "biu"):
        td = UNSIGNED[td.itemsize]
    if ts.kind == "i" and (td.kind == "b" or (td.kind in "iu" and td.itemsize <= ts.itemsize)):
        ts = UNSIGNED[ts.itemsize]
    return ts, td


# ------------------------------------------------------------- the parameter struct
HEAD = struct.Struct("=6q2i8x")  # oo, o0, o1, o2, n, chunk, mode, pad (+ align to 16)
SLOT = 16


def pack_params(oo: int, offs: Sequence[int], n: int, chunk: int, mode: int,
                scalars: Sequence[bytes]) -> bytes:
    """The by-value parameter struct ``P`` of an elementwise kernel (see ``gen_kernel``)."""
    o = list(offs) + [0] * (3 - len(offs))
    return HEAD.pack(oo, o[0], o[1], o[2], n, chunk, mode, 0) + b"".join(
        sc + bytes(SLOT - len(sc)) for sc in scalars)
