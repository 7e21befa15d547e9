"""NumPy-exact helper functions shared by the generated kernels, per type and dialect.

Semantics follow NumPy exactly where the backend contract asks for it: Python-style integer
``//`` and ``%`` (division by zero gives 0 and never traps, ``MIN // -1`` wraps), NumPy's
shift rules for counts outside ``[0, bits)``, NumPy's float ``floor_divide``/``remainder``
(``npy_divmod``) and ``logaddexp``, and complex functions written with Kahan's formulas
(accurate away from and near the branch points), Smith's division and a robust ``tanh``.
Complex functions return C99 Annex G's values (the Array API's special cases) when a part
is infinite or NaN, through one rarely-taken branch per function; where C99 leaves a sign
unspecified they pick glibc's (NumPy's on Linux), and ``tanh(+-inf + iy)`` has the sign of
y on its zero as the Array API asks. ``exp``/``cosh``/``sinh`` scale by ``exp(x/2)**2``
where ``exp(x)`` alone would overflow but the result does not.

Signed integer arithmetic is done in the unsigned type of the same width and converted back,
because signed overflow is undefined behaviour in OpenCL C while NumPy and torch wrap.
"""
from __future__ import annotations

from functools import lru_cache

from .ctype import CType
from .dialect import OPENCL_C, Dialect


_SIGNED_INT = """
{FN} {T} fdiv_{K}({T} a, {T} b) {{
  if (b == 0) return 0;
  if (b == ({T})-1) return ({T})(0 - ({W})a);
  {T} q = a / b; {T} r = a - q * b;
  if (r != 0 && ((r < 0) != (b < 0))) q -= 1;
  return q;
}}
{FN} {T} fmod_{K}({T} a, {T} b) {{
  if (b == 0 || b == ({T})-1) return 0;
  {T} r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}}
{FN} {T} ipow_{K}({T} a, {T} b) {{
  if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
  {W} r = 1, x = ({W})a; {T} e = b;
  while (e) {{ if (e & 1) r *= x; x *= x; e >>= 1; }}
  return ({T})r;
}}
{FN} {T} shl_{K}({T} a, {T} b) {{
  return (b >= 0 && b < {BITS}) ? ({T})(({W})a << b) : ({T})0;
}}
{FN} {T} shr_{K}({T} a, {T} b) {{
  return (b >= 0 && b < {BITS}) ? ({T})(a >> b) : (a < 0 ? ({T})-1 : ({T})0);
}}
"""

_UNSIGNED_INT = """
{FN} {T} fdiv_{K}({T} a, {T} b) {{ return b == 0 ? ({T})0 : ({T})(a / b); }}
{FN} {T} fmod_{K}({T} a, {T} b) {{ return b == 0 ? ({T})0 : ({T})(a % b); }}
{FN} {T} ipow_{K}({T} a, {T} b) {{
  {W} r = 1, x = ({W})a; {T} e = b;
  while (e) {{ if (e & 1) r *= x; x *= x; e >>= 1; }}
  return ({T})r;
}}
{FN} {T} shl_{K}({T} a, {T} b) {{ return b < {BITS} ? ({T})(({W})a << b) : ({T})0; }}
{FN} {T} shr_{K}({T} a, {T} b) {{ return b < {BITS} ? ({T})(a >> b) : ({T})0; }}
"""

_FLOAT = """
{FN} {R} fdiv_{K}({R} a, {R} b) {{
  if (b == 0) return a / b;
  {R} mod = fmod(a, b);
  {R} div = (a - mod) / b;
  if (mod != 0) {{ if ((b < 0) != (mod < 0)) {{ mod += b; div -= 1; }} }}
  {R} fd;
  if (div != 0) {{ fd = floor(div); if (div - fd > ({R})0.5) fd += 1; }}
  else {{ fd = copysign(({R})0, a / b); }}
  return fd;
}}
{FN} {R} fmod_{K}({R} a, {R} b) {{
  {R} mod = fmod(a, b);
  if (b == 0) return mod;
  if (mod != 0) {{ if ((b < 0) != (mod < 0)) mod += b; }}
  else {{ mod = copysign(({R})0, b); }}
  return mod;
}}
{FN} {R} logaddexp_{K}({R} x, {R} y) {{
  if (x == y) return x + ({R})0.693147180559945309417232121458176568;
  {R} t = x - y;
  if (t > 0) return x + log1p(exp(-t));
  if (t <= 0) return y + log1p(exp(t));
  return t;
}}
// PoCL does not inline builtins (isnan would be a call per element): NaN is x != x
{FN} {R} sign_{K}({R} x) {{ return x != x ? x : ({R})((x > 0) - (x < 0)); }}
{FN} {R} max_{K}({R} a, {R} b) {{ return (a != a || a > b) ? a : b; }}
{FN} {R} min_{K}({R} a, {R} b) {{ return (a != a || a < b) ? a : b; }}
"""

