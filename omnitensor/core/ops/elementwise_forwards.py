"""Forwards of elementwise ops that are not a single backend primitive: integer
identities, float-only predicates, the Array API's special values NumPy does not give, and
composites a backend may replace with a fused fast path (``sigmoid``, ``rsqrt``)."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .. import dtypes as _dt

_PY_OF_KIND = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def _identity_for_integers(prim: str) -> Callable:
    def forward(be: Any, x: Any, cd: _dt.DType) -> Any:
        return be.copy(x) if cd.kind in "biu" else getattr(be, prim)(x)
    return forward


def _float_predicate(prim: str, integer_value: bool) -> Callable:
    def forward(be: Any, x: Any, cd: _dt.DType) -> Any:
        if cd.kind in "biu":
            return be.full(x.shape, integer_value, _dt.bool_.np, be.device_index(x))
        return getattr(be, prim)(x)
    return forward


def _signbit(be: Any, x: Any, cd: _dt.DType) -> Any:
    if cd.kind == "u" or cd.kind == "b":
        return be.full(x.shape, False, _dt.bool_.np, be.device_index(x))
    if cd.kind == "i":
        return be.less(x, 0)
    return be.signbit(x)


def _sign(be: Any, x: Any, cd: _dt.DType) -> Any:
    return be.copy(x) if cd.kind == "b" else be.sign(x)


def _positive(be: Any, x: Any, cd: _dt.DType) -> Any:
    return be.copy(x)


def _real_part(be: Any, x: Any, cd: _dt.DType) -> Any:
    return be.real(x) if cd.kind == "c" else x


def _imag_part(be: Any, x: Any, cd: _dt.DType) -> Any:
    if cd.kind != "c":
        raise _dt.DTypeError(f"imag is not implemented for tensors with non-complex dtype "
                             f"{cd.name}")
    return be.imag(x)


def _conj_forward(be: Any, x: Any, cd: _dt.DType) -> Any:
    return be.conj(x) if cd.kind == "c" else x


def _rsqrt(be: Any, x: Any, cd: _dt.DType) -> Any:
    fast = be.hook("rsqrt")
    if fast is not None:
        return fast(x)
    r = be.sqrt(x)
    return be.reciprocal(r, out=r)


def _sigmoid(be: Any, x: Any, cd: _dt.DType) -> Any:
    fast = be.hook("sigmoid")
    if fast is not None:
        return fast(x)
    r = be.negative(x)
    be.exp(r, out=r)
    be.add(r, 1, out=r)
    return be.reciprocal(r, out=r)


def _relu(be: Any, x: Any, cd: _dt.DType) -> Any:
    return be.maximum(x, _PY_OF_KIND[cd.kind](0))


def _floor_divide(be: Any, a: Any, b: Any, cd: _dt.DType) -> Any:
    """floor_divide; for floats, the Array API's infinities (``inf // 2 = inf``,
    ``1 // -inf = -0``) where NumPy's divmod rule gives NaN or -1: floor(a / b) there."""
    q = be.floor_divide(a, b)
    if cd.kind != "f":
        return q
    if any(isinstance(v, float) and math.isinf(v) for v in (a, b)):
        return be.floor(be.divide(a, b))
    masks = [be.isinf(v) for v in (a, b) if not isinstance(v, (int, float))]
    if not masks:
        return q
    m = masks[0] if len(masks) == 1 else be.logical_or(masks[0], masks[1])
    return be.where(m, be.floor(be.divide(a, b)), q)


def _pow(be: Any, a: Any, b: Any, cd: _dt.DType) -> Any:
    """pow; for signed integers, torch's values where an exponent tensor holds negative
    numbers (``1 ** -n = 1``, ``(-1) ** -n = +-1``, any other base 0), where NumPy
    raises and dpnp gives 0 for every base. A negative Python-int exponent raises, as in
    torch."""
    if cd.kind != "i":
        return be.pow(a, b)
    if isinstance(b, int):
        if b < 0:
            raise _dt.DTypeError("pow: integers to negative integer powers are not allowed "
                                 "(as in torch); use a float base, e.g. x.float() ** -1")
        return be.pow(a, b)
    neg = be.less(b, 0)
    r = be.pow(a, be.where(neg, 0, b))
    odd = be.astype(be.not_equal(be.remainder(b, 2), 0), cd.np)
    sign = be.subtract(1, be.multiply(odd, 2))               # (-1) ** b for b < 0
    if isinstance(a, int):
        at_neg = be.multiply(sign, int(a == -1))
        if a == 1:
            at_neg = be.add(at_neg, 1)
    else:
        at_neg = be.add(be.astype(be.equal(a, 1), cd.np),
                        be.multiply(be.astype(be.equal(a, -1), cd.np), sign))
    return be.where(neg, at_neg, r)


def pow_exponent(base: Any, b: Any) -> Any:
    """The Python-float exponent ``b`` of an integer (or bool) tensor ``base`` as torch
    uses it: torch keeps it in double there, so ``int_x ** -1e-186`` is inf at 0 and NaN
    below 0, where rounding it to float32 would give ``x ** -0.0 = 1`` (a float32 base
    does round it: ``float_x ** 1e-60`` is 1, as here). The smallest normal float32 gives
    torch's values (and 1 elsewhere) on every device, also on those that flush subnormals
    to zero."""
    if b.__class__ is not float or b == 0.0 or getattr(base, "dtype", None) is None or \
            base.dtype.kind not in "biu":
        return b
    tiny = float(np.finfo(np.float32).tiny)
    return math.copysign(tiny, b) if abs(b) < tiny else b


def _expm1(be: Any, x: Any, cd: _dt.DType) -> Any:
    """expm1; for complex non-finite inputs, exp(z) - 1 (the standard's special values,
    which NumPy's complex expm1 does not give)."""
    r = be.expm1(x)
    if cd.kind != "c":
        return r
    finite = be.isfinite(x)
    r = be.where(finite, r, be.subtract(be.exp(x), 1))
    # expm1(±0 + 0j) is +0 + 0j (NumPy keeps the sign of a real -0)
    re, im = be.real(x), be.imag(x)
    zero = be.logical_and(be.logical_and(be.equal(re, 0), be.equal(im, 0)),
                          be.logical_not(be.signbit(im)))
    return be.where(zero, 0j, r)


def _tanh(be: Any, x: Any, cd: _dt.DType) -> Any:
    """tanh; for complex ``±inf + iy`` (finite y) exactly ``±1 + 0j`` with the sign of
    y on the zero (C99 leaves it to sin(2y))."""
    r = be.tanh(x)
    if cd.kind != "c":
        return r
    re, im = be.real(x), be.imag(x)
    hit = be.logical_and(be.isinf(re), be.isfinite(im))
    fixed = be.add(be.astype(be.sign(re), cd.np), be.multiply(
        be.astype(be.copysign(be.multiply(im, 0), im), cd.np), 1j))
    return be.where(hit, fixed, r)
