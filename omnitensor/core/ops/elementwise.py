"""Elementwise ops: the dispatch machinery and the op table.

Each op is one row: its name, its dtype rule (``dtype_rules``), how it runs (a backend
primitive of the same Array API name, or a small forward over primitives) and its backward
formula, written with Tensor ops so that it runs on every backend and is itself
differentiable (higher-order gradients). The functions ``omnitensor.exp``, ``add``... and
the methods/operators of Tensor are generated from these rows.

The hot path (``_binary``) is kept flat: a memoised dtype rule, one device identity check,
broadcasting only when shapes differ, one backend call, and graph recording only when an
input requires grad.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable

from ...errors import (BackendError, DeviceMismatchError, OmnitensorError, ShapeError,
                       mismatch_message)
from .. import dtypes as _dt
from ..autocast_state import FP32_GPU, autocast_operands, state as _autocast
from ..grad_mode import INFERENCE_ACTIVE
from ..graph import _mode, record
from ..layout_dispatch import LayoutError, dispatch as layout_dispatch
from ..shape_util import broadcast_shapes
from ..tensor import Tensor, _make
from . import dtype_rules as R
from .. import oom as _oom
from .elementwise_forwards import (_identity_for_integers, _float_predicate, _signbit,
                                  _positive, _real_part, _imag_part, _conj_forward, _rsqrt,
                                  _sigmoid, _sign, _relu, _floor_divide, _expm1, _tanh, _pow,
                                  pow_exponent, _PY_OF_KIND)
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


# --------------------------------------------------------------------------- op rows
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
                 "node_name", "_cache")

    def __init__(self, name: str, rule: Callable, grad: Callable | None = None,
                 save: str = "", prim: str | None = None,
                 save_when: dict[str, str] | None = None,
                 forward: Callable | None = None) -> None:
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


# ----------------------------------------------------------------- formula helpers
def _conj(t: Any) -> Any:
    if isinstance(t, complex):  # a Python scalar operand (``u * 1j``) is conjugated too
        return t.conjugate()
    return t.conj() if isinstance(t, Tensor) and t._dtype.kind == "c" else t


def _zeros_like(g: Tensor) -> Tensor:
    return g * 0


_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _sgn(x: Tensor) -> Tensor:
    """sign for reals, x/|x| for complex (0 at 0): the derivative of abs."""
    if x._dtype.kind != "c":
        return x.sign()
    a = x.abs()
    return where(a == 0, 0, x / where(a == 0, 1, a))


# ----------------------------------------------------------------------- the table
U = UnaryOp
UNARY_OPS: dict[str, UnaryOp] = {op.name: op for op in [
    U("negative", R.u_numeric, lambda g, x, y: -g),
    U("positive", R.u_numeric, lambda g, x, y: g, forward=_positive),
    U("abs", R.u_abs, lambda g, x, y: g * _sgn(x), "x"),
    U("exp", R.u_float, lambda g, x, y: g * _conj(y), "out"),
    U("expm1", R.u_float, lambda g, x, y: g * _conj(y + 1), "out", forward=_expm1),
    U("log", R.u_float, lambda g, x, y: g / _conj(x), "x"),
    U("log1p", R.u_float, lambda g, x, y: g / _conj(x + 1), "x"),
    U("log2", R.u_float, lambda g, x, y: g / (_conj(x) * _LN2), "x"),
    U("log10", R.u_float, lambda g, x, y: g / (_conj(x) * _LN10), "x"),
    U("sqrt", R.u_float, lambda g, x, y: g / (2 * _conj(y)), "out"),
    U("rsqrt", R.u_float, lambda g, x, y: g * (-0.5) * _conj(y * y * y), "out",
      forward=_rsqrt),
    U("square", R.u_square, lambda g, x, y: g * 2 * _conj(x), "x"),
    U("sin", R.u_float, lambda g, x, y: g * _conj(x.cos()), "x"),
    U("cos", R.u_float, lambda g, x, y: -g * _conj(x.sin()), "x"),
    U("tan", R.u_float, lambda g, x, y: g * _conj(1 + y * y), "out"),
    U("asin", R.u_float, lambda g, x, y: g / _conj((1 - x * x).sqrt()), "x"),
    U("acos", R.u_float, lambda g, x, y: -g / _conj((1 - x * x).sqrt()), "x"),
    U("atan", R.u_float, lambda g, x, y: g / _conj(1 + x * x), "x"),
    U("sinh", R.u_float, lambda g, x, y: g * _conj(x.cosh()), "x"),
    U("cosh", R.u_float, lambda g, x, y: g * _conj(x.sinh()), "x"),
    U("tanh", R.u_float, lambda g, x, y: g * _conj(1 - y * y), "out", forward=_tanh),
    U("asinh", R.u_float, lambda g, x, y: g / _conj((x * x + 1).sqrt()), "x"),
    U("acosh", R.u_float, lambda g, x, y: g / _conj((x - 1).sqrt() * (x + 1).sqrt()), "x"),
    U("atanh", R.u_float, lambda g, x, y: g / _conj(1 - x * x), "x"),
    U("erf", R.u_real_float, lambda g, x, y: g * _TWO_OVER_SQRT_PI * (-(x * x)).exp(), "x"),
    U("erfc", R.u_real_float, lambda g, x, y: g * -_TWO_OVER_SQRT_PI * (-(x * x)).exp(), "x"),
    U("sigmoid", R.u_float, lambda g, x, y: g * _conj(y * (1 - y)), "out",
      forward=_sigmoid),
    U("relu", R.u_real_numeric, lambda g, x, y: g * (y > 0), "out", forward=_relu),
    U("sign", R.u_sign, lambda g, x, y: _zeros_like(g), forward=_sign),
    U("floor", R.u_real_numeric, lambda g, x, y: _zeros_like(g),
      forward=_identity_for_integers("floor")),
    U("ceil", R.u_real_numeric, lambda g, x, y: _zeros_like(g),
      forward=_identity_for_integers("ceil")),
    U("round", R.u_numeric, lambda g, x, y: _zeros_like(g),
      forward=_identity_for_integers("round")),
    U("trunc", R.u_real_numeric, lambda g, x, y: _zeros_like(g),
      forward=_identity_for_integers("trunc")),
    U("reciprocal", R.u_float, lambda g, x, y: -g * _conj(y * y), "out"),
    U("isnan", R.u_predicate, forward=_float_predicate("isnan", False)),
    U("isinf", R.u_predicate, forward=_float_predicate("isinf", False)),
    U("isfinite", R.u_predicate, forward=_float_predicate("isfinite", True)),
    U("signbit", R.u_real_predicate, forward=_signbit),
    U("logical_not", R.u_logical),
    U("bitwise_invert", R.u_integer_or_bool),
    U("conj", R.u_any, lambda g, x, y: _conj(g), forward=_conj_forward),
    U("real", R.u_complex_part, lambda g, x, y: g, forward=_real_part),
    U("imag", R.u_complex_part, lambda g, x, y: g * 1j, forward=_imag_part),
]}


def _pow_grads(g: Tensor, a: Any, b: Any, out: Any) -> tuple:
    ga = gb = None
    if isinstance(a, Tensor) and a.requires_grad:
        if isinstance(b, (int, float)) and b == 0:
            ga = g * 0
        elif isinstance(b, Tensor):  # torch: 0 where b == 0, even at a == 0 (0 * inf)
            ga = where(b == 0, 0, g * _conj(b * a ** (b - 1)))
        else:
            ga = g * _conj(b * a ** (b - 1))
    if isinstance(b, Tensor) and b.requires_grad:
        base = a if isinstance(a, Tensor) else b * 0 + a
        # d/db a**b = a**b * log(a); defined as 0 where a == 0 and b >= 0 (torch)
        log_a = where((base == 0) & (b >= 0), 0, base.log()) if base._dtype.kind != "c" \
            else base.log()
        gb = g * _conj(out * log_a)
    return ga, gb


def _max_grads(g: Tensor, a: Any, b: Any, out: Any, pick_a: Callable) -> tuple:
    # ties split the gradient in half, as torch does
    half = g / 2
    ga = where(a == b, half, where(pick_a(a, b), g, 0))
    gb = where(a == b, half, where(pick_a(a, b), 0, g))
    return ga, gb


B = BinaryOp
BINARY_OPS: dict[str, BinaryOp] = {op.name: op for op in [
    B("add", R.b_arith, lambda g, a, b, y: (g, g)),
    B("subtract", R.b_subtract, lambda g, a, b, y: (g, -g)),
    B("multiply", R.b_arith, lambda g, a, b, y: (
        None if b is None else g * _conj(b), None if a is None else g * _conj(a)), "a,b",
      save_when={"a": "b", "b": "a"}),
    B("divide", R.b_true_divide, lambda g, a, b, y: (
        g / _conj(b), None if y is None else -g * _conj(y) / _conj(b)), "b,out",
      save_when={"out": "b"}),
    B("floor_divide", R.b_real_numeric, lambda g, a, b, y: (g * 0, g * 0),
      forward=_floor_divide),
    B("remainder", R.b_real_numeric,
      lambda g, a, b, y: (g, -g * (a // b) if isinstance(b, Tensor) else None), "a,b"),
    B("pow", R.b_pow, _pow_grads, "a,b,out", forward=_pow),
    B("maximum", R.b_real, lambda g, a, b, y: _max_grads(g, a, b, y, lambda p, q: p > q),
      "a,b"),
    B("minimum", R.b_real, lambda g, a, b, y: _max_grads(g, a, b, y, lambda p, q: p < q),
      "a,b"),
    B("atan2", R.b_real_float,
      lambda g, a, b, y: (g * b / (a * a + b * b), -g * a / (a * a + b * b)), "a,b"),
    B("hypot", R.b_real_float, lambda g, a, b, y: (g * a / y, g * b / y), "a,b,out"),
    B("logaddexp", R.b_real_float,
      lambda g, a, b, y: (g * (a - y).exp(), g * (b - y).exp()), "a,b,out"),
    B("copysign", R.b_real_float,
      lambda g, a, b, y: (g * where(a == 0, 0, y / where(a == 0, 1, a)), g * 0), "a,out"),
    B("nextafter", R.b_real_float, lambda g, a, b, y: (g, _zeros_like(g))),
    B("equal", R.b_equality),
    B("not_equal", R.b_equality),
    B("less", R.b_ordering),
    B("less_equal", R.b_ordering),
    B("greater", R.b_ordering),
    B("greater_equal", R.b_ordering),
    B("logical_and", R.b_logical),
    B("logical_or", R.b_logical),
    B("logical_xor", R.b_logical),
    B("bitwise_and", R.b_bitwise),
    B("bitwise_or", R.b_bitwise),
    B("bitwise_xor", R.b_bitwise),
    B("bitwise_left_shift", R.b_shift),
    B("bitwise_right_shift", R.b_shift),
]}


# ---------------------------------------------------------- public functions from rows
def _make_unary(op: UnaryOp) -> Callable[..., Tensor]:
    name = op.name
    if name in FP32_GPU:  # autocast runs these in float32 on accelerators (torch's CUDA list)
        def fn(x: Tensor, /) -> Tensor:
            if _autocast.active:
                x, = autocast_operands(name, x)
            return _unary(op, x)
    else:
        def fn(x: Tensor, /) -> Tensor:
            return _unary(op, x)
    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"Elementwise {op.name} (Array API / torch semantics)."
    return fn


def _binary_autocast(op: BinaryOp, a: Any, b: Any) -> Tensor:
    """:func:`_binary` for the ops autocast runs in float32 on accelerators (pow)."""
    if op.name == "pow":
        b = pow_exponent(a, b)
    if _autocast.active:
        a, b = autocast_operands(op.name, a, b)
    return _binary(op, a, b)


def binary_entry(op: BinaryOp) -> Callable[[BinaryOp, Any, Any], Tensor]:
    """The dispatcher a public entry (function or operator) of ``op`` calls."""
    return _binary_autocast if op.name in FP32_GPU else _binary


def _make_binary(op: BinaryOp) -> Callable[..., Tensor]:
    binary = binary_entry(op)

    def fn(x1: Any, x2: Any, /) -> Tensor:
        return binary(op, x1, x2)
    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"Elementwise {op.name} with broadcasting and type promotion."
    return fn


for _uop in UNARY_OPS.values():
    globals()[_uop.name] = _make_unary(_uop)
for _bop in BINARY_OPS.values():
    globals()[_bop.name] = _make_binary(_bop)
del _uop, _bop


if TYPE_CHECKING:
    # The loop above makes the op functions at runtime; type checkers do not run it, so each
    # one is declared here (tests/core/test_elementwise_decls.py keeps this equal to the table).
    # add and subtract are defined below with torch's alpha.
    def negative(x: Tensor, /) -> Tensor: ...
    def positive(x: Tensor, /) -> Tensor: ...
    def abs(x: Tensor, /) -> Tensor: ...  # noqa: A001
    def exp(x: Tensor, /) -> Tensor: ...
    def expm1(x: Tensor, /) -> Tensor: ...
    def log(x: Tensor, /) -> Tensor: ...
    def log1p(x: Tensor, /) -> Tensor: ...
    def log2(x: Tensor, /) -> Tensor: ...
    def log10(x: Tensor, /) -> Tensor: ...
    def sqrt(x: Tensor, /) -> Tensor: ...
    def rsqrt(x: Tensor, /) -> Tensor: ...
    def square(x: Tensor, /) -> Tensor: ...
    def sin(x: Tensor, /) -> Tensor: ...
    def cos(x: Tensor, /) -> Tensor: ...
    def tan(x: Tensor, /) -> Tensor: ...
    def asin(x: Tensor, /) -> Tensor: ...
    def acos(x: Tensor, /) -> Tensor: ...
    def atan(x: Tensor, /) -> Tensor: ...
    def sinh(x: Tensor, /) -> Tensor: ...
    def cosh(x: Tensor, /) -> Tensor: ...
    def tanh(x: Tensor, /) -> Tensor: ...
    def asinh(x: Tensor, /) -> Tensor: ...
    def acosh(x: Tensor, /) -> Tensor: ...
    def atanh(x: Tensor, /) -> Tensor: ...
    def erf(x: Tensor, /) -> Tensor: ...
    def erfc(x: Tensor, /) -> Tensor: ...
    def sigmoid(x: Tensor, /) -> Tensor: ...
    def relu(x: Tensor, /) -> Tensor: ...
    def sign(x: Tensor, /) -> Tensor: ...
    def floor(x: Tensor, /) -> Tensor: ...
    def ceil(x: Tensor, /) -> Tensor: ...
    def round(x: Tensor, /) -> Tensor: ...  # noqa: A001
    def trunc(x: Tensor, /) -> Tensor: ...
    def reciprocal(x: Tensor, /) -> Tensor: ...
    def isnan(x: Tensor, /) -> Tensor: ...
    def isinf(x: Tensor, /) -> Tensor: ...
    def isfinite(x: Tensor, /) -> Tensor: ...
    def signbit(x: Tensor, /) -> Tensor: ...
    def logical_not(x: Tensor, /) -> Tensor: ...
    def bitwise_invert(x: Tensor, /) -> Tensor: ...
    def conj(x: Tensor, /) -> Tensor: ...
    def real(x: Tensor, /) -> Tensor: ...
    def imag(x: Tensor, /) -> Tensor: ...

    def multiply(x1: Any, x2: Any, /) -> Tensor: ...
    def divide(x1: Any, x2: Any, /) -> Tensor: ...
    def floor_divide(x1: Any, x2: Any, /) -> Tensor: ...
    def remainder(x1: Any, x2: Any, /) -> Tensor: ...
    def pow(x1: Any, x2: Any, /) -> Tensor: ...  # noqa: A001
    def maximum(x1: Any, x2: Any, /) -> Tensor: ...
    def minimum(x1: Any, x2: Any, /) -> Tensor: ...
    def atan2(x1: Any, x2: Any, /) -> Tensor: ...
    def hypot(x1: Any, x2: Any, /) -> Tensor: ...
    def logaddexp(x1: Any, x2: Any, /) -> Tensor: ...
    def copysign(x1: Any, x2: Any, /) -> Tensor: ...
    def nextafter(x1: Any, x2: Any, /) -> Tensor: ...
    def equal(x1: Any, x2: Any, /) -> Tensor: ...
    def not_equal(x1: Any, x2: Any, /) -> Tensor: ...
    def less(x1: Any, x2: Any, /) -> Tensor: ...
    def less_equal(x1: Any, x2: Any, /) -> Tensor: ...
    def greater(x1: Any, x2: Any, /) -> Tensor: ...
    def greater_equal(x1: Any, x2: Any, /) -> Tensor: ...
    def logical_and(x1: Any, x2: Any, /) -> Tensor: ...
    def logical_or(x1: Any, x2: Any, /) -> Tensor: ...
    def logical_xor(x1: Any, x2: Any, /) -> Tensor: ...
    def bitwise_and(x1: Any, x2: Any, /) -> Tensor: ...
    def bitwise_or(x1: Any, x2: Any, /) -> Tensor: ...
    def bitwise_xor(x1: Any, x2: Any, /) -> Tensor: ...
    def bitwise_left_shift(x1: Any, x2: Any, /) -> Tensor: ...
    def bitwise_right_shift(x1: Any, x2: Any, /) -> Tensor: ...


def _forget_resolved_rules() -> None:
    """Empty every op's rule cache (in place: the trusted fast paths hold the dicts)."""
    ops: list[UnaryOp | BinaryOp] = [*UNARY_OPS.values(), *BINARY_OPS.values()]
    for op in ops:
        op._cache.clear()


_dt.on_default_dtype_change(_forget_resolved_rules)

_ADD, _SUB, _MUL = BINARY_OPS["add"], BINARY_OPS["subtract"], BINARY_OPS["multiply"]


def add(input: Any, other: Any, /, *, alpha: Any = 1) -> Tensor:  # noqa: A002
    """``input + alpha * other`` (torch's ``alpha``), with broadcasting and promotion."""
    if alpha != 1:
        other = _binary(_MUL, other, alpha)
    return _binary(_ADD, input, other)


def subtract(input: Any, other: Any, /, *, alpha: Any = 1) -> Tensor:  # noqa: A002
    """``input - alpha * other``."""
    if alpha != 1:
        other = _binary(_MUL, other, alpha)
    return _binary(_SUB, input, other)


def where(condition: Tensor, x1: Any, x2: Any, /) -> Tensor:
    """``x1`` where ``condition`` else ``x2``, broadcasting all three."""
    from .ternary import where as _where
    return _where(condition, x1, x2)


def clamp(x: Tensor, /, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """Limit values to ``[min, max]`` (tensors or scalars); NaN stays NaN."""
    from .ternary import clamp as _clamp
    return _clamp(x, min, max)
