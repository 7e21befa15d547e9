"""The gamma family: ``gammaln`` (torch.lgamma), ``digamma``, ``polygamma``, the Hurwitz
``zeta`` and ``multigammaln``.

* ``gammaln`` shifts its argument to at least 8 with the recurrence and sums Stirling's
  series there (error below 1e-12), uses the series about 2 near the zeros at 1 and 2, and
  reflects arguments below 1/2 (``Γ(x)Γ(1-x) = π / sin(πx)``).
* ``digamma`` and ``trigamma`` (``polygamma(1, .)``) are torch's: the recurrence up to 10
  (digamma) or six steps (trigamma), then the asymptotic series; reflection below 0
  (digamma, with the fractional part in ``tan``, which keeps it accurate far from 0) or
  1/2 (trigamma).
* ``polygamma(n, x) = (-1)^(n+1) n! zeta(n+1, x)`` for ``n >= 2``, and ``zeta`` is
  torch's Cephes evaluation: a direct sum until the argument passes 9, then the
  Euler-Maclaurin tail with 12 Bernoulli terms, each stage ending where torch's ends.
  torch sums float32 zeta in float64; so does omnitensor wherever the device holds
  float64.

Gradients are torch's formulas: ``lgamma' = digamma``, ``polygamma(n)' =
polygamma(n + 1)``, ``d zeta(x, q)/dq = -x zeta(x + 1, q)`` (torch has none in ``x``).
"""
from __future__ import annotations

import math
from typing import Any

from ..core import dtypes as _dt
from ..core.ops import elementwise as _ew
from ..core.ops.ternary import where
from ..core.tensor import Tensor
from ._common import binary_operands, floating, pick, polevl, with_derivative

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


# ------------------------------------------------------------------------ log-gamma
def _gammaln_pos(x: Tensor) -> Tensor:
    """``log Γ(x)`` for ``x >= 1/2``: recurrence up to ``x + 8``, then Stirling's series."""
    shift = _ew.log(x)
    for k in range(1, 8):
        shift = shift + _ew.log(x + float(k))
    z = x + 8.0
    inv = 1.0 / z
    inv2 = inv * inv
    series = inv * (1.0 / 12 + inv2 * (-1.0 / 360 + inv2 * (1.0 / 1260 + inv2 * (
        -1.0 / 1680 + inv2 * (1.0 / 1188)))))
    return (z - 0.5) * _ew.log(z) - z + _HALF_LOG_2PI + series - shift


def _zeta_minus_one(k: int) -> float:
    """``zeta(k) - 1`` for k >= 2 by Euler-Maclaurin summation (exact to double
    precision)."""
    n = 30
    head = sum(m ** -float(k) for m in range(2, n))
    tail = n ** (1.0 - k) / (k - 1) + 0.5 * n ** -float(k)
    rising = float(k)
    for j, b2j in enumerate((1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30), start=1):
        tail += b2j / math.factorial(2 * j) * rising * n ** (-k - 2.0 * j + 1)
        rising *= (k + 2 * j - 1) * (k + 2 * j)
    return head + tail


# log Γ(2 + b) = (1 - γ) b + sum_{k>=2} (-1)^k (zeta(k) - 1) b^k / k, for |b| <= 1/2
_LGAMMA2 = [0.0, 1.0 - 0.57721566490153286061] + [
    (-1) ** k * _zeta_minus_one(k) / k for k in range(2, 40)]


def _gammaln_near_zeros(x: Tensor) -> Tensor:
    """``log Γ(x)`` for x in [1/2, 5/2) by the series about 2 (relative accuracy near the
    zeros at 1 and 2, where the recurrence-and-Stirling route cancels)."""
    up = x >= 1.5
    b = where(up, x, x + 1.0) - 2.0
    poly: Any = _LGAMMA2[-1]
    for c in reversed(_LGAMMA2[:-1]):
        poly = c + b * poly
    return poly - where(up, 0.0, _ew.log(where(up, 1.0, x)))


def _gammaln(x: Tensor) -> Tensor:
    right = x >= 0.5
    arg = where(right, x, 1.0 - x)  # >= 1/2 on both branches
    near = arg < 2.5
    pos = where(near, _gammaln_near_zeros(pick(near, arg, 2.0)),
                _gammaln_pos(pick(near, 3.0, arg)))
    xs = pick(right, 0.25, x)  # the reflection's own argument, kept away from integers
    sin = _ew.abs(_ew.sin(math.pi * xs))
    reflected = math.log(math.pi) - _ew.log(sin) - pos
    pole = ((~right) & (x == _ew.floor(x))) | (x == math.inf)
    return where(pole, math.inf, where(right, pos, reflected))


