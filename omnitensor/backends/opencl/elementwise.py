"""Generated elementwise kernels (unary, binary, where, casts, copies, fills) and their launch.

Each (op, dtype) has a few generic variants with one argument list, compiled only when
first launched: contiguous operands (each work-item runs one plain loop over a contiguous
chunk, which PoCL's compiler vectorizes), the same with some operands Python scalars (passed
by value, hoisted out of the loop), and any strides (the output is walked in C order, row by
row, with per-operand strides from a small cached layout buffer: any ndim, 0 for broadcast,
negative for flips, axes coalesced first). Nothing depends on the shape, so the number of
kernels stays small: ops of a family and dtype share one program build (``ewops.FAMILY``),
signed integers reuse the unsigned kernel where two's complement makes the bits identical,
copies and ``where`` depend only on the item size, and casts are canonicalised to
bit-equivalent pairs.
"""
from __future__ import annotations

import struct
from typing import Any, Sequence

import numpy as np

from ...errors import UnsupportedDTypeError
from . import ewops, program_cache
from .array import CLArray, coalesce, new
from .clsrc import PRELUDE, helpers
from .cltypes import BITS, BY_NP, CType
from .launch import run, set_bytes, set_mem, set_null

_STRIDED = 256


# ----------------------------------------------------------------------- codegen
def gen_kernel(name: str, ins: Sequence[CType], out: CType, expr: str,
               names: Sequence[str], scalar_ok: Sequence[bool]) -> str:
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
    args = [f"__global {out.c} * restrict o"]
    args += [f"__global const {t.c} * restrict p{i}" for i, t in enumerate(ins)]
    args += ["__global const long *L", f"P_{name} P"]
    cast = f"({out.comp})({expr})"
    unpack = ("long oo = P.oo, n = P.n, chunk = P.chunk; int mode = P.mode; " +
              " ".join(f"long o{i} = P.o{i}; {t.scalar_c} s{i} = P.s{i};"
                       for i, t in enumerate(ins)))

    def body(idx_of: Any, store_idx: str, mask: int | None) -> str:
        lines = []
        for i, (t, nm) in enumerate(zip(ins, names)):
            if mask is not None and mask >> i & 1:
                continue  # hoisted scalar
            ld = t.load(f"p{i}", idx_of(i))
            if mask is None and scalar_ok[i]:
                ld = f"((mode >> {i}) & 1) ? s{i} : {ld}"
            lines.append(f"{t.comp} {nm} = {ld};")
        lines.append(out.store("o", store_idx, cast))
        return " ".join(lines)

    head = f"""{", ".join(args)}) {{
  {unpack}
  long s = get_global_id(0) * chunk;
  long e = s + chunk < n ? s + chunk : n;
  if (s >= e) return;"""
    offs = " ".join(f"p{i} += o{i};" for i in range(k))
    parts = [typedef]
    for mask in range(1 << k):
        if any(mask >> i & 1 and not scalar_ok[i] for i in range(k)):
            continue
        if k > 1 and mask == (1 << k) - 1:  # never all scalars (core computes those)
            continue
        hoist = " ".join(f"{t.comp} {nm} = s{i};" for i, (t, nm) in enumerate(zip(ins, names))
                         if mask >> i & 1)
        kname = name if mask == 0 else f"{name}_m{mask}"
        parts.append(f"""
__kernel void {kname}({head}
  o += oo; {offs} {hoist}
  for (long i = s; i < e; i++) {{ {body(lambda i: 'i', 'i', mask)} }}
}}
""")
    strides = " ".join(f"__global const long *t{i} = L + {i + 2} * nd + 1;" for i in range(k))
    start = " ".join(f"long q{i} = o{i} + col * t{i}[0];" for i in range(k))
    walk = " ".join(f"q{i} += c * t{i}[d];" for i in range(k))
    unit = " && ".join(["to[0] == 1"] + [f"t{i}[0] == 1" for i in range(k)])
    parts.append(f"""
__kernel void {name}_s({head}
  int nd = (int)L[0];
  __global const long *sh = L + 1;
  __global const long *to = L + nd + 1;
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
      for (long j = 0; j < cnt; j++) {{ {body(lambda i: f"q{i} + j", "qo + j", None)} }}
    }} else {{
      for (long j = 0; j < cnt; j++) {{
        {body(lambda i: f"q{i} + j * t{i}[0]", "qo + j * to[0]", None)}
      }}
    }}
    i += cnt;
  }}
}}
""")
    return "".join(parts)