_COMPLEX = """
{MUL}
{FN} {C} {P}_div({C} a, {C} b) {{
  {R} ar = fabs(b.x), ai = fabs(b.y);
  if (ar >= ai) {{
    if (ar == 0 && ai == 0) return {MK}(a.x / ar, a.y / ai);
    {R} rat = b.y / b.x, scl = ({R})1 / (b.x + b.y * rat);
    return {MK}((a.x + a.y * rat) * scl, (a.y - a.x * rat) * scl);
  }}
  {R} rat = b.x / b.y, scl = ({R})1 / (b.y + b.x * rat);
  return {MK}((a.x * rat + a.y) * scl, (a.y * rat - a.x) * scl);
}}
{FN} {R} {P}_abs({C} a) {{ return hypot(a.x, a.y); }}
// Annex G special values: each function takes one rarely-taken branch when a part is
// infinite or NaN (v - v != 0); the finite path keeps its accurate formula. Signs left
// unspecified by C99 follow glibc (NumPy's results).
{FN} int {P}_fin({C} a) {{ return (a.x - a.x == 0) & (a.y - a.y == 0); }}
{FN} int {P}_inf({R} v) {{ return v == INFINITY || v == -INFINITY; }}
{FN} {C} {P}_exp({C} a) {{
  if (a.y == 0) return {MK}(exp(a.x), a.y);
  if (a.y - a.y != 0) {{                        // y is +-inf or NaN
    if (a.x == -INFINITY) return {MK}(0, a.y == a.y ? copysign(({R})0, a.y) : ({R})0);
    if (a.x == INFINITY) return {MK}(a.x, a.y - a.y);
    return {MK}(a.y - a.y, a.y - a.y);
  }}
  if (a.x > {OVF}) {{                           // exp(x) overflows, the product may not
    {R} h = exp(a.x * ({R})0.5);
    return {MK}((h * cos(a.y)) * h, (h * sin(a.y)) * h);
  }}
  {R} e = exp(a.x); return {MK}(e * cos(a.y), e * sin(a.y));
}}
{FN} {C} {P}_expm1({C} a) {{
  if (!{P}_fin(a)) {{ {C} e = {P}_exp(a); return {MK}(e.x - 1, e.y); }}
  if (a.y == 0) return {MK}(expm1(a.x) + 0, a.y);   // +0 for -0 + 0j (Array API)
  if (a.x > {OVF}) {{ {C} e = {P}_exp(a); return {MK}(e.x - 1, e.y); }}
  {R} s = sin(a.y * ({R})0.5);
  return {MK}(expm1(a.x) * cos(a.y) - 2 * s * s, exp(a.x) * sin(a.y));
}}
{FN} {C} {P}_log({C} a) {{ return {MK}(log(hypot(a.x, a.y)), atan2(a.y, a.x)); }}
{FN} {C} {P}_log1p({C} a) {{
  {R} re;
  if (fabs(a.x) < ({R})0.5 && fabs(a.y) < ({R})0.5) re = ({R})0.5 * log1p(a.x * (2 + a.x) + a.y * a.y);
  else re = log(hypot(1 + a.x, a.y));
  return {MK}(re, atan2(a.y, 1 + a.x));
}}
{FN} {C} {P}_sqrt({C} a) {{
  if (a.x == 0 && a.y == 0) return {MK}(0, a.y);
  if (isinf(a.y)) return {MK}(INFINITY, a.y);
  {R} t = sqrt((fabs(a.x) + hypot(a.x, a.y)) * ({R})0.5);
  if (a.x >= 0) return {MK}(t, a.y / (2 * t));
  return {MK}(fabs(a.y) / (2 * t), copysign(t, a.y));
}}
// sinh(+-inf + i inf) is +inf + NaN j and sin(+-inf +- i inf) is NaN + inf j in glibc
// and NumPy (signs unspecified by C99): ``for_sin`` picks the latter for sin's rotation
{FN} {C} {P}_sinh_k({C} a, int for_sin) {{
  {R} x = a.x, y = a.y;
  if ({P}_fin(a)) {{
    if (y == 0) return {MK}(sinh(x), y);
    if (fabs(x) < {OVF}) return {MK}(sinh(x) * cos(y), cosh(x) * sin(y));
    {R} h = exp(fabs(x) * ({R})0.5), re = (({R})0.5 * h * cos(y)) * h;
    return {MK}(x < 0 ? -re : re, (({R})0.5 * h * sin(y)) * h);
  }}
  if (x == 0) return {MK}(x, y - y);                       // +-0 + NaN j
  if (y == 0) return {MK}(x, y);                           // +-inf + 0j, NaN + 0j
  if (x - x == 0) return {MK}(y - y, y - y);               // finite x: NaN + NaN j
  if ({P}_inf(x)) {{
    if (y - y != 0) return {MK}(for_sin ? -INFINITY : INFINITY, y - y);  // inf + NaN j
    return {MK}(x * cos(y), INFINITY * sin(y));            // +-inf cis(y)
  }}
  return {MK}(x, x);                                       // NaN + NaN j
}}
{FN} {C} {P}_cosh({C} a) {{
  {R} x = a.x, y = a.y;
  if ({P}_fin(a)) {{
    if (y == 0) return {MK}(cosh(x), x * y);
    if (fabs(x) < {OVF}) return {MK}(cosh(x) * cos(y), sinh(x) * sin(y));
    {R} h = exp(fabs(x) * ({R})0.5), im = (({R})0.5 * h * sin(y)) * h;
    return {MK}((({R})0.5 * h * cos(y)) * h, x < 0 ? -im : im);
  }}
  if (x - x == 0) return {MK}(y - y, x == 0 ? ({R})0 : y - y);  // NaN + 0j / NaN + NaN j
  if ({P}_inf(x)) {{
    if (y == 0) return {MK}(INFINITY, x < 0 ? -y : y);     // inf + 0j
    if (y - y != 0) return {MK}(INFINITY, y - y);          // inf + NaN j
    return {MK}(INFINITY * cos(y), x * sin(y));            // inf cis(y)
  }}
  return {MK}(x, y == 0 ? y : x);                          // NaN + 0j, NaN + NaN j
}}
// sin z = -i sinh(iz), cos z = cosh(iz): the special values follow (C99 G.6)
{FN} {C} {P}_sinh({C} a) {{ return {P}_sinh_k(a, 0); }}
{FN} {C} {P}_sin({C} a) {{ {C} w = {P}_sinh_k({MK}(-a.y, a.x), 1); return {MK}(w.y, -w.x); }}
{FN} {C} {P}_cos({C} a) {{ return {P}_cosh({MK}(-a.y, a.x)); }}
// tanh(+-inf + iy) is +-1 + 0j with the sign of y (Array API); C99 (and tan through
// tan z = -i tanh(iz), as in NumPy) has the sign of sin(2y): ``c99`` selects it
{FN} {C} {P}_tanh_k({C} a, int c99) {{
  if (!{P}_fin(a)) {{
    if ({P}_inf(a.x)) return {MK}(copysign(({R})1, a.x),
        copysign(({R})0, c99 && a.y - a.y == 0 ? sin(a.y) * cos(a.y) : a.y));
    if (a.y == 0) return a;                                 // NaN + 0j
    {R} n = a.x + (a.y - a.y);                              // NaN
    return {MK}(a.x == 0 ? a.x : n, n);                    // +-0 + NaN j, NaN + NaN j
  }}
  if (fabs(a.x) > {TANH_CUT}) {{
    {R} e = exp(-2 * fabs(a.x));
    return {MK}(copysign(({R})1, a.x), 4 * sin(a.y) * cos(a.y) * e);
  }}
  {R} t = tan(a.y), beta = 1 + t * t, s = sinh(a.x), rho = sqrt(1 + s * s);
  {R} den = 1 + beta * s * s;
  return {MK}(beta * rho * s / den, t / den);
}}
{FN} {C} {P}_tanh({C} a) {{ return {P}_tanh_k(a, 0); }}
{FN} {C} {P}_tan({C} a) {{ {C} w = {P}_tanh_k({MK}(-a.y, a.x), 1); return {MK}(w.y, -w.x); }}
// inverse functions: Kahan's formulas for finite z, C99's values otherwise
{FN} {C} {P}_asinh({C} z) {{
  {R} x = z.x, y = z.y;
  if ({P}_fin(z)) {{                                         // -i asin(iz) (Kahan)
    {C} s1 = {P}_sqrt({MK}(1 + y, -x)), s2 = {P}_sqrt({MK}(1 - y, x));
    return {MK}(asinh(s1.x * s2.y - s1.y * s2.x), -atan2(-y, s1.x * s2.x - s1.y * s2.y));
  }}
  if ({P}_inf(y)) return {MK}(copysign(({R})INFINITY, x),
                               x != x ? x : copysign(x - x == 0 ? {PI_2} : {PI_4}, y));
  if (x != x) return {MK}(x, y == 0 ? y : x);              // NaN + 0j, NaN + NaN j
  if ({P}_inf(x)) return {MK}(x, y == y ? copysign(({R})0, y) : y);
  return {MK}(y, y);                                       // finite x, NaN y
}}
{FN} {C} {P}_asin({C} z) {{
  if ({P}_fin(z)) {{
    {C} s1 = {P}_sqrt({MK}(1 - z.x, -z.y)), s2 = {P}_sqrt({MK}(1 + z.x, z.y));
    return {MK}(atan2(z.x, s1.x * s2.x - s1.y * s2.y), asinh(s1.x * s2.y - s1.y * s2.x));
  }}
  {C} w = {P}_asinh({MK}(-z.y, z.x)); return {MK}(w.y, -w.x);
}}
{FN} {C} {P}_acos({C} z) {{
  if ({P}_fin(z)) {{
    {C} s1 = {P}_sqrt({MK}(1 - z.x, -z.y)), s2 = {P}_sqrt({MK}(1 + z.x, z.y));
    return {MK}(2 * atan2(s1.x, s2.x), asinh(s2.x * s1.y - s2.y * s1.x));
  }}
  {C} w = {P}_asin(z);                                      // pi/2 - asin z
  return {MK}({PI_2} - w.x + 0, -w.y);
}}
{FN} {C} {P}_acosh({C} z) {{
  {R} x = z.x, y = z.y;
  if ({P}_fin(z)) {{
    {C} s1 = {P}_sqrt({MK}(x - 1, y)), s2 = {P}_sqrt({MK}(x + 1, y));
    return {MK}(asinh(s1.x * s2.x + s1.y * s2.y), 2 * atan2(s1.y, s2.x));
  }}
  if ({P}_inf(y)) return {MK}(INFINITY, x != x ? x :
      copysign({P}_inf(x) ? (x < 0 ? {PI3_4} : {PI_4}) : {PI_2}, y));
  if ({P}_inf(x)) return {MK}(INFINITY, y != y ? y : copysign(x < 0 ? {PI} : 0, y));
  return {MK}(x + y, x == 0 ? {PI_2} : x + y);             // NaN + pi/2 j, NaN + NaN j
}}
{FN} {C} {P}_atanh({C} z) {{
  {R} x = z.x, y = z.y;
  if ({P}_fin(z)) {{
    {R} ax = fabs(x), ay = fabs(y);
    if (ax > {BIG} || ay > {BIG}) {{                          // atanh z ~ 1/z + i pi/2
      {R} h = hypot(x * ({R})0.5, y * ({R})0.5);
      return {MK}(ay <= 1 ? 1 / x : (ax <= 1 ? x / y / y : x / h / h / 4),
                   copysign({PI_2}, y));
    }}
    {R} u = 1 - x, y2 = y * y, d = u * u + y2, n = (1 + x) * (1 + x) + y2, re;
    if (ax == 1 && y2 == 0 && y != 0)                       // y*y underflows
      re = copysign(({R})0.5, x) * ({LN2} - log(ay));
    else if (n < ({R})0.5 * d) re = ({R})0.25 * log(n / d);  // log1p would cancel
    else re = ({R})0.25 * log1p(4 * x / d);
    return {MK}(re, ({R})0.5 * atan2(2 * y, u * (1 + x) - y2));
  }}
  if ({P}_inf(y)) return {MK}(copysign(({R})0, x), copysign({PI_2}, y));
  if ({P}_inf(x) || x == 0)
    return {MK}(copysign(({R})0, x), y == y ? copysign({PI_2}, y) : y);
  return {MK}(x != x ? x : y, x != x ? x : y);             // NaN + NaN j
}}
{FN} {C} {P}_atan({C} z) {{ {C} w = {P}_atanh({MK}(-z.y, z.x)); return {MK}(w.y, -w.x); }}
{FN} {C} {P}_pow({C} a, {C} b) {{
  if (b.x == 0 && b.y == 0) return {MK}(1, 0);
  if (a.x == 0 && a.y == 0) {{
    if (b.x > 0 && b.y == 0) return {MK}(0, 0);
    return {MK}(NAN, NAN);
  }}
  if (b.y == 0 && b.x == rint(b.x) && fabs(b.x) < 100) {{
    long n = (long)b.x; long e = n < 0 ? -n : n;
    {C} r = {MK}(1, 0), x = a;
    while (e) {{ if (e & 1) r = {P}_mul(r, x); x = {P}_mul(x, x); e >>= 1; }}
    return n < 0 ? {P}_div({MK}(1, 0), r) : r;
  }}
  return {P}_exp({P}_mul(b, {P}_log(a)));
}}
{FN} {C} {P}_sign({C} a) {{
  if (isnan(a.x) || isnan(a.y)) return {MK}(NAN, NAN);
  {R} m = hypot(a.x, a.y);
  return m == 0 ? {MK}(0, 0) : {MK}(a.x / m, a.y / m);
}}
"""


