"""The classical orthogonal polynomials of torch.special, ``P_n(x)`` elementwise with an
integer degree per element (a tensor or a number; a float degree is truncated toward
zero, as torch's cast to int64 does; a non-finite one counts as negative):

* Chebyshev T, U, V, W and their shifted forms on [0, 1] (argument ``2x - 1``): closed
  forms at the interval's ends, ``cos(n acos x)``-type formulas inside the interval for
  degrees above torch's thresholds, the recurrence ``P_k = 2x P_(k-1) - P_(k-2)``
  otherwise;
* Hermite H and He (nan above degree 128 in float32, 512 in float64, as torch), Laguerre
  L and Legendre P by their three-term recurrences.

Each element runs the recurrence up to its own degree: the loop goes to the largest degree
that needs it (one host read) and keeps each lane's value at its degree; it stops early
once every lane still running has overflowed to nan. The branch order, thresholds and
operation order are torch's (ATen's ``native/Math.h``), so float32 results round alike.
torch computes no gradients for these; neither does omnitensor.
"""
from __future__ import annotations

import math
from typing import Any, Callable

from ..core import dtypes as _dt
from ..core.ops import elementwise as _ew
from ..core.ops.ternary import where
from ..core.tensor import Tensor
from ._common import binary_operands, not_differentiable, pick

#: how often (in steps) the recurrence checks whether every running lane is nan
_CHECK_EVERY = 32
_INT64_LIMIT = 2.0 ** 63


def _operands(name: str, x: Any, n: Any) -> tuple[Tensor, Tensor]:
    """(x, degree) as broadcast floating tensors; the degree truncated as torch's
    ``static_cast<int64_t>`` (non-finite or out-of-range degrees become -1)."""
    xt, nt = binary_operands(name, x, n)
    k = _ew.trunc(nt)
    return xt, where(_ew.isfinite(k) & (_ew.abs(k) < _INT64_LIMIT), k, -1.0)


def _even(k: Tensor) -> Tensor:
    return _ew.remainder(k, 2.0) == 0


def _recurrence(k: Tensor, running: Tensor, p1: Tensor,
                step: Callable[[float, Tensor, Any], Tensor]) -> Tensor:
    """``P_k`` on the ``running`` lanes (degree >= 2) of ``P_j = step(j, P_(j-1),
    P_(j-2))`` from ``P_0 = 1``, ``P_1 = p1``; other lanes hold ``p1``."""
    out = p1
    if p1.numel() == 0:
        return out
    top = int(where(running, k, 0.0).max().item())
    p: Any = 1.0
    q = p1
    for j in range(2, top + 1):
        r = step(float(j), q, p)
        out = where(k == j, r, out)
        p, q = q, r
        if j % _CHECK_EVERY == 0 and j < top:
            pending = running & (k > j)
            if not bool((pending & ~_ew.isnan(q)).any()):
                # nan stays nan through the recurrence: torch's loop stops there too
                return where(pending, math.nan, out)
    return out


# ------------------------------------------------------------------------- Chebyshev

def _edge(family: str, y: Tensor, k: Tensor) -> Tensor:
    """The value at ``y = ±1``."""
    plus = y > 0.0
    even = _even(k)
    if family == "t":
        return where(plus | even, 1.0, -1.0)
    if family == "u":
        return where(plus | even, k + 1.0, -(k + 1.0))
    if family == "v":
        return where(plus, 1.0, where(even, k + k + 1.0, -(k + k + 1.0)))
    return where(plus, k + k + 1.0, where(even, 1.0, -1.0))


def _trig(family: str, y: Tensor, k: Tensor, shifted: bool) -> Tensor:
    """The closed form inside (-1, 1) (``y`` already safe there)."""
    theta = _ew.acos(y)
    if family == "t":
        return _ew.cos(k * theta)
    even = _even(k)
    if family == "u":
        s = _ew.sin(theta)
        ss = pick(s != 0.0, s, 1.0)
        yy = pick(s != 0.0, 1.0, y)
        return where(s != 0.0, _ew.sin((k + 1.0) * theta) / ss,
                     (k + 1.0) * _ew.cos((k + 1.0) * theta) / yy)
    half = theta / 2.0
    if family == "v":
        regular = _ew.sin(half) != 1.0
        fallback = where(even, k + k + 1.0, -(k + k + 1.0))
        return where(regular, _ew.cos((k + 0.5) * theta) / _ew.cos(half), fallback)
    regular = _ew.cos(half) != 1.0
    fallback = where(even, 1.0, -1.0)
    if not shifted:  # torch's unshifted W checks the sign there first
        fallback = where(y > 0.0, k + k + 1.0, fallback)
    sh = pick(regular, _ew.sin(half), 1.0)
    return where(regular, _ew.sin((k + 0.5) * theta) / sh, fallback)


_FIRST = {"t": lambda y: y, "u": lambda y: y + y, "v": lambda y: y + y - 1.0,
          "w": lambda y: y + y + 1.0}
#: degrees above which torch uses the trig form inside the interval
_THRESHOLD = {False: {"t": 6, "u": 8, "v": 8, "w": 8}, True: {"t": 6, "u": 6, "v": 6, "w": 4}}