def _fill(tmpl: str, t: CType) -> str:
    return tmpl.format(T=t.comp, W=t.wide or "ulong", K=t.key)


def _out_type(op: str, t: CType) -> CType:
    if op in ewops.BOOL_OUT:
        return BY_NP[np.dtype(np.bool_)]
    if t.kind == "c" and op in ewops.REAL_OUT:
        return BY_NP[np.dtype(np.float32 if t.key == "c64" else np.float64)]
    return t


def _op_kernel_source(op: str, t: CType) -> str | None:
    names: tuple[str, ...]
    ins: tuple[CType, ...]
    if op in ewops.UNARY:
        tmpl, names, ins = ewops.expr(ewops.UNARY, op, t.kind), ("x",), (t,)
    else:
        tmpl, names, ins = ewops.expr(ewops.BINARY, op, t.kind), ("a", "b"), (t, t)
    if tmpl is None or (t.half and op in ewops.NO_HALF):
        return None
    return gen_kernel(f"ew_{op}_{t.key}", ins, _out_type(op, t), _fill(tmpl, t), names,
                      (True,) * len(ins))


def family_source(family: str, t: CType) -> str:
    """All kernels of one family for dtype ``t`` (one program build)."""
    parts = [PRELUDE, helpers(t)]
    for op, fam in ewops.FAMILY.items():
        if fam == family:
            src = _op_kernel_source(op, t)
            if src:
                parts.append(src)
    return "\n".join(parts)


def cast_source(src: CType, dsts: Sequence[CType]) -> str:
    parts = [PRELUDE]
    for d in dsts:
        e = ewops.cast_expr(src.kind, d.kind, d.c, d.comp, d.real)
        parts.append(gen_kernel(f"cast_{src.key}_{d.key}", (src,), d, e, ("x",), (False,)))
    return "\n".join(parts)


def move_source() -> str:
    """Copy (with scalar fill) and where, per item size."""
    parts = [PRELUDE]
    cond = BY_NP[np.dtype(np.bool_)]
    for t in BITS.values():
        parts.append(gen_kernel(f"copy_{t.key}", (t,), t, "x", ("x",), (True,)))
        parts.append(gen_kernel(f"where_{t.key}", (cond, t, t), t, "c ? a : b",
                                ("c", "a", "b"), (False, True, True)))
    return "\n".join(parts)


# ------------------------------------------------------------------------ launch
_HEAD = struct.Struct("=6q2i8x")  # oo, o0, o1, o2, n, chunk, mode, pad (+ align to 16)
_SLOT = 16


def pack_params(oo: int, offs: Sequence[int], n: int, chunk: int, mode: int,
                scalars: Sequence[bytes]) -> bytes:
    """The by-value parameter struct of an elementwise kernel (see ``gen_kernel``)."""
    o = list(offs) + [0] * (3 - len(offs))
    return _HEAD.pack(oo, o[0], o[1], o[2], n, chunk, mode, 0) + b"".join(
        sc + bytes(_SLOT - len(sc)) for sc in scalars)


def init_args(nin: int, cts: Sequence[CType]) -> Any:
    """A kernel initialiser: the layout pointer starts NULL (only strided launches set it;
    OpenCL keeps argument values between launches)."""
    def init(k: Any) -> None:
        set_null(k, 1 + nin)
    return init


