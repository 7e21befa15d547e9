"""The elementwise op table: one C expression per (op, dtype kind), for every C dialect,
read from the primitive table (:mod:`.primitives`, one row per primitive).

Unary expressions read ``x``, binary ones ``a`` and ``b``, all in the compute type. Template
fields: ``{T}`` compute type, ``{W}`` wide unsigned type (wrapping integer math), ``{K}`` the
dtype key (helper prefix: ``fdiv_i32``, ``c64_exp``), ``{V}`` the complex literal
constructor (``(float2)`` in OpenCL C, ``make_float2`` in CUDA), ``{RS}`` the type a real
constant multiplying a complex value is cast to. Kinds: ``b`` bool (uchar 0/1), ``i``
signed, ``u`` unsigned, ``f`` real float (float16 computes in float), ``c`` complex.
A kind missing from a row means the backend does not compute that op for that kind (core's
dtype rules never ask for it).

``BOOL_OUT`` and ``REAL_OUT`` say the result dtype (bool for predicates, the real dtype for
abs/real/imag of complex; else the operands'). ``FAMILY`` groups ops into programs: one
program per (family, dtype) is built on first use, so a PoCL build (~0.2 s) covers several
ops.
"""
from __future__ import annotations

from .primitives import PRIMITIVES, where

#: the C templates of each primitive of one operand (``x``) and of two (``a``, ``b``), by kind
UNARY: dict[str, dict[str, str]] = {p.name: p.c for p in PRIMITIVES if p.arity == 1}
BINARY: dict[str, dict[str, str]] = {p.name: p.c for p in PRIMITIVES if p.arity == 2}

#: ops whose result is bool
BOOL_OUT = where(out="bool")
#: ops whose result on complex input is the real dtype
REAL_OUT = where(out="real")
#: integer ops whose result bits do not depend on signedness (two's complement), so int*
#: operands run the uint* kernel of the same width
SIGN_AGNOSTIC = where(sign_agnostic=True)
#: float16 ops that would be wrong computed in float and rounded (need half's own ulp):
#: the elementwise kernels call a float16 helper (``helpers._HALF``), fused ones do not
NO_HALF = where(no_half=True)
#: program families: ops of one family and one dtype share a program (in table order)
FAMILY: dict[str, str] = {p.name: p.family for p in PRIMITIVES}


def expr(table: dict[str, dict[str, str]], op: str, kind: str) -> str | None:
    """The raw expression template of ``op`` for ``kind`` (None when not computed)."""
    row = table.get(op)
    return None if row is None else row.get(kind)


# ------------------------------------------------------------------------- casts
def cast_expr(src_kind: str, dst_kind: str, dst_c: str, dst_comp: str, dst_real: str,
              vec_ctor: str | None = None) -> str:
    """C expression converting ``x`` (source compute type) to the destination compute
    type, as C casts do (float -> int truncates through int64; anything -> bool is != 0;
    complex -> real keeps the real part). ``vec_ctor`` is the dialect's complex literal
    constructor (OpenCL's ``(float2)`` by default)."""
    mk = vec_ctor if vec_ctor is not None else f"({dst_c})"
    if dst_kind == "b":
        return "(x.x != 0 || x.y != 0)" if src_kind == "c" else "(x != 0)"
    src = "x.x" if src_kind == "c" else "x"
    if dst_kind == "c":
        if src_kind == "c":
            return f"{mk}(({dst_real})x.x, ({dst_real})x.y)"
        return f"{mk}(({dst_real}){src}, 0)"
    if dst_kind in "iu" and src_kind in "fc":
        if dst_c == "ulong":
            return (f"({src} >= 9223372036854775808.0 ? (ulong){src} : "
                    f"(ulong)(long){src})")
        return f"({dst_comp})(long){src}"
    return f"({dst_comp}){src}"
