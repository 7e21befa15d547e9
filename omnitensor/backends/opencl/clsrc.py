"""OpenCL C helper functions shared by the generated kernels, per type.

Semantics follow NumPy exactly where the backend contract asks for it: Python-style integer
``//`` and ``%`` (division by zero gives 0 and never traps, ``MIN // -1`` wraps), NumPy's
shift rules for counts outside ``[0, bits)``, NumPy's float ``floor_divide``/``remainder``
(``npy_divmod``) and ``logaddexp``, and complex functions written with Kahan's formulas
(accurate away from and near the branch points), Smith's division and a robust ``tanh``.

Signed integer arithmetic is done in the unsigned type of the same width and converted back,
because signed overflow is undefined behaviour in OpenCL C while NumPy and torch wrap.
"""
from __future__ import annotations

from functools import lru_cache

from .cltypes import CType

PRELUDE = """
// NumPy rounds a*b+c twice; contraction into fma would change results
#pragma OPENCL FP_CONTRACT OFF
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
"""

_SIGNED_INT = """
inline {T} fdiv_{K}({T} a, {T} b) {{
  if (b == 0) return 0;
  if (b == ({T})-1) return ({T})(0 - ({W})a);
  {T} q = a / b; {T} r = a - q * b;
  if (r != 0 && ((r < 0) != (b < 0))) q -= 1;
  return q;
}}
inline {T} fmod_{K}({T} a, {T} b) {{
  if (b == 0 || b == ({T})-1) return 0;
  {T} r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}}
inline {T} ipow_{K}({T} a, {T} b) {{
  if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
  {W} r = 1, x = ({W})a; {T} e = b;
  while (e) {{ if (e & 1) r *= x; x *= x; e >>= 1; }}
  return ({T})r;
}}
inline {T} shl_{K}({T} a, {T} b) {{
  return (b >= 0 && b < {BITS}) ? ({T})(({W})a << b) : ({T})0;
}}
inline {T} shr_{K}({T} a, {T} b) {{
  return (b >= 0 && b < {BITS}) ? ({T})(a >> b) : (a < 0 ? ({T})-1 : ({T})0);
}}
"""

_UNSIGNED_INT = """
inline {T} fdiv_{K}({T} a, {T} b) {{ return b == 0 ? ({T})0 : ({T})(a / b); }}
inline {T} fmod_{K}({T} a, {T} b) {{ return b == 0 ? ({T})0 : ({T})(a % b); }}
inline {T} ipow_{K}({T} a, {T} b) {{
  {W} r = 1, x = ({W})a; {T} e = b;
  while (e) {{ if (e & 1) r *= x; x *= x; e >>= 1; }}
  return ({T})r;
}}
inline {T} shl_{K}({T} a, {T} b) {{ return b < {BITS} ? ({T})(({W})a << b) : ({T})0; }}
inline {T} shr_{K}({T} a, {T} b) {{ return b < {BITS} ? ({T})(a >> b) : ({T})0; }}
"""

_FLOAT = """
inline {R} fdiv_{K}({R} a, {R} b) {{
  if (b == 0) return a / b;
  {R} mod = fmod(a, b);
  {R} div = (a - mod) / b;
  if (mod != 0) {{ if ((b < 0) != (mod < 0)) {{ mod += b; div -= 1; }} }}
  {R} fd;
  if (div != 0) {{ fd = floor(div); if (div - fd > ({R})0.5) fd += 1; }}
  else {{ fd = copysign(({R})0, a / b); }}
  return fd;
}}
inline {R} fmod_{K}({R} a, {R} b) {{
  {R} mod = fmod(a, b);
  if (b == 0) return mod;
  if (mod != 0) {{ if ((b < 0) != (mod < 0)) mod += b; }}
  else {{ mod = copysign(({R})0, b); }}
  return mod;
}}
inline {R} logaddexp_{K}({R} x, {R} y) {{
  if (x == y) return x + ({R})0.693147180559945309417232121458176568;
  {R} t = x - y;
  if (t > 0) return x + log1p(exp(-t));
  if (t <= 0) return y + log1p(exp(t));
  return t;
}}
// PoCL does not inline builtins (isnan would be a call per element): NaN is x != x
inline {R} sign_{K}({R} x) {{ return x != x ? x : ({R})((x > 0) - (x < 0)); }}
inline {R} max_{K}({R} a, {R} b) {{ return (a != a || a > b) ? a : b; }}
inline {R} min_{K}({R} a, {R} b) {{ return (a != a || a < b) ? a : b; }}
"""