_CONSTS = {"PI": "3.14159265358979323846264338327950288",
           "PI_2": "1.57079632679489661923132169163975144",
           "PI_4": "0.785398163397448309615660845819875721",
           "PI3_4": "2.35619449019234492884698253745962716",
           "LN2": "0.693147180559945309417232121458176568"}


_MUL = ("{FN} {C} {P}_mul({C} a, {C} b) {{ "
        "return {MK}(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }}")

_NEXTAFTER = """
{FN} {R} nextafter_{K}({R} a, {R} b) {{ return nextafter(a, b); }}
"""
# float16 computes in float: nextafter must step by half's own ulp (2**-24 below 2**-14,
# 2**(e-10) in binade e; one binade lower when stepping down from a power of two)
_HALF = """
{FN} float nextafter_{K}(float a, float b) {{
  if (a != a || b != b) return a + b;
  if (a == b) return b;
  if (a == 0) return b > 0 ? 0x1p-24f : -0x1p-24f;
  if (isinf(a)) return a > 0 ? 65504.0f : -65504.0f;
  {P}int ex;
  float m = frexp(fabs(a), &ex);
  int e = max(ex - 1, -14);
  float ulp = ldexp(1.0f, e - 10);
  int up = (b > a) == (a > 0);
  if (!up && m == 0.5f && ex - 1 > -14) ulp *= 0.5f;
  float r = up ? fabs(a) + ulp : fabs(a) - ulp;
  return a > 0 ? r : -r;
}}
"""


