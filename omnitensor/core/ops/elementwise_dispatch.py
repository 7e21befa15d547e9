"""The elementwise dispatch machinery: how one row of the op table (``elementwise``) runs.

An op row (``UnaryOp``/``BinaryOp``) holds a name, a dtype rule (``dtype_rules``), the
backend primitive or forward that computes it and its backward formula. The dispatchers
here resolve the rule, move and broadcast operands, call the backend and record the graph.

The hot path (``_binary``) is kept flat: a memoised dtype rule, one device identity check,
broadcasting only when shapes differ, one backend call, and graph recording only when an
input requires grad.
"""
from __future__ import annotations

from typing import Any, Callable

from ...errors import (BackendError, DeviceMismatchError, IntegerDivisionByZeroError,
                       OmnitensorError, ShapeError, mismatch_message)
from .. import capture_hooks
from .. import dtypes as _dt
from .. import oom as _oom
from ..grad_mode import INFERENCE_ACTIVE
from ..graph import _mode, record
from ..layout_dispatch import LayoutError, dispatch as layout_dispatch
from ..shape_util import broadcast_shapes
from ..tensor import Tensor, _make
from .elementwise_forwards import _PY_OF_KIND
from .inplace import apply_inplace, check_leaf  # in-place ops under autograd (rebase, CopySlices)

_new = object.__new__
_SCALARS = (bool, int, float, complex)


def _backend_failure(op: str, dev: Any, err: Exception) -> Exception:
    if isinstance(err, OmnitensorError):
        return err
    if _oom.is_out_of_memory(err):
        return _oom.translate(err, dev)
    return BackendError(f"{op} failed on {dev} ({dev.backend.name} backend): "
                        f"{type(err).__name__}: {err}")


# ------------------------------------------------------------------------- row types
_TORCH_NODE_NAMES = {"multiply": "Mul", "subtract": "Sub", "divide": "Div", "negative": "Neg",
                     "positive": "Positive", "remainder": "Remainder", "floor_divide":
                     "FloorDivide", "reciprocal": "Reciprocal", "bitwise_invert": "BitwiseNot"}


def _node_name(name: str) -> str:
    """torch's grad_fn names: ``MulBackward0`` for multiply..."""
    base = _TORCH_NODE_NAMES.get(name) or "".join(p.capitalize() for p in name.split("_"))
    return base + "Backward0"


class UnaryOp:
    """One elementwise op of one operand."""

    __slots__ = ("name", "rule", "grad", "save", "prim", "forward", "node_name", "_cache")

    def __init__(self, name: str, rule: Callable, grad: Callable | None = None,
                 save: str = "", prim: str | None = None,
                 forward: Callable | None = None) -> None:
        self.name = name
        self.rule = rule
        self.grad = grad          # grad(g, x, out) -> gx
        self.save = save          # which of "x", "out" the formula reads
        self.prim = prim or name  # backend primitive
        self.forward = forward    # forward(backend, data, compute_dtype) when not a primitive
        self.node_name = _node_name(name)
        self._cache: dict = {}

    def resolve(self, d: _dt.DType) -> tuple[_dt.DType, _dt.DType]:
        r = self._cache.get(d)
        if r is None:
            r = self._cache[d] = _computing(self.rule(self.name, d))
        return r


class BinaryOp:
    """One elementwise op of two operands (tensors or weak Python scalars)."""

    __slots__ = ("name", "rule", "grad", "save", "save_names", "save_when", "prim", "forward",
                 "node_name", "divides", "_cache")

    def __init__(self, name: str, rule: Callable, grad: Callable | None = None,
                 save: str = "", prim: str | None = None,
                 save_when: dict[str, str] | None = None,
                 forward: Callable | None = None, divides: bool = False) -> None:
        self.name = name
        self.rule = rule
        self.grad = grad          # grad(g, a, b, out) -> (ga, gb); unsaved operands are None
        self.save = save          # which of "a", "b", "out" the formula reads
        self.save_names = tuple(n for n in save.split(",") if n)
        # {"a": "b"}: save a only when b requires grad (torch saves no more than needed,
        # so a later in-place change of an unneeded operand is not an error)
        self.save_when = save_when or {}
        self.prim = prim or name
        self.forward = forward    # forward(backend, a, b, compute_dtype) when not a primitive
        self.node_name = _node_name(name)
        # b is a divisor: an integer zero raises (``_check_divisor``) before anything runs
        self.divides = divides
        self._cache: dict = {}

    def resolve(self, a: _dt.DType, b: _dt.DType) -> tuple[_dt.DType, _dt.DType]:
        key = (a, b)
        r = self._cache.get(key)
        if r is None:
            r = self._cache[key] = _computing(self.rule(self.name, a, b))
        return r


