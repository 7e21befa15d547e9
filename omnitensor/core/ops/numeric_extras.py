"""torch's numeric helpers written once from core ops: ``frexp``/``ldexp``, ``gcd``/
``lcm``, ``rsub``, ``fmax``/``fmin`` (NaN-ignoring), ``renorm``, ``isin``, ``cummax``/
``cummin``, ``cumulative_trapezoid`` and ``gradient``.

Everything is a composite, so each runs on every backend and differentiates through its
parts (``frexp``'s mantissa, ``renorm``, ``gradient``...), with torch's dtype rules.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from ...errors import ShapeError
from .. import dtypes as _dt
from ..graph import no_grad_ctx
from ..shape_util import normalize_axis
from ..tensor import Tensor
from . import creation, join, shape as sh
from .dtype_rules import floating
from .elementwise import isinf, isnan, maximum, minimum
from .gather import gather
from .out_arg import write_out
from .reduction import vector_norm
from .sorting import ValuesIndices, searchsorted, sort_torch
from .ternary import where
from .torch_extras import trapezoid_spacing

__all__ = ["frexp", "ldexp", "gcd", "lcm", "rsub", "fmax", "fmin", "renorm", "isin",
           "cummax", "cummin", "cumulative_trapezoid", "gradient"]


class Frexp(NamedTuple):
    """torch.return_types.frexp: ``mantissa, exponent``."""
    mantissa: Tensor
    exponent: Tensor


# ------------------------------------------------------------- exponents
def frexp(input: Tensor, *, out: Any = None) -> Frexp:  # noqa: A002
    """``input = mantissa * 2 ** exponent`` with ``0.5 <= |mantissa| < 1`` (0, inf and NaN
    keep themselves with exponent 0); floating inputs, an int32 exponent."""
    if input.dtype.kind != "f":
        raise _dt.DTypeError(f"frexp only supports floating-point dtypes, got "
                             f"{input.dtype.name}")
    with no_grad_ctx():
        a = input.abs()
        special = (a == 0) | isinf(a) | isnan(a)
        dev = input.device
        wide = _dt.float64 if dev.supports_dtype(_dt.float64) else \
            input.dtype  # float64 where the device has it: subnormals keep their log
        safe = where(special, 1.0, a).to(wide)
        e = safe.log2().floor() + 1
        m = safe / e.exp2()  # log2 rounds near powers of two: bring m into [0.5, 1)
        e = where(m >= 1, e + 1, where(m < 0.5, e - 1, e))
        e = where(special, 0.0, e)
        # 2**-e in two halves: for the largest exponents 2**-e alone underflows
        half = (e / 2).floor()
        f1, f2 = (-half).exp2().to(input.dtype), (half - e).exp2().to(input.dtype)
    return write_out("frexp", Frexp(input * f1 * f2, e.to(_dt.int32)), out)


def ldexp(input: Tensor, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """``input * 2 ** other`` in a floating dtype (integers: the default float)."""
    _check_tensors("ldexp", input, other)
    dtype = _dt.promote_types(floating(input).dtype, floating(other).dtype)
    return write_out("ldexp", input.to(dtype) * other.to(dtype).exp2(), out)


# ------------------------------------------------------------- integers
def _check_tensors(op: str, *ts: Any) -> None:
    """torch's refusal of Python numbers where a function takes only tensors."""
    for name, t in zip(("input", "other"), ts):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")


def _check_integer(op: str, *ts: Tensor) -> None:
    _check_tensors(op, *ts)
    for t in ts:
        if t.dtype.kind not in "iu":
            raise _dt.DTypeError(f"{op}: expected integer tensors, got {t.dtype.name}")