def launch(st: Any, kern: Any, out: CLArray, ops: Sequence[Any], cts: Sequence[CType]
           ) -> CLArray:
    """Run an elementwise kernel pair ``kern = (contiguous, strided)``: ``out`` (array) <-
    ``ops`` (arrays or Python scalars, each scalar packed by the matching CType of ``cts``;
    raw ``bytes`` for bit containers)."""
    n = out.size
    if n == 0:
        return out
    mode = 0
    contig = out.contig
    od = out.data
    ops = list(ops)
    for i, x in enumerate(ops):
        if x.__class__ is CLArray:
            if x.data is od and (x.offset != out.offset or x.strides != out.strides):
                ops[i] = x = copy(x)  # partial overlap with the output: read a snapshot
            if not x.contig:
                contig = False
    mem = [0, od]
    offs = []
    scal = []
    strides = [out.strides]
    for i, x in enumerate(ops):
        if x.__class__ is CLArray:
            mem += (1 + i, x.data)
            offs.append(x.offset)
            scal.append(cts[i].zero)
            strides.append(x.strides)
        else:
            mode |= 1 << i
            # a readable stand-in of the same item size: the strided loop loads element 0
            # of it and discards the value
            mem += (1 + i, _stand_in(out, ops, cts[i].itemsize).data)
            offs.append(0)
            scal.append(cts[i].pack(x))
            strides.append((0,) * out.ndim)
    nin = len(ops)
    if contig:
        k = kern.get(mode)
    else:
        k = kern["s"]
        dims, sts = coalesce(out.shape, strides)
        key = (len(dims), *dims)
        for s in sts:
            key += tuple(s)
        mem += (1 + nin, st.layout(key))
        mode |= _STRIDED
    gsize, chunk = st.split(n)
    set_mem(k, tuple(mem))
    set_bytes(k, (2 + nin, pack_params(out.offset, offs, n, chunk, mode, scal)))
    run(st.queue, k, gsize, st.local)
    if not contig:
        set_null(k, 1 + nin)  # do not keep the layout buffer attached to the kernel
    return out


def _stand_in(out: CLArray, ops: Sequence[Any], itemsize: int) -> CLArray:
    for x in ops:
        if x.__class__ is CLArray and x.dtype.itemsize == itemsize:
            return x  # contiguous whenever the contiguous kernel runs
    if out.dtype.itemsize >= itemsize:
        return out
    raise AssertionError("no stand-in operand for a scalar")  # never for our op table


# --------------------------------------------------------------------- kernels
def op_kernel(st: Any, op: str, dtype: np.dtype) -> tuple[Any, Any, CType]:
    """(kernel, result dtype, input CType) of elementwise ``op`` on ``dtype``."""
    t = BY_NP.get(dtype)
    if t is None or _op_kernel_source(op, t) is None:
        raise UnsupportedDTypeError(
            f"{op}: the OpenCL backend does not compute {op} on {dtype}")
    st.check_dtype(dtype)
    fam = ewops.FAMILY[op]
    nin = 1 if op in ewops.UNARY else 2
    kt = _UNSIGNED[t.itemsize] if t.kind == "i" and op in ewops.SIGN_AGNOSTIC else t
    k = _pair(st, ("ew", fam, kt.key), f"ew_{op}_{kt.key}", lambda: family_source(fam, kt),
              (kt,) * nin)
    # scalars are packed with the operand's own CType: same bytes as the unsigned kernel's
    return k, _out_type(op, t).np, t


#: the unsigned type of each integer width: two's complement makes +, -, *, ==, &... give
#: the same bits for signed and unsigned operands, so those ops share one kernel
_UNSIGNED = {t.itemsize: t for t in BY_NP.values() if t.kind == "u"}