def _computing(rule: tuple[_dt.DType, _dt.DType]) -> tuple[_dt.DType, _dt.DType]:
    """A rule's (compute, result) pair with a storage dtype's compute dtype: bfloat16 ops
    compute in float32; the dispatchers round a bfloat16 result once (``_BF16`` below)."""
    cd, od = rule
    return (cd.compute, od) if cd.compute is not cd else rule


_BF16 = _dt.bfloat16  # results of this dtype were computed in float32: cast once


# ------------------------------------------------------------------------- dispatch
def _unary(op: UnaryOp, x: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op.name}: expected a Tensor, got {type(x).__name__}")
    d = x._dtype
    cd, od = op._cache.get(d) or op.resolve(d)
    dev = x._device
    be = dev.backend
    try:
        data = x._data
        if d is not cd:
            data = be.astype(data, cd.np)
        if op.forward is None:
            data = getattr(be, op.prim)(data)
        else:
            data = op.forward(be, data, cd)
        if od is _BF16:
            data = be.astype(data, od.np)
    except LayoutError:  # a sparse operand has no _data: the layout's own op (free here)
        return layout_dispatch(op.name, x)
    except Exception as e:  # noqa: BLE001 - translated into an omnitensor error
        raise _backend_failure(op.name, dev, e) from None
    out = _make(data, dev, od)
    if _mode.enabled and x.requires_grad and op.grad is not None and od.kind in "fc":
        saved = (x,) if op.save == "x" else (out,) if op.save == "out" else \
            (x, out) if op.save == "x,out" else ()
        record(op.node_name, _unary_backward, out, (x,), saved, op=op)
    return out


def _unary_backward(node: Any, g: Tensor) -> tuple:
    op = node.op
    saved = node.saved_tensors
    x = saved[0] if op.save in ("x", "x,out") else None
    out = saved[-1] if op.save in ("out", "x,out") else None
    return (op.grad(g, x, out),)


def _operands(op_name: str, a: Any, b: Any) -> tuple:
    """Resolve (device, dtype of a, dtype of b) for tensor/scalar operands."""
    if isinstance(a, Tensor):
        da = a._dtype
        if isinstance(b, Tensor):
            db = b._dtype
            if b._device is not a._device:
                return _mixed_devices(op_name, a, b)
            return a._device, da, db, a, b
        if isinstance(b, _SCALARS):
            return a._device, da, _dt.scalar_dtype(b, da), a, b
    elif isinstance(b, Tensor) and isinstance(a, _SCALARS):
        db = b._dtype
        return b._device, _dt.scalar_dtype(a, db), db, a, b
    raise TypeError(f"{op_name}: expected Tensors or Python scalars, got "
                    f"{type(a).__name__} and {type(b).__name__}")


def _mixed_devices(op_name: str, a: Tensor, b: Tensor) -> tuple:
    # a 0-d cpu tensor is not "on a device" (torch): it joins the other operand's device
    # as a value, keeping its dtype
    if b.ndim == 0 and b._device.type == "cpu":
        return a._device, a._dtype, b._dtype, a, _CpuScalar(b)
    if a.ndim == 0 and a._device.type == "cpu":
        return b._device, a._dtype, b._dtype, _CpuScalar(a), b
    raise DeviceMismatchError(mismatch_message(op_name, a._device, b._device))


class _CpuScalar:
    """A 0-d cpu tensor used as an operand on another device (a strong-dtype value)."""

    __slots__ = ("tensor", "value")

    def __init__(self, t: Tensor) -> None:
        self.tensor = t
        self.value = t.item()


def _operand_data(x: Any, d: _dt.DType, cd: _dt.DType, be: Any) -> Any:
    if isinstance(x, Tensor):
        data = x._data
        return data if d is cd else be.astype(data, cd.np)
    if isinstance(x, _CpuScalar):
        x = x.value
    return _PY_OF_KIND[cd.kind](x)


