"""Elementwise ops on sparse tensors, with torch's rules for which keep sparsity:

* ``sparse + sparse`` / ``-`` (same shape and layout): sparse; ``dense + sparse``: dense;
  ``sparse + dense`` and ``sparse + scalar`` are refused, as torch does;
* ``sparse * scalar``, ``sparse * dense``, ``dense * sparse``: sparse (the stored entries);
  ``sparse * sparse``: sparse (the positions stored in both);
* ``sparse / scalar`` (or a 0-d tensor), ``sparse ** p`` (p != 0): sparse;
* functions with ``f(0) == 0`` (abs, sqrt, sin, tanh, relu, floor...): sparse, on the
  coalesced values (``f`` of a sum is not the sum of ``f``); negation needs no coalescing.

Written with dense ops on the values and indices, so autograd reaches the values and
every backend runs them. Registered in the layout dispatch table under the elementwise
dispatchers' op names (and ``name_`` for the in-place forms).
"""
from __future__ import annotations

from typing import Any, Callable

from ...errors import DeviceMismatchError, ShapeError, mismatch_message
from .. import dtypes as _dt
from ..graph import is_grad_enabled
from ..layout_dispatch import non_strided, register, unsupported
from ..ops import elementwise as ew
from ..ops.composite import divide as _divide
from ..ops.indexing import _write, normalize_key
from ..ops.join import cat
from ..ops.sorting import searchsorted
from ..ops.torch_extras import index_put
from ..tensor import Tensor
from .coalesce import coalesce, linear_index
from .convert import coordinates, to_compressed, to_coo
from .tensor import SparseCompressedTensor, SparseCooTensor, SparseTensor, make_coo

__all__ = ["map_values", "ZERO_PRESERVING", "LINEAR", "assign"]

#: Elementwise functions (the dispatchers' names) with f(0) == 0: sparse in, sparse out.
ZERO_PRESERVING = ("abs", "sqrt", "square", "sin", "tan", "tanh", "asin", "atan", "sinh",
                   "asinh", "atanh", "erf", "expm1", "log1p", "sign", "floor", "ceil", "round",
                   "trunc", "relu", "isnan", "isinf", "signbit", "negative", "positive", "conj")
#: Of those, the linear ones: they apply to duplicates one by one (no coalescing).
LINEAR = frozenset(("negative", "positive", "conj"))


def _coalesced(s: SparseTensor) -> SparseTensor:
    """COO: coalesced; compressed layouts store each position once already."""
    return coalesce(s) if isinstance(s, SparseCooTensor) else s


def map_values(s: SparseTensor, fn: Callable[[Tensor], Tensor], linear: bool = False
               ) -> SparseTensor:
    """``fn`` (with ``fn(0) == 0``) on the stored values; coalesced first unless linear."""
    src = s if linear else _coalesced(s)
    return src._with_values(fn(src._vals))


def _check_pair(op: str, a: Tensor, b: Tensor) -> None:
    if a._device is not b._device:
        raise DeviceMismatchError(mismatch_message(op, a.device, b.device))
    if tuple(a.shape) != tuple(b.shape):
        raise ShapeError(f"{op}: expected sizes of 'self' and 'other' to match, but "
                         f"{list(a.shape)} != {list(b.shape)}")


def _sparse_sum(op: str, a: SparseTensor, b: SparseTensor, sign: int) -> SparseTensor:
    """``a + sign * b`` for two sparse tensors of one shape and layout."""
    _check_pair(op, a, b)
    if a.layout is not b.layout:
        raise TypeError(f"{op}: sparse operands of layouts {a.layout} and {b.layout}; convert "
                        f"one (to_sparse_coo(), to_sparse_csr()...) first")
    d = _dt.promote_types(a._dtype, b._dtype)
    ca, cb = to_coo(a), to_coo(b)
    if ca.sparse_dim() != cb.sparse_dim():
        raise ShapeError(f"{op}: sparse operands with {ca.sparse_dim()} and {cb.sparse_dim()} "
                         f"sparse dimensions")
    vb = cb._vals if sign > 0 else -cb._vals
    out = make_coo(cat([ca._idx, cb._idx], 1), cat([ca._vals.to(d), vb.to(d)]), a.shape)
    if isinstance(a, SparseCompressedTensor):
        return to_compressed(out, a.layout)
    return coalesce(out) if ca._coalesced and cb._coalesced else out