def complex_mul(t: CType, d: Dialect = OPENCL_C) -> str:
    """Just the complex product helper of complex dtype ``t`` (what GEMM needs: a smaller
    program than :func:`helpers`, so a first matmul compiles faster)."""
    return _MUL.format(C=d.ty(t.c), P=t.key, FN=d.func, MK=d.vec_ctor(t.c))


@lru_cache(maxsize=None)
def helpers(t: CType, d: Dialect = OPENCL_C) -> str:
    """The helper functions kernels of dtype ``t`` may call (empty for most)."""
    if t.kind == "i":
        return _SIGNED_INT.format(T=d.ty(t.c), K=t.key, W=t.wide, BITS=8 * t.itemsize, FN=d.func)
    if t.kind == "u":
        return _UNSIGNED_INT.format(T=d.ty(t.c), K=t.key, W=t.wide, BITS=8 * t.itemsize, FN=d.func)
    if t.kind == "f":
        step = _HALF.format(K=t.key, FN=d.func, P=d.private) if t.half else \
            _NEXTAFTER.format(R=t.comp, K=t.key, FN=d.func)
        return _FLOAT.format(R=t.comp, K=t.key, FN=d.func) + step
    if t.kind == "c":
        single = t.real == "float"
        k = {n: f"(({t.real}){v})" for n, v in _CONSTS.items()}
        return _COMPLEX.format(C=t.c, R=t.real, P=t.key, MUL=complex_mul(t, d),
                               TANH_CUT="9" if single else "22",
                               OVF="88" if single else "709",
                               BIG="1.34e8" if single else "7.2e16", FN=d.func,
                               MK=d.vec_ctor(t.c), **k)
    return ""
