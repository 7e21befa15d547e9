"""Ops of three operands: ``where`` and ``clamp``/``clip``."""
from __future__ import annotations

from typing import Any

from ...errors import DTypeError
from .. import dtypes as _dt
from ..graph import needs_grad, no_grad_ctx, record
from ..shape_util import broadcast_shapes
from ..tensor import Tensor, _make
from .elementwise import _PY_OF_KIND, _backend_failure, _mixed_devices, maximum, minimum

_SCALARS = (bool, int, float, complex)


def _common(op: str, tensors: list[Any]) -> Any:
    """The device shared by the tensor operands (0-d cpu tensors join any device)."""
    dev = None
    first = None
    for t in tensors:
        if isinstance(t, Tensor):
            if dev is None:
                dev, first = t._device, t
            elif t._device is not dev:
                if t.ndim == 0 and t._device.type == "cpu":
                    continue
                assert first is not None  # set together with dev
                if first.ndim == 0 and first._device.type == "cpu":
                    dev, first = t._device, t
                    continue
                _mixed_devices(op, first, t)
    return dev


def _to(t: Any, d: _dt.DType, dev: Any, shape: tuple) -> Any:
    """Backend data of operand ``t`` in dtype ``d`` broadcast to ``shape`` (scalars pass)."""
    if not isinstance(t, Tensor):
        return _PY_OF_KIND[d.kind](t)
    be = dev.backend
    if t._device is not dev:  # a 0-d cpu tensor used as a value
        return _PY_OF_KIND[d.kind](t.item())
    data = t._data if t._dtype is d else be.astype(t._data, d.np)
    return data if data.shape == shape else be.broadcast_to(data, shape)


def _value_dtype(a: Any, b: Any) -> _dt.DType:
    ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
    if ta and tb:
        return _dt.promote_types(a._dtype, b._dtype)
    if ta:
        return _dt.promote_types(a._dtype, _dt.scalar_dtype(b, a._dtype)) \
            if isinstance(b, _SCALARS) else a._dtype
    if tb:
        return _dt.promote_types(b._dtype, _dt.scalar_dtype(a, b._dtype))
    return _dt.result_type(a, b)


def where(condition: Tensor, x1: Any, x2: Any) -> Tensor:
    """``x1`` where ``condition`` else ``x2``; all three broadcast, values promoted."""
    if not isinstance(condition, Tensor):
        raise TypeError(f"where: condition must be a Tensor, got {type(condition).__name__}")
    if condition._dtype is not _dt.bool_:
        raise DTypeError(f"where: condition must be a bool tensor, got {condition.dtype.name}; "
                         f"compare first, e.g. where(x != 0, ...)")
    for v in (x1, x2):
        if not isinstance(v, (Tensor,) + _SCALARS):
            raise TypeError(f"where: values must be Tensors or Python scalars, got "
                            f"{type(v).__name__}")
    dev = _common("where", [condition, x1, x2])
    d = _value_dtype(x1, x2)
    shape = broadcast_shapes(*[t.shape for t in (condition, x1, x2) if isinstance(t, Tensor)])
    be = dev.backend
    try:
        c = _to(condition, _dt.bool_, dev, shape)
        if isinstance(c, _SCALARS):  # a 0-d cpu condition is a value: make it an operand
            c = be.broadcast_to(be.full((), c, _dt.bool_.np, dev.index), shape)
        a, b = _to(x1, d, dev, shape), _to(x2, d, dev, shape)
        if isinstance(a, _SCALARS) and isinstance(b, _SCALARS):
            # the contract: at least one array operand, which carries the result dtype
            a = be.broadcast_to(be.full((), a, d.np, dev.index), shape)
        data = be.where(c, a, b)
        if data.shape != shape:  # condition broadcast by the library
            data = be.copy(be.broadcast_to(data, shape))
    except Exception as e:  # noqa: BLE001
        raise _backend_failure("where", dev, e) from None
    out = _make(data, dev, d)
    if needs_grad(x1, x2) and d.kind in "fc":
        record("WhereBackward0", _where_backward, out,
               (None, x1 if isinstance(x1, Tensor) else None,
                x2 if isinstance(x2, Tensor) else None), (condition,))
    return out


def _where_backward(node: Any, g: Tensor) -> tuple:
    (cond,) = node.saved_tensors
    ga = where(cond, g, 0) if node.needs_input_grad[1] else None
    gb = where(cond, 0, g) if node.needs_input_grad[2] else None
    return None, ga, gb


def clamp(x: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """torch's clamp: ``minimum(maximum(x, min), max)``, promoting with tensor bounds."""
    if not isinstance(x, Tensor):
        raise TypeError(f"clamp: expected a Tensor, got {type(x).__name__}")
    if min is None and max is None:
        raise ValueError("clamp: at least one of min and max must be given")
    with no_grad_ctx():
        out = x
        if min is not None:
            out = maximum(out, min)
        if max is not None:
            out = minimum(out, max)
        if out is x:
            out = x.clone()
    if needs_grad(x, min, max) and out._dtype.kind in "fc":
        ins = (x, min if isinstance(min, Tensor) else None,
               max if isinstance(max, Tensor) else None)
        record("ClampBackward1", _clamp_backward, out, ins, (x,),
               lo=min if not isinstance(min, Tensor) else None,
               hi=max if not isinstance(max, Tensor) else None,
               lo_t=isinstance(min, Tensor), hi_t=isinstance(max, Tensor),
               saved_bounds=(min if isinstance(min, Tensor) else None,
                             max if isinstance(max, Tensor) else None))
    return out


def _clamp_backward(node: Any, g: Tensor) -> tuple:
    (x,) = node.saved_tensors
    lo_b, hi_b = node.saved_bounds
    lo = lo_b if node.lo_t else node.lo
    hi = hi_b if node.hi_t else node.hi
    inside = None
    if lo is not None:
        inside = x >= lo
    if hi is not None:
        inside = (x <= hi) if inside is None else inside & (x <= hi)
    assert inside is not None  # clamp takes at least one bound
    gx = where(inside, g, 0)
    # min > max: the result is max everywhere (torch's clamp_backward_min_max)
    crossed = (hi < lo) if lo is not None and hi is not None else None
    glo = ghi = None
    if node.lo_t and node.needs_input_grad[1]:
        below = x < lo
        glo = where(below if crossed is None else below & ~crossed, g, 0)
    if node.hi_t and node.needs_input_grad[2]:
        above = x > hi
        ghi = where(above if crossed is None else above | crossed, g, 0)
    return gx, glo, ghi


def clip(x: Tensor, /, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """Array API ``clip``: like clamp, but the result keeps ``x``'s dtype."""
    if min is None and max is None:
        return x.clone()
    out = clamp(x, min, max)
    return out if out._dtype is x._dtype else out.to(x._dtype)