_COMPLEX = """
inline {C} {P}_mul({C} a, {C} b) {{ return ({C})(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }}
inline {C} {P}_div({C} a, {C} b) {{
  {R} ar = fabs(b.x), ai = fabs(b.y);
  if (ar >= ai) {{
    if (ar == 0 && ai == 0) return ({C})(a.x / ar, a.y / ai);
    {R} rat = b.y / b.x, scl = ({R})1 / (b.x + b.y * rat);
    return ({C})((a.x + a.y * rat) * scl, (a.y - a.x * rat) * scl);
  }}
  {R} rat = b.x / b.y, scl = ({R})1 / (b.y + b.x * rat);
  return ({C})((a.x * rat + a.y) * scl, (a.y * rat - a.x) * scl);
}}
inline {R} {P}_abs({C} a) {{ return hypot(a.x, a.y); }}
inline {C} {P}_exp({C} a) {{
  if (a.y == 0) return ({C})(exp(a.x), a.y);
  {R} e = exp(a.x); return ({C})(e * cos(a.y), e * sin(a.y));
}}
inline {C} {P}_expm1({C} a) {{
  {R} s = sin(a.y * ({R})0.5);
  return ({C})(expm1(a.x) * cos(a.y) - 2 * s * s, exp(a.x) * sin(a.y));
}}
inline {C} {P}_log({C} a) {{ return ({C})(log(hypot(a.x, a.y)), atan2(a.y, a.x)); }}
inline {C} {P}_log1p({C} a) {{
  {R} re;
  if (fabs(a.x) < ({R})0.5 && fabs(a.y) < ({R})0.5) re = ({R})0.5 * log1p(a.x * (2 + a.x) + a.y * a.y);
  else re = log(hypot(1 + a.x, a.y));
  return ({C})(re, atan2(a.y, 1 + a.x));
}}
inline {C} {P}_sqrt({C} a) {{
  if (a.x == 0 && a.y == 0) return ({C})(0, a.y);
  if (isinf(a.y)) return ({C})(INFINITY, a.y);
  {R} t = sqrt((fabs(a.x) + hypot(a.x, a.y)) * ({R})0.5);
  if (a.x >= 0) return ({C})(t, a.y / (2 * t));
  return ({C})(fabs(a.y) / (2 * t), copysign(t, a.y));
}}
inline {C} {P}_sin({C} a) {{ return ({C})(sin(a.x) * cosh(a.y), cos(a.x) * sinh(a.y)); }}
inline {C} {P}_cos({C} a) {{ return ({C})(cos(a.x) * cosh(a.y), -sin(a.x) * sinh(a.y)); }}
inline {C} {P}_sinh({C} a) {{ return ({C})(sinh(a.x) * cos(a.y), cosh(a.x) * sin(a.y)); }}
inline {C} {P}_cosh({C} a) {{ return ({C})(cosh(a.x) * cos(a.y), sinh(a.x) * sin(a.y)); }}
inline {C} {P}_tanh({C} a) {{
  if (fabs(a.x) > {TANH_CUT}) {{
    {R} e = exp(-2 * fabs(a.x));
    return ({C})(copysign(({R})1, a.x), 4 * sin(a.y) * cos(a.y) * e);
  }}
  {R} t = tan(a.y), beta = 1 + t * t, s = sinh(a.x), rho = sqrt(1 + s * s);
  {R} den = 1 + beta * s * s;
  return ({C})(beta * rho * s / den, t / den);
}}
inline {C} {P}_tan({C} a) {{ {C} w = {P}_tanh(({C})(-a.y, a.x)); return ({C})(w.y, -w.x); }}
inline {C} {P}_asin({C} z) {{
  {C} s1 = {P}_sqrt(({C})(1 - z.x, -z.y)), s2 = {P}_sqrt(({C})(1 + z.x, z.y));
  return ({C})(atan2(z.x, s1.x * s2.x - s1.y * s2.y), asinh(s1.x * s2.y - s1.y * s2.x));
}}
inline {C} {P}_acos({C} z) {{
  {C} s1 = {P}_sqrt(({C})(1 - z.x, -z.y)), s2 = {P}_sqrt(({C})(1 + z.x, z.y));
  return ({C})(2 * atan2(s1.x, s2.x), asinh(s2.x * s1.y - s2.y * s1.x));
}}
inline {C} {P}_acosh({C} z) {{
  {C} s1 = {P}_sqrt(({C})(z.x - 1, z.y)), s2 = {P}_sqrt(({C})(z.x + 1, z.y));
  return ({C})(asinh(s1.x * s2.x + s1.y * s2.y), 2 * atan2(s1.y, s2.x));
}}
inline {C} {P}_asinh({C} z) {{ {C} w = {P}_asin(({C})(-z.y, z.x)); return ({C})(w.y, -w.x); }}
inline {C} {P}_atanh({C} z) {{
  {R} x = z.x, y = z.y, u = 1 - x;
  return ({C})(({R})0.25 * log1p(4 * x / (u * u + y * y)),
               ({R})0.5 * atan2(2 * y, u * (1 + x) - y * y));
}}
inline {C} {P}_atan({C} z) {{ {C} w = {P}_atanh(({C})(-z.y, z.x)); return ({C})(w.y, -w.x); }}
inline {C} {P}_pow({C} a, {C} b) {{
  if (b.x == 0 && b.y == 0) return ({C})(1, 0);
  if (a.x == 0 && a.y == 0) {{
    if (b.x > 0 && b.y == 0) return ({C})(0, 0);
    return ({C})(NAN, NAN);
  }}
  if (b.y == 0 && b.x == rint(b.x) && fabs(b.x) < 100) {{
    long n = (long)b.x; long e = n < 0 ? -n : n;
    {C} r = ({C})(1, 0), x = a;
    while (e) {{ if (e & 1) r = {P}_mul(r, x); x = {P}_mul(x, x); e >>= 1; }}
    return n < 0 ? {P}_div(({C})(1, 0), r) : r;
  }}
  return {P}_exp({P}_mul(b, {P}_log(a)));
}}
inline {C} {P}_sign({C} a) {{
  if (isnan(a.x) || isnan(a.y)) return ({C})(NAN, NAN);
  {R} m = hypot(a.x, a.y);
  return m == 0 ? ({C})(0, 0) : ({C})(a.x / m, a.y / m);
}}
"""


@lru_cache(maxsize=None)
def helpers(t: CType) -> str:
    """The helper functions kernels of dtype ``t`` may call (empty for most)."""
    if t.kind == "i":
        return _SIGNED_INT.format(T=t.c, K=t.key, W=t.wide, BITS=8 * t.itemsize)
    if t.kind == "u":
        return _UNSIGNED_INT.format(T=t.c, K=t.key, W=t.wide, BITS=8 * t.itemsize)
    if t.kind == "f":
        return _FLOAT.format(R=t.comp, K=t.key)
    if t.kind == "c":
        cut = "9" if t.real == "float" else "22"
        return _COMPLEX.format(C=t.c, R=t.real, P=t.key, TANH_CUT=cut)
    return ""