def gcd(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """Greatest common divisor, elementwise and non-negative (``gcd(0, 0) == 0``)."""
    _check_integer("gcd", input, other)
    a, b = sh.broadcast_tensors(input.abs(), other.abs())
    with no_grad_ctx():
        # Euclid on every element at once, until every remainder is 0 (O(log max) rounds)
        while bool((b != 0).any().item()):
            nz = b != 0
            a, b = where(nz, b, a), where(nz, a % where(nz, b, 1), 0)
    return write_out("gcd", a, out)


def lcm(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """Least common multiple, elementwise and non-negative (0 when either is 0)."""
    _check_integer("lcm", input, other)
    g = gcd(input, other)
    return write_out("lcm", (input // where(g == 0, 1, g) * other).abs(), out)


def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:  # noqa: A002
    """``other - alpha * input`` (torch's reversed subtraction)."""
    _check_tensors("rsub", input)
    return other - (input if alpha == 1 else alpha * input)


def _nan_ignoring(op: str, combine: Any, input: Tensor, other: Tensor, out: Any) -> Tensor:  # noqa: A002
    _check_tensors(op, input, other)
    m = combine(input, other)
    if m.dtype.kind == "f":
        m = where(isnan(input), other, where(isnan(other), input, m)).to(m.dtype)
    return write_out(op, m, out)


def fmax(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """The elementwise maximum ignoring NaN (NaN only where both are NaN)."""
    return _nan_ignoring("fmax", maximum, input, other, out)


def fmin(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """The elementwise minimum ignoring NaN (NaN only where both are NaN)."""
    return _nan_ignoring("fmin", minimum, input, other, out)


# ------------------------------------------------------------- norms and sets
def renorm(input: Tensor, p: Any, dim: int, maxnorm: Any) -> Tensor:  # noqa: A002
    """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to it
    (by ``maxnorm / (norm + 1e-7)``, as torch)."""
    if input.dtype.kind not in "fc":
        raise _dt.DTypeError(f"renorm: expected a floating tensor, got {input.dtype.name}")
    if input.ndim < 2:
        raise ShapeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                         f"dimensions")
    if p <= 0:
        raise ValueError(f"renorm: non-positive norm ord {p} is not supported")
    if maxnorm < 0:
        raise ValueError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = normalize_axis(dim, input.ndim)
    others = tuple(k for k in range(input.ndim) if k != d)
    norm = vector_norm(input, p, others, True) if others else input.abs()
    factor = where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return input * factor.to(input.dtype)


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """True where an element of ``elements`` occurs in ``test_elements`` (either may be a
    scalar); by a sort of ``test_elements`` and a binary search."""
    like = elements if isinstance(elements, Tensor) else test_elements
    e = elements if isinstance(elements, Tensor) else \
        creation.tensor(elements, device=like.device)
    t = test_elements if isinstance(test_elements, Tensor) else \
        creation.tensor(test_elements, device=like.device)
    dtype = _dt.promote_types(e.dtype, t.dtype)
    e, t = e.to(dtype), t.reshape(-1).to(dtype)
    if t.shape[0] == 0:
        found = creation.zeros(e.shape, dtype=_dt.bool_, device=e.device)
    else:
        s = sort_torch(t).values
        pos = searchsorted(s, e.reshape(-1)).clamp(max=t.shape[0] - 1)
        found = (s[pos] == e.reshape(-1)).reshape(e.shape)
    return ~found if invert else found


# ------------------------------------------------------------- running extremes
def running_scan(x: Tensor, d: int, combine: Any) -> Tensor:
    """Inclusive scan of ``combine`` along axis ``d`` (log2(n) passes)."""
    n = x.shape[d]
    k = 1
    while k < n:
        x = join.cat([x.narrow(d, 0, k), combine(x.narrow(d, k, n - k),
                                                 x.narrow(d, 0, n - k))], d)
        k *= 2
    return x


def _cumulative_extreme(name: str, input: Tensor, dim: int) -> ValuesIndices:  # noqa: A002
    d = normalize_axis(dim, input.ndim) if input.ndim else 0
    x = input.reshape(1) if input.ndim == 0 else input
    combine = maximum if name == "cummax" else minimum
    with no_grad_ctx():
        work = x.to(_dt.int64) if x.dtype is _dt.bool_ else x
        run = running_scan(work, d, combine)
        # the index of the last element equal to the running extreme (or a NaN, which
        # stays the extreme once seen): a running maximum of those positions
        hit = (work == run) | isnan(work) if work.dtype.kind == "f" else work == run
        shape = [1] * x.ndim
        shape[d] = x.shape[d]
        pos = creation.arange(x.shape[d], device=x.device).reshape(shape)
        idx = running_scan(where(hit, pos, 0), d, maximum) if x.numel() else \
            creation.zeros(x.shape, dtype=_dt.int64, device=x.device)
    values = gather(x, d, idx)
    if input.ndim == 0:
        return ValuesIndices(values.reshape(()), idx.reshape(()))
    return ValuesIndices(values, idx)


def cummax(input: Tensor, dim: int, *, out: Any = None) -> ValuesIndices:  # noqa: A002
    """The running maximum along ``dim`` and the index where each was found (NaN
    propagates, as in torch)."""
    return write_out("cummax", _cumulative_extreme("cummax", input, dim), out)


def cummin(input: Tensor, dim: int, *, out: Any = None) -> ValuesIndices:  # noqa: A002
    """The running minimum along ``dim`` and the index where each was found."""
    return write_out("cummin", _cumulative_extreme("cummin", input, dim), out)


# ------------------------------------------------------------- integrals, derivatives
def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None,
                         dim: int = -1) -> Tensor:
    """The running trapezoidal integral of ``y`` along ``dim`` (one fewer element),
    with sample points ``x`` or spacing ``dx`` (default 1)."""
    d = normalize_axis(dim, y.ndim)
    n = y.shape[d]
    if n == 0:
        return y.narrow(d, 0, 0) * 1
    areas = y.narrow(d, 0, n - 1) + y.narrow(d, 1, n - 1)
    if x is None:
        return areas.cumsum(d) * ((1.0 if dx is None else dx) / 2)
    return (areas * trapezoid_spacing("cumulative_trapezoid", x, y, d, dim)).cumsum(d) / 2


def _spacings(input: Tensor, spacing: Any, dims: tuple[int, ...]) -> list[Any]:  # noqa: A002
    """One spacing per dim: a number (uniform) or a 1-D coordinate tensor."""
    if spacing is None:
        spacing = 1
    if isinstance(spacing, (int, float)) or (isinstance(spacing, Tensor) and spacing.ndim == 0):
        one = spacing.item() if isinstance(spacing, Tensor) else spacing
        return [one] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        raise ValueError(f"torch.gradient expected spacing to be unspecified, a scalar or a "
                         f"list of length {len(dims)} (one per dim), but got a list of "
                         f"length {len(spacing)}")
    out: list[Any] = []
    for s, d in zip(spacing, dims):
        if isinstance(s, Tensor) and s.ndim == 0:
            s = s.item()
        if isinstance(s, Tensor) and s.shape[0] != input.shape[d]:
            raise ValueError(f"torch.gradient expected each coordinate tensor to have as "
                             f"many points as dim {d} ({input.shape[d]}), got {s.shape[0]}")
        out.append(s)
    return out


def _one_gradient(f: Tensor, d: int, h: Any, edge_order: int) -> Tensor:
    """numpy.gradient's formulas along one axis: central differences inside (for
    uneven spacing too), one-sided differences of ``edge_order`` at the ends."""
    n = f.shape[d]

    def part(start: int, length: int) -> Tensor:
        return f.narrow(d, start, length)

    def along(t: Tensor) -> Tensor:  # a 1-D coefficient tensor placed along axis d
        shape = [1] * f.ndim
        shape[d] = t.shape[0]
        return t.reshape(shape)
    if isinstance(h, Tensor):
        dx = (h[1:] - h[:-1]).to(f.dtype)
        d1, d2 = dx[:-1], dx[1:]
        a, b, c = -d2 / (d1 * (d1 + d2)), (d2 - d1) / (d1 * d2), d1 / (d2 * (d1 + d2))
        inner = along(a) * part(0, n - 2) + along(b) * part(1, n - 2) + along(c) * part(2, n - 2)
        if edge_order == 1:
            first = (part(1, 1) - part(0, 1)) / dx[0]
            last = (part(n - 1, 1) - part(n - 2, 1)) / dx[-1]
        else:
            d1, d2 = dx[0], dx[1]
            first = (-(2 * d1 + d2) / (d1 * (d1 + d2)) * part(0, 1)
                     + (d1 + d2) / (d1 * d2) * part(1, 1) - d1 / (d2 * (d1 + d2)) * part(2, 1))
            d1, d2 = dx[-2], dx[-1]
            last = (d2 / (d1 * (d1 + d2)) * part(n - 3, 1) - (d2 + d1) / (d1 * d2)
                    * part(n - 2, 1) + (2 * d2 + d1) / (d2 * (d1 + d2)) * part(n - 1, 1))
    else:
        inner = (part(2, n - 2) - part(0, n - 2)) / (2.0 * h)
        if edge_order == 1:
            first = (part(1, 1) - part(0, 1)) / h
            last = (part(n - 1, 1) - part(n - 2, 1)) / h
        else:
            first = (-1.5 * part(0, 1) + 2 * part(1, 1) - 0.5 * part(2, 1)) / h
            last = (0.5 * part(n - 3, 1) - 2 * part(n - 2, 1) + 1.5 * part(n - 1, 1)) / h
    return join.cat([first, inner, last], d)


def gradient(input: Tensor, *, spacing: Any = 1, dim: Any = None,  # noqa: A002
             edge_order: int = 1) -> tuple[Tensor, ...]:
    """The derivative estimate of ``input`` along each of ``dim`` (every dim when None),
    as ``numpy.gradient``: uniform ``spacing`` numbers or coordinate tensors; one tensor
    per dim, in a floating dtype."""
    if edge_order not in (1, 2):
        raise ValueError(f"torch.gradient only supports edge_order=1 and edge_order=2, got "
                         f"{edge_order}")
    if dim is None:
        dims = tuple(range(input.ndim))
    elif isinstance(dim, int):
        dims = (normalize_axis(dim, input.ndim),)
    else:
        dims = tuple(normalize_axis(k, input.ndim) for k in dim)
    hs = _spacings(input, spacing, dims)
    f = floating(input)
    outs = []
    for d, h in zip(dims, hs):
        if f.shape[d] < edge_order + 1:
            raise ValueError(f"torch.gradient expected each dimension size to be at least "
                             f"edge_order+1 ({edge_order + 1}), got {f.shape[d]} at dim {d}")
        outs.append(_one_gradient(f, d, h, edge_order))
    return tuple(outs)