def _binary(op: BinaryOp, a: Any, b: Any) -> Tensor:
    # fast path: two tensors on one device (the common case), kept flat on purpose
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a._device is b._device:
        dev = a._device
        da = a._dtype
        db = b._dtype
        cd, od = op._cache.get((da, db)) or op.resolve(da, db)
        if op.divides and cd.kind in "iu":
            _check_divisor(a, b)
        be = dev.backend
        try:
            ad = a._data
            bd = b._data
            if da is not cd:
                ad = be.astype(ad, cd.np)
            if db is not cd:
                bd = be.astype(bd, cd.np)
            sa = ad.shape
            sb = bd.shape
            if sa != sb:
                shape = broadcast_shapes(sa, sb)  # validates, and names the shapes if not
                if not be.native_broadcasting:
                    if sa != shape:
                        ad = be.broadcast_to(ad, shape)
                    if sb != shape:
                        bd = be.broadcast_to(bd, shape)
            fwd = op.forward
            data = getattr(be, op.prim)(ad, bd) if fwd is None else fwd(be, ad, bd, cd)
            if od is _BF16:
                data = be.astype(data, od.np)
        except ShapeError as e:
            raise ShapeError(f"{op.name}: {e}") from None
        except LayoutError:
            return layout_dispatch(op.name, a, b)
        except Exception as e:  # noqa: BLE001
            raise _backend_failure(op.name, dev, e) from None
        out = _new(Tensor)  # _make, inlined
        out._data = data
        out._device = dev
        out._dtype = od
        out.requires_grad = False
        out.grad_fn = None
        if INFERENCE_ACTIVE and _mode.inference:  # tensor._make's rule
            out._inference = True
        if (a.requires_grad or b.requires_grad) and _mode.enabled and op.grad is not None \
                and od.kind in "fc":
            _record_binary(op, a, b, out)
        return out
    return _binary_general(op, a, b)


_NO_BOOL_SCALAR = frozenset({"subtract"})  # ops whose rule refuses a Python bool operand


def _binary_general(op: BinaryOp, a: Any, b: Any) -> Tensor:
    """Scalars, 0-d cpu tensors on other devices, and mismatched devices."""
    given = (a, b)
    if op.name in _NO_BOOL_SCALAR and (a.__class__ is bool or b.__class__ is bool):
        # a Python bool is weak (it takes the tensor's dtype), but torch still refuses it
        # here: its rule sees the bool it is
        op.rule(op.name, _dt.bool_ if a.__class__ is bool else a._dtype,
                _dt.bool_ if b.__class__ is bool else b._dtype)
    dev, da, db, a, b = _operands(op.name, a, b)
    cd, od = op._cache.get((da, db)) or op.resolve(da, db)
    if op.divides and cd.kind in "iu":
        _check_divisor(a, b)
    be = dev.backend
    try:
        ad = _operand_data(a, da, cd, be)
        bd = _operand_data(b, db, cd, be)
        if isinstance(a, Tensor) and isinstance(b, Tensor):
            sa, sb = ad.shape, bd.shape
            if sa != sb:
                shape = broadcast_shapes(sa, sb)
                if sa != shape:
                    ad = be.broadcast_to(ad, shape)
                if sb != shape:
                    bd = be.broadcast_to(bd, shape)
        data = getattr(be, op.prim)(ad, bd) if op.forward is None else \
            op.forward(be, ad, bd, cd)
        if od is _BF16:
            data = be.astype(data, od.np)
    except ShapeError as e:
        raise ShapeError(f"{op.name}: {e}") from None
    except LayoutError:
        return layout_dispatch(op.name, *given)
    except Exception as e:  # noqa: BLE001
        raise _backend_failure(op.name, dev, e) from None
    out = _make(data, dev, od)
    if _mode.enabled and op.grad is not None and od.kind in "fc" and (
            getattr(a, "requires_grad", False) or getattr(b, "requires_grad", False)):
        _record_binary(op, a, b, out)
    return out


# torch's own message (``RuntimeError: ZeroDivisionError``); a compiled graph's check node
# raises RuntimeError with it too
_ZERO_DIVISION = "ZeroDivisionError"


def _check_divisor(a: Any, b: Any) -> None:
    """torch's rule for integer division (``floor_divide``/``remainder`` rows, so ``//``,
    ``%``, ``fmod``, ``div(rounding_mode=...)`` and the in-place forms, on every backend):
    a zero divisor raises, unless the result is empty. A scalar is checked on the host; a
    tensor costs one device reduction (a validation read: a check node under a capture)."""
    if isinstance(a, Tensor) and a.numel() == 0:
        return
    if isinstance(b, Tensor):
        if b.numel() == 0 or capture_hooks.check((b != 0).all(), _ZERO_DIVISION):
            return
    elif (b.value if isinstance(b, _CpuScalar) else b) != 0:
        return
    raise IntegerDivisionByZeroError(_ZERO_DIVISION)