# ------------------------------------------------------------------ digamma, trigamma
_PSI_10 = 2.25175258906672110764
_PSI_ASYMPTOTIC = (8.33333333333333333333e-2, -2.10927960927960927961e-2,
                   7.57575757575757575758e-3, -4.16666666666666666667e-3,
                   3.96825396825396825397e-3, -8.33333333333333333333e-3,
                   8.33333333333333333333e-2)


def _wide(x: Tensor) -> Tensor:
    """``x`` in float64 where its device holds float64 (torch's CPU accumulates these
    float32 terms in double), else unchanged."""
    if x.dtype is _dt.float64 or not x.device.supports_dtype(_dt.float64):
        return x
    return x.to(_dt.float64)


def _digamma_from(x: Tensor) -> Tensor:
    """ψ(x) for x > 0 (torch's route: push to >= 10, then the asymptotic series)."""
    result: Any = 0.0
    for _ in range(10):
        low = x < 10.0
        result = result - where(low, 1.0 / pick(low, x, 1.0), 0.0)
        x = where(low, x + 1.0, x)
    z = 1.0 / (x * x)
    y = where(x < 1.0e17, z * polevl(z, _PSI_ASYMPTOTIC), 0.0)
    asym = result + _ew.log(x) - 0.5 / x - y
    return where(x == 10.0, result + _PSI_10, asym)


def _digamma(x: Tensor) -> Tensor:
    neg = x < 0.0
    integer = x == _ew.trunc(x)
    pos = _digamma_from(where(neg, 1.0 - x, pick(x == 0.0, 1.0, x)))
    # pi / tan(pi r) with r the fractional part: exact r keeps tan accurate for large |x|
    r = _wide(pick(neg & ~integer, x - _ew.trunc(x), 0.5))
    out = where(neg, pos - (math.pi / _ew.tan(math.pi * r)).to(x.dtype), pos)
    out = where(neg & integer, math.nan, out)
    return where(x == 0.0, where(_ew.signbit(x), math.inf, -math.inf), out)


