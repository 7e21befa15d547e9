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
        return f"({dst_comp}){_x86_float_to_int(src, dst_c)}"
    return f"({dst_comp}){src}"


#: x86's truncating conversion to a 32/64-bit integer (cvttss2si/cvttsd2si): NaN and values
#: out of range give the integer minimum (the float literals are powers of two, exact in
#: float and double; the minimum itself is the sentinel, so comparing with it is safe)
_CVT32 = "(!({v} > -2147483648.0f && {v} < 2147483648.0f) ? (int)(-2147483647 - 1) : (int)({v}))"
_CVT64 = ("(!({v} > -9223372036854775808.0f && {v} < 9223372036854775808.0f) ? "
          "(long)(-9223372036854775807L - 1) : (long)({v}))")


def _x86_float_to_int(x: str, dst_c: str) -> str:
    """``x`` (a float) converted to integer type ``dst_c`` as NumPy's casts (and torch's
    CPU kernels) do on x86, so a value C leaves undefined (NaN, inf, out of range) gives the
    cpu backend's answer on every device: types of up to 32 bits through the 32-bit
    conversion and their low bits, 64-bit ones through the 64-bit one; unsigned 32/64-bit
    targets convert ``x - 2**31`` (``2**63``) and set the top bit from ``x`` upward."""
    if dst_c == "ulong":
        hi = _CVT64.format(v=f"({x} - 9223372036854775808.0f)")
        return (f"({x} >= 9223372036854775808.0f ? ((ulong){hi} ^ 0x8000000000000000UL) : "
                f"(ulong){_CVT64.format(v=x)})")
    if dst_c == "long":
        return _CVT64.format(v=x)
    if dst_c == "uint":
        hi = _CVT32.format(v=f"({x} - 2147483648.0f)")
        return (f"({x} >= 2147483648.0f ? ((uint){hi} ^ 0x80000000u) : "
                f"(uint){_CVT32.format(v=x)})")
    return _CVT32.format(v=x)