def _chebyshev(name: str, family: str, shifted: bool, x: Any, n: Any) -> Tensor:
    xt, k = _operands(name, x, n)
    y = xt + xt - 1.0 if shifted else xt
    ay = _ew.abs(y)
    edge = ay == 1.0
    inside = (k > _THRESHOLD[shifted][family]) & (ay < 1.0) & ~edge
    first = _FIRST[family](y)
    two_y = y + y
    out = _recurrence(k, ~edge & ~inside & (k >= 2.0), first,
                      lambda j, q, p: _fms(two_y, q, p))
    out = where(k == 0.0, 1.0, out)
    out = where(inside, _trig(family, pick(inside, y, 0.0), k, shifted), out)
    out = where(edge, _edge(family, y, k), out)
    return where(k < 0.0, 0.0, out)


def _chebyshev_function(family: str, shifted: bool) -> Callable[..., Tensor]:
    torch_name = ("shifted_" if shifted else "") + f"chebyshev_polynomial_{family}"
    kind = {"t": "first", "u": "second", "v": "third", "w": "fourth"}[family]

    def fn(input: Any, n: Any) -> Tensor:  # noqa: A002 - torch's name
        return _chebyshev(f"special_{torch_name}", family, shifted, input, n)
    fn.__name__ = fn.__qualname__ = torch_name
    where_ = "on [0, 1] (of 2x - 1)" if shifted else "on [-1, 1]"
    fn.__doc__ = (f"The Chebyshev polynomial of the {kind} kind {where_} of degree ``n`` "
                  f"(torch.special.{torch_name}); 0 for negative degrees.")
    return not_differentiable(fn)


chebyshev_polynomial_t = _chebyshev_function("t", False)
chebyshev_polynomial_u = _chebyshev_function("u", False)
chebyshev_polynomial_v = _chebyshev_function("v", False)
chebyshev_polynomial_w = _chebyshev_function("w", False)
shifted_chebyshev_polynomial_t = _chebyshev_function("t", True)
shifted_chebyshev_polynomial_u = _chebyshev_function("u", True)
shifted_chebyshev_polynomial_v = _chebyshev_function("v", True)
shifted_chebyshev_polynomial_w = _chebyshev_function("w", True)


# ------------------------------------------------------------ Hermite, Laguerre, Legendre
def _fms(a: Tensor, b: Tensor, c: Tensor | float) -> Tensor:
    """``a * b - c`` as torch's compiled float32 loop computes it, a fused multiply-add
    (the float32 product is exact in float64, so one float64 subtraction rounds as the
    fused form where the device holds float64; plain float32 elsewhere)."""
    if a.dtype is _dt.float32 and a.device.supports_dtype(_dt.float64):
        wide = _dt.float64
        cw = c.to(wide) if isinstance(c, Tensor) else c
        return (a.to(wide) * b.to(wide) - cw).to(_dt.float32)
    return a * b - c


def _hermite_limit(x: Tensor) -> int:
    """torch's largest Hermite degree (nan above): 128 in float32, 512 in float64."""
    return 512 if x.dtype.itemsize >= 8 else 128


@not_differentiable
def hermite_polynomial_h(input: Any, n: Any) -> Tensor:  # noqa: A002 - torch's name
    """The physicists' Hermite polynomial H_n (torch.special.hermite_polynomial_h)."""
    x, k = _operands("special_hermite_polynomial_h", input, n)
    top = _hermite_limit(x)
    two_x = x + x
    out = _recurrence(k, (k >= 2.0) & (k <= top), two_x,
                      lambda j, q, p: _fms(two_x, q, 2.0 * (j - 1.0) * p))
    out = where(k > top, math.nan, where(k == 0.0, 1.0, out))
    return where(k < 0.0, 0.0, out)


@not_differentiable
def hermite_polynomial_he(input: Any, n: Any) -> Tensor:  # noqa: A002 - torch's name
    """The probabilists' Hermite polynomial He_n (torch.special.hermite_polynomial_he)."""
    x, k = _operands("special_hermite_polynomial_he", input, n)
    top = _hermite_limit(x)
    out = _recurrence(k, (k >= 2.0) & (k <= top), x,
                      lambda j, q, p: _fms(x, q, (j - 1.0) * p))
    out = where(k > top, math.nan, where(k == 0.0, 1.0, out))
    return where(k < 0.0, 0.0, out)


@not_differentiable
def laguerre_polynomial_l(input: Any, n: Any) -> Tensor:  # noqa: A002 - torch's name
    """The Laguerre polynomial L_n (torch.special.laguerre_polynomial_l); 1 at x = 0."""
    x, k = _operands("special_laguerre_polynomial_l", input, n)
    zero = x == 0.0
    first = 1.0 - x
    out = _recurrence(k, ~zero & (k >= 2.0), first,
                      lambda j, q, p: _fms(((j - 1.0) + first) + (j - 1.0), q, (j - 1.0) * p) / j)
    out = where(zero | (k == 0.0), 1.0, out)
    return where(k < 0.0, 0.0, out)


@not_differentiable
def legendre_polynomial_p(input: Any, n: Any) -> Tensor:  # noqa: A002 - torch's name
    """The Legendre polynomial P_n (torch.special.legendre_polynomial_p)."""
    x, k = _operands("special_legendre_polynomial_p", input, n)
    edge = _ew.abs(x) == 1.0
    out = _recurrence(k, ~edge & (k >= 2.0), x,
                      lambda j, q, p: _fms(((j - 1.0) * 2.0 + 1.0) * x, q, (j - 1.0) * p) / j)
    out = where(k == 0.0, 1.0, out)
    out = where(edge, where((x > 0.0) | _even(k), 1.0, -1.0), out)
    return where(k < 0.0, 0.0, out)