def _dense_plus_sparse(op: str, d: Any, s: SparseTensor, sign: int) -> Tensor:
    if not isinstance(d, Tensor):
        raise RuntimeError(f"{op}(scalar, sparse) is not supported: a scalar added to every "
                           f"entry makes the result dense; use {op}(dense, sparse)")
    _check_pair(op, d, s)
    dt = _dt.promote_types(d._dtype, s._dtype)
    vals = s._vals.to(dt)
    if sign < 0:
        vals = -vals
    coords = coordinates(s)
    if not coords:
        return d.to(dt) + vals.sum(0)
    return index_put(d.to(dt), coords, vals, accumulate=True)


def _refuse_sparse_dense(op: str) -> RuntimeError:
    return RuntimeError(f"{op}(sparse, dense) is not supported. Use {op}(dense, sparse) "
                        f"instead (or convert the sparse operand with .to_dense())")


def _sum_op(op: str, sign: int) -> Callable[[Any, Any], Tensor]:
    def fn(a: Any, b: Any) -> Tensor:
        if non_strided(a) and non_strided(b):
            return _sparse_sum(op, a, b, sign)
        if non_strided(b):
            return _dense_plus_sparse(op, a, b, sign)
        raise _refuse_sparse_dense(op)
    return fn


register("add")(_sum_op("add", 1))
register("subtract")(_sum_op("sub", -1))


def _intersect(a: SparseTensor, b: SparseTensor) -> SparseTensor:
    """``a * b`` for two sparse tensors: the positions stored in both."""
    _check_pair("mul", a, b)
    ca, cb = coalesce(to_coo(a)), coalesce(to_coo(b))
    sizes = ca.shape[:ca.sparse_dim()]
    la, lb = linear_index(ca._idx, sizes), linear_index(cb._idx, sizes)
    nb = lb.shape[0]
    if nb == 0 or la.shape[0] == 0:
        hit_a = la[:0]
        hit_b = la[:0]
    else:
        pos = searchsorted(lb, la).clamp(max=nb - 1)
        hit_a = (lb[pos] == la).nonzero().reshape(-1)
        hit_b = pos[hit_a]
    vals = ca._vals.index_select(0, hit_a) * cb._vals.index_select(0, hit_b)
    out = make_coo(ca._idx.index_select(1, hit_a), vals, ca.shape, True)
    return to_compressed(out, a.layout) if isinstance(a, SparseCompressedTensor) else out


def _factor(s: SparseTensor, o: Any) -> Any:
    """What each stored value of ``s`` is multiplied by in ``s * o``: a scalar or 0-d
    ``o`` itself, a dense ``o`` (broadcastable to ``s``'s shape) at the stored positions."""
    if not isinstance(o, Tensor) or o.ndim == 0:
        return o
    if o._device is not s._device:
        raise DeviceMismatchError(mismatch_message("mul", s.device, o.device))
    try:
        full = o.expand(*s.shape)
    except (ShapeError, ValueError, RuntimeError):
        raise ShapeError(f"mul: a dense operand of shape {list(o.shape)} does not broadcast "
                         f"to the sparse operand's {list(s.shape)}") from None
    coords = coordinates(s)
    return full[coords] if coords else full.unsqueeze(0)


def _times(s: SparseTensor, o: Any) -> SparseTensor:
    """``s * o`` for a scalar, 0-d or dense ``o`` (see :func:`_factor`)."""
    return s._with_values(s._vals * _factor(s, o))