class _Kernels(dict):
    """The kernels of one generated op, keyed by launch mode (0: contiguous arrays, a
    scalar bit-mask, or "s": strided); each is created, and compiled, on first use."""

    __slots__ = ("st", "pkey", "name", "src", "init")
    st: Any
    pkey: Any
    name: str
    src: Any
    init: Any

    def __missing__(self, key: Any) -> Any:
        suffix = "" if key == 0 else ("_s" if key == "s" else f"_m{key}")
        k = program_cache.kernel(self.st, self.pkey, self.name + suffix, self.src,
                                 self.st.build_options, self.init)
        self[key] = k
        return k

    def get(self, key: Any) -> Any:  # type: ignore[override]  # dict.get would not call __missing__
        return self[key]


def _pair(st: Any, pkey: Any, name: str, src: Any, cts: Sequence[CType]) -> _Kernels:
    ks = _Kernels()
    ks.st, ks.pkey, ks.name, ks.src, ks.init = st, pkey, name, src, init_args(len(cts), cts)
    ks[0]  # noqa: B018 - create the common kernel object now (it compiles on first launch)
    return ks


def _move_kernel(st: Any, name: str, cts: Sequence[CType]) -> _Kernels:
    return _pair(st, ("move",), name, move_source, cts)


def copy_into(dst: CLArray, src: Any) -> CLArray:
    """``dst[...] = src`` (src an array of dst's shape and item size, or a scalar)."""
    st = dst.state
    t = BITS[dst.dtype.itemsize]
    k = _move_kernel(st, f"copy_{t.key}", (t,))
    if src.__class__ is not CLArray:
        src = np.asarray(src, dtype=dst.dtype).tobytes()
    return launch(st, k, dst, (src,), (t,))


def copy(x: CLArray) -> CLArray:
    """A C-contiguous copy."""
    return copy_into(new(x.state, x.shape, x.dtype), x)


def fill(out: CLArray, value: Any) -> CLArray:
    return copy_into(out, value)


def where(cond: CLArray, a: Any, b: Any, dtype: np.dtype, shape: tuple[int, ...]
          ) -> CLArray:
    st = cond.state
    t = BITS[dtype.itemsize]
    k = _move_kernel(st, f"where_{t.key}", (BITS[1], t, t))
    out = new(st, shape, dtype)
    ops: list[Any] = [cond]
    for v in (a, b):
        ops.append(v if v.__class__ is CLArray else np.asarray(v, dtype=dtype).tobytes())
    return launch(st, k, out, ops, (BITS[1], t, t))


def cast_kernel(st: Any, src: np.dtype, dst: np.dtype) -> Any:
    ts, td = _canonical_cast(BY_NP[src], BY_NP[dst])
    st.check_dtype(src)
    st.check_dtype(dst)
    return _pair(st, ("cast", ts.key), f"cast_{ts.key}_{td.key}",
                 lambda: cast_source(ts, [t for t in BY_NP.values() if st.supports(t.np)]),
                 (ts,))


def _canonical_cast(ts: CType, td: CType) -> tuple[CType, CType]:
    """A (source, destination) pair whose cast kernel produces the same bits: integer
    destinations up to 32 bits only keep low bits (signedness is irrelevant), and an
    integer source that is not widened only gives its low bits too. Fewer distinct
    kernels means less compile time (each costs ~0.1-0.2 s on PoCL)."""
    if td.kind in "iu" and (td.itemsize < 8 or ts.kind in "biu"):
        td = _UNSIGNED[td.itemsize]
    if ts.kind == "i" and (td.kind == "b" or (td.kind in "iu" and td.itemsize <= ts.itemsize)):
        ts = _UNSIGNED[ts.itemsize]
    return ts, td


def astype(x: CLArray, dtype: np.dtype) -> CLArray:
    st = x.state
    out = new(st, x.shape, dtype)
    if x.dtype == dtype or (x.dtype.kind in "iu" and dtype.kind in "iu"
                            and x.dtype.itemsize == dtype.itemsize):
        return copy_into(out, x)  # same bits
    return launch(st, cast_kernel(st, x.dtype, dtype), out, (x,), (BY_NP[x.dtype],))