def _trigamma(x: Tensor) -> Tensor:
    low = x < 0.5
    xl = pick(low, x, 0.25)
    s = _ew.sin(math.pi * xl)
    result = where(low, -(math.pi * math.pi) / (s * s), 0.0)
    x = where(low, 1.0 - x, x)
    for _ in range(6):
        result = result + 1.0 / (x * x)
        x = x + 1.0
    ixx = 1.0 / (x * x)
    result = result + (1.0 + 1.0 / (2.0 * x) + ixx * (
        1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / x
    return where(low, -result, result)


# --------------------------------------------------------------------- Hurwitz zeta
_MACHEP = 1.11022302462515654042e-16
_EULER_MACLAURIN = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0,
                    -1.8924375803183791606e9, 7.47242496e10, -2.950130727918164224e12,
                    1.1646782814350067249e14, -4.5979787224074726105e15,
                    1.8152105401943546773e17, -7.1661652561756670113e18)


#: the most direct terms zeta sums (q far below 0 with an integer x needs 10 - q of them)
_MAX_DIRECT_TERMS = 10_000


def _zeta_sum(x: Tensor, q: Tensor) -> Tensor:
    """The sum of ``(q + k)^-x`` for a floating pair (torch's control flow: direct terms
    until ``q + k`` passes 9 and at least 9 of them, or until a term falls below
    rounding; then the Euler-Maclaurin tail, stopping at its first negligible term)."""
    from ..core.ops.creation import zeros_like
    # lanes with q <= 0 need 10 + floor(-q) terms before q + k exceeds 9 (one host read)
    need = where(q > 0.0, 9.0, _ew.floor(9.0 - pick(q > 0.0, 0.0, q)) + 1.0)
    steps = 9
    if q.numel() and bool((q <= 0.0).any()):
        steps = max(9, int(where(_ew.isnan(need), 9.0, need).max().item()))
        if steps > _MAX_DIRECT_TERMS:
            raise ValueError(f"zeta: q = {9 - steps + 1:g} with an integer x needs {steps} "
                             f"direct terms (at most {_MAX_DIRECT_TERMS} are summed); use "
                             f"the recurrence zeta(x, q) = zeta(x, q + m) + sum (q + k)^-x")
    s = _ew.pow(q, -x)
    a, b = q, s * 0.0
    done = zeros_like(q, dtype=_dt.bool_)
    for i in range(1, steps + 1):
        live = ~done & (i <= need)
        a = where(i <= need, a + 1.0, a)
        term = _ew.pow(a, -x)
        s = where(live, s + term, s)
        b = where(live, term, b)
        done = done | (live & (-_MACHEP * s < term) & (term < _MACHEP * s))
    w = a
    s = where(done, s, s + b * w / (x - 1.0) - 0.5 * b)
    rising: Any = 1.0
    k = 0.0
    for coeff in _EULER_MACLAURIN:
        rising = rising * (x + k)
        b = b / w
        t = rising * b / coeff
        s = where(done, s, s + t)
        done = done | (_ew.abs(t / s) < _MACHEP)
        k += 1.0
        rising = rising * (x + k)
        b = b / w
        k += 1.0
    return s


def _zeta(x: Tensor, q: Tensor) -> Tensor:
    """Hurwitz zeta of a broadcast floating pair (edges as torch: inf at x = 1 and at
    non-positive integer q, nan for x < 1 and for negative q with non-integer x)."""
    xw, qw = _wide(x), _wide(q)
    regular = (xw > 1.0) & ~((qw <= 0.0) & ((qw == _ew.floor(qw)) | (xw != _ew.floor(xw))))
    out = _zeta_sum(pick(regular, xw, 2.0), pick(regular, qw, 1.0)).to(x.dtype)
    out = where(regular, out, math.nan)
    out = where((q <= 0.0) & (q == _ew.floor(q)) & (x > 1.0), math.inf, out)
    return where(x == 1.0, math.inf, where(x < 1.0, math.nan, out))


def _polygamma(n: int, x: Tensor) -> Tensor:
    if n == 0:
        return _digamma(x)
    if n == 1:
        return _trigamma(x)
    from ..core.ops.creation import full_like
    n_plus_one = full_like(x, float(n + 1))
    sign = 1.0 if n % 2 else -1.0
    return sign * float(math.factorial(n)) * _zeta(n_plus_one, x)


def _polygamma_function(n: int) -> Any:
    return with_derivative(lambda x: _polygamma(n, x),
                           lambda x, out: _polygamma_function(n + 1)(x))


def _gammaln_wide(x: Tensor) -> Tensor:
    """``_gammaln`` in float64 where the device holds it (float32's reflection below 1/2
    cancels: torch's float32 lgamma is accurate to rounding there)."""
    return _gammaln(_wide(x)).to(x.dtype)


_GAMMALN = with_derivative(_gammaln_wide, lambda x, out: digamma(x))
_DIGAMMA = _polygamma_function(0)


def gammaln(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """``log |Γ(x)|`` (torch.special.gammaln, torch.lgamma); +inf at 0 and the negative
    integers; gradient ``digamma``."""
    return _GAMMALN(floating(input))


def digamma(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """ψ(x) = d/dx log Γ(x) (torch.special.digamma, torch.digamma): ∓inf at ±0, nan at
    the negative integers; gradient ``polygamma(1, x)``."""
    return _DIGAMMA(floating(input))


def polygamma(n: int, input: Any) -> Tensor:  # noqa: A002 - torch's name
    """The ``n``-th derivative of digamma (torch.special.polygamma, torch.polygamma);
    gradient ``polygamma(n + 1, x)``."""
    if isinstance(n, bool) or not isinstance(n, int):
        if isinstance(n, Tensor) and n.numel() == 1 and n.dtype.kind in "iu":
            n = int(n.item())
        else:
            raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _polygamma_function(n)(floating(input))


def multigammaln(input: Any, p: int) -> Tensor:  # noqa: A002 - torch's name
    """The log multivariate gamma function of dimension ``p`` (torch.special.multigammaln,
    torch.mvlgamma): ``p(p-1)/4 log(pi) + sum_j lgamma(x - j/2)``."""
    if p < 1:
        raise RuntimeError(f"multigammaln: p has to be greater than or equal to 1, got {p}")
    x = floating(input)
    total = gammaln(x)
    for j in range(1, p):
        total = total + gammaln(x - j / 2.0)
    return total + (p * (p - 1) / 4.0) * math.log(math.pi)


def zeta(input: Any, other: Any) -> Tensor:  # noqa: A002 - torch's names
    """The Hurwitz zeta function ``sum_k (other + k)^-input`` (torch.special.zeta):
    gradient in ``other`` only, as torch (``-input * zeta(input + 1, other)``)."""
    x, q = binary_operands("special_zeta", input, other, ("self", "other"))
    if not (x.requires_grad or q.requires_grad):
        return _zeta(x, q)
    return _zeta_function().apply(x, q)


_ZETA: Any = None


def _zeta_function() -> Any:
    """The autograd Function of zeta (built on first use, as ``_common``'s)."""
    global _ZETA
    if _ZETA is None:
        from ..autograd import Function

        class Zeta(Function):
            @staticmethod
            def forward(ctx: Any, x: Tensor, q: Tensor) -> Tensor:
                ctx.save_for_backward(x, q)
                return _zeta(x.detach(), q.detach())

            @staticmethod
            def backward(ctx: Any, grad: Tensor) -> tuple:
                x, q = ctx.saved_tensors
                if ctx.needs_input_grad[0]:
                    raise NotImplementedError("the derivative for 'zeta' is not implemented.")
                return None, grad * -x * zeta(x + 1.0, q)
        _ZETA = Zeta
    return _ZETA