@register("multiply")
def multiply(a: Any, b: Any) -> Tensor:
    """Sparse products (see the module doc)."""
    if non_strided(a) and non_strided(b):
        return _intersect(a, b)
    return _times(a, b) if non_strided(a) else _times(b, a)


def _scalar_divisor(o: Any) -> None:
    if isinstance(o, Tensor) and o.ndim != 0:
        raise RuntimeError(f"Sparse division requires a scalar or zero-dim dense tensor "
                           f"divisor (got shape {list(o.shape)} for divisor)")


@register("divide")
def divide(a: Any, b: Any, rounding_mode: str | None = None) -> Tensor:
    """``sparse / scalar``; anything else is refused (it would divide by zero)."""
    if not non_strided(a) or non_strided(b):
        raise unsupported("div", a, b)
    _scalar_divisor(b)
    return a._with_values(_divide(a._vals, b, rounding_mode=rounding_mode))


@register("pow")
def power(a: Any, b: Any) -> Tensor:
    """``sparse ** p`` for a nonzero scalar exponent, on the coalesced values."""
    if not non_strided(a) or isinstance(b, Tensor) and b.ndim != 0 or non_strided(b):
        raise unsupported("pow", a, b)
    if b == 0:
        raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would "
                           "make the result tensor dense")
    return map_values(a, lambda v: v ** b)


def _unary(name: str) -> Callable[[Any], Tensor]:
    fn = getattr(ew, name)
    linear = name in LINEAR
    return lambda x: map_values(x, fn, linear)


for _name in ZERO_PRESERVING:
    register(_name)(_unary(_name))
del _name


# ------------------------------------------------------------------------- in place
def check_inplace(x: SparseTensor) -> None:
    """torch's rule: no in-place change of a leaf that requires grad."""
    if is_grad_enabled() and x.requires_grad and x.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


def assign(x: SparseTensor, res: SparseTensor) -> SparseTensor:
    """Make ``x`` hold ``res``'s components (in-place ops that change the stored entries);
    the values keep ``x``'s dtype."""
    if res.layout is not x.layout:
        res = to_compressed(res, x.layout) if isinstance(x, SparseCompressedTensor) else \
            to_coo(res)
    if res._dtype is not x._dtype:
        res = res._with_values(res._vals.to(x._dtype))
    x.__dict__.update(res.__dict__)
    x.__dict__.pop("_grad_memo", None)
    return x


def _isum_op(op: str, sign: int) -> Callable[[Any, Any], Tensor]:
    def fn(x: Any, other: Any) -> Tensor:
        if non_strided(x):
            if not non_strided(other):
                raise _refuse_sparse_dense(op + "_")
            check_inplace(x)
            return assign(x, _sparse_sum(op, x, other, sign))
        _check_pair(op + "_", x, other)
        coords = coordinates(other)
        vals = other._vals.to(x._dtype)
        if not coords:
            return x.add_(vals.sum(0) * sign)
        _write(x, normalize_key(x, coords), vals if sign > 0 else -vals, accumulate=True)
        x._bump_version()
        return x
    return fn


register("add_")(_isum_op("add", 1))
register("subtract_")(_isum_op("sub", -1))


@register("multiply_")
def multiply_(x: Any, other: Any) -> Tensor:
    """``sparse *= scalar / dense`` on the values in place; ``*= sparse`` restructures."""
    if not non_strided(x):
        raise unsupported("mul_", x, other)
    check_inplace(x)
    if non_strided(other):
        return assign(x, _intersect(x, other))
    x._vals.mul_(_factor(x, other))
    return x


@register("divide_")
def divide_(x: Any, other: Any) -> Tensor:
    """``sparse /= scalar`` on the values in place."""
    if not non_strided(x) or non_strided(other):
        raise unsupported("div_", x, other)
    _scalar_divisor(other)
    check_inplace(x)
    x._vals.div_(other)
    return x