def _record_binary(op: BinaryOp, a: Any, b: Any, out: Tensor) -> None:
    ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
    saved, names = [], []
    for name in op.save_names:
        value = a if name == "a" else b if name == "b" else out
        if not isinstance(value, Tensor):
            continue
        cond = op.save_when.get(name)
        if cond is not None:
            other = a if cond == "a" else b
            if not (isinstance(other, Tensor) and other.requires_grad):
                continue
        saved.append(value)
        names.append(name)
    sa = None if ta else (a.value if isinstance(a, _CpuScalar) else a)
    sb = None if tb else (b.value if isinstance(b, _CpuScalar) else b)
    record(op.node_name, _binary_backward, out, (a if ta else None, b if tb else None),
           tuple(saved), op=op, sa=sa, sb=sb, saved_names=tuple(names))


def _binary_backward(node: Any, g: Tensor) -> tuple:
    values = dict(zip(node.saved_names, node.saved_tensors))
    a = values.get("a", node.sa)
    b = values.get("b", node.sb)
    ga, gb = node.op.grad(g, a, b, values.get("out"))
    need_a, need_b = node.needs_input_grad
    return (ga if need_a else None), (gb if need_b else None)


def _binary_inplace(op: BinaryOp, x: Tensor, other: Any) -> Tensor:
    """``x op= other`` in place, with torch's casting and autograd rules."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op.name}_: expected a Tensor, got {type(x).__name__}")
    given = other  # as passed: _operands wraps a 0-d cpu tensor for another device
    # fast path: same device, same dtype, same shape, nothing to record (optimizer steps)
    if isinstance(other, Tensor) and other._device is x._device and \
            other._dtype is x._dtype and not (x.requires_grad or other.requires_grad):
        d = x._dtype
        cd, od = op._cache.get((d, d)) or op.resolve(d, d)
        try:
            xd, bd = x._data, other._data
        except LayoutError:  # param.add_(sparse_grad, ...), sparse.mul_(2)
            return layout_dispatch(op.name + "_", x, other)
        if cd is d and od is d and op.forward is None and xd.shape == bd.shape:
            if op.divides and cd.kind in "iu":
                _check_divisor(x, other)
            try:
                getattr(x._device.backend, op.prim)(xd, bd, out=xd)
            except Exception as e:  # noqa: BLE001
                raise _backend_failure(op.name + "_", x._device, e) from None
            x._bump_version()
            return x
    record_grad = _mode.enabled and (x.requires_grad or getattr(other, "requires_grad", False))
    if record_grad:
        check_leaf(x)
    dev, da, db, _, other = _operands(op.name, x, other)
    cd, od = op._cache.get((da, db)) or op.resolve(da, db)
    if not _dt.can_cast(od, da, "same_kind"):
        raise _dt.DTypeError(f"{op.name}_: result type {od.name} can't be cast to the desired "
                             f"output type {da.name} of the in-place operation")
    if isinstance(other, Tensor) and broadcast_shapes(x.shape, other.shape) != x.shape:
        raise ShapeError(f"{op.name}_: output with shape {x.shape} doesn't match the "
                         f"broadcast shape {broadcast_shapes(x.shape, other.shape)}")
    if record_grad:
        return apply_inplace(x, lambda base: _binary(op, base, other), op.name)
    if op.divides and cd.kind in "iu":
        _check_divisor(x, other)
    be = dev.backend
    try:
        xd = x._data
        od_data = _operand_data(other, db, cd, be)
        if isinstance(other, Tensor) and od_data.shape != xd.shape:
            od_data = be.broadcast_to(od_data, xd.shape)
        if cd is da and od is da and op.forward is None:
            getattr(be, op.prim)(xd, od_data, out=xd)
        else:
            xin = _operand_data(x, da, cd, be)
            res = getattr(be, op.prim)(xin, od_data) if op.forward is None else \
                op.forward(be, xin, od_data, cd)
            be.assign(xd, be.astype(res, da.np) if od is not da or cd is not od else res)
    except LayoutError:
        return layout_dispatch(op.name + "_", x, given)
    except Exception as e:  # noqa: BLE001
        raise _backend_failure(op.name + "_", dev, e) from None
    x._bump_version()
    return x


def _unary_inplace(op: UnaryOp, x: Tensor) -> Tensor:
    record_grad = _mode.enabled and x.requires_grad
    if record_grad:
        check_leaf(x)
    cd, od = op.resolve(x._dtype)
    if not _dt.can_cast(od, x._dtype, "same_kind"):
        raise _dt.DTypeError(f"{op.name}_: result type {od.name} can't be cast to the desired "
                             f"output type {x._dtype.name} of the in-place operation")
    if record_grad:
        return apply_inplace(x, lambda base: _unary(op, base), op.name)
    res = _unary(op, x)
    be = x._device.backend
    be.assign(x._data, res._data if od is x._dtype else be.astype(res._data, x._dtype.np))
    x._bump_version()
    return x
