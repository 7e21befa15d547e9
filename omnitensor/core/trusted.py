"""The trusted dispatch path: each op's own row in the op table, without re-validation.

A composite (``linear``, ``cross_entropy``, an optimizer update) establishes once, with
:func:`ops_for`, that its operands share one device and one floating dtype. After that no
op of its formula has anything left to decide: no dtype promotion, no device check, no
shape validation. :func:`ops_for` then returns :data:`ops`, whose functions have the names
and signatures of the Tensor methods the formulas use and run each op's row directly (its
backend primitive or forward, its result dtype, the backend's error translation);
otherwise it returns the ``Tensor`` class itself, whose methods are the checked path. So a
formula is written once and runs on either::

    def _forward(ops, x, w):
        return ops.matmul(x, ops.t(w))     # ops is trusted.ops or Tensor

What a caller of :data:`ops` guarantees: tensor operands of one op share a device and a
dtype (an integer index tensor may meet another of its own dtype); Python scalars are
representable in that dtype (weak scalars, as in torch); dims are in range and shapes
broadcastable. The trusted bodies run outside grad mode (a composite's forward under
no_grad, a backward without ``create_graph``, an optimizer step): in grad mode, where
autograd may record, and for the cases a fast body does not cover, each op is the
checked Tensor method itself, so the graph and every backward formula stay the op
table's own and nothing is decided per operand on the hot path. Results are
ordinary tensors; views are views (they share the version counter with their base).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from .grad_mode import INFERENCE_ACTIVE
from .graph import _mode
from .layout_dispatch import non_strided
from .shape_util import broadcast_shapes
from .tensor import Tensor, _make
from .ops.elementwise import BINARY_OPS, UNARY_OPS, _backend_failure
from .ops.elementwise_forwards import _PY_OF_KIND
from .ops import join as _join
from .ops.shape import _as_view

__all__ = ["ops", "ops_for", "inplace_ops_for"]

_new = object.__new__


def ops_for(*tensors: Tensor | None) -> Any:
    """:data:`ops` when every given tensor (None entries skipped) is on one device with
    one floating dtype, else the ``Tensor`` class (the checked path)."""
    first = None
    for t in tensors:
        if t is None:
            continue
        if first is None:
            # storage dtypes (bfloat16: computed in float32) take the checked path
            if t._dtype.kind != "f" or t._dtype.compute is not t._dtype:
                return Tensor
            first = t
        elif t._device is not first._device or t._dtype is not first._dtype:
            return Tensor
    return Tensor if first is None else ops


def inplace_ops_for(target: Tensor, *tensors: Tensor | None) -> Any:
    """:data:`ops` for in-place updates of ``target`` from ``tensors`` (None entries
    skipped) when all share its device, floating dtype and shape (an optimizer step:
    nothing may broadcast into a parameter), else the ``Tensor`` class."""
    dev, d, shape = target._device, target._dtype, target._data.shape
    if d.kind != "f" or d.compute is not d:
        return Tensor
    for t in tensors:
        if t is not None and (t._device is not dev or t._dtype is not d or
                              non_strided(t) or t._data.shape != shape):  # sparse grads
            return Tensor
    return ops


def _checked(name: str) -> Callable[..., Any]:
    """The Tensor method ``name`` (bound late: core/methods.py attaches the methods)."""
    def call(*args: Any) -> Any:
        return getattr(Tensor, name)(*args)
    return call


# ops whose result has the operands' (floating) dtype: for these the trusted path needs no
# dtype rule at all; the others (comparisons) look theirs up in the op row's cache
_SAME_DTYPE = frozenset(("add", "subtract", "multiply", "divide", "maximum", "minimum"))


def _binary(op_name: str, method: str) -> Callable[[Tensor, Any], Tensor]:
    op = BINARY_OPS[op_name]
    cache, prim, fwd, checked = op._cache, op.prim, op.forward, _checked(method)
    same = op_name in _SAME_DTYPE and fwd is None

    def fn(a: Tensor, b: Any) -> Tensor:
        if _mode.enabled:
            return checked(a, b)
        is_t = isinstance(b, Tensor)
        d = a._dtype
        if same and d.kind == "f":
            cd = od = d
        else:
            cd, od = cache.get((d, d)) or op.resolve(d, d)
        dev = a._device
        be = dev.backend
        ad = a._data
        try:
            if is_t:
                bd = b._data
                if d is not cd:
                    ad, bd = be.astype(ad, cd.np), be.astype(bd, cd.np)
                sa, sb = ad.shape, bd.shape
                if sa != sb and not be.native_broadcasting:
                    shape = broadcast_shapes(sa, sb)
                    if sa != shape:
                        ad = be.broadcast_to(ad, shape)
                    if sb != shape:
                        bd = be.broadcast_to(bd, shape)
            else:
                if d is not cd:
                    ad = be.astype(ad, cd.np)
                bd = _PY_OF_KIND[cd.kind](b)
            if fwd is None:
                data = getattr(be, prim)(ad, bd)
            else:
                data = fwd(be, ad, bd, cd)
        except Exception as e:  # noqa: BLE001 - translated into an omnitensor error
            raise _backend_failure(op_name, dev, e) from None
        out = _new(Tensor)  # _make, inlined (hot path)
        out._data = data
        out._device = dev
        out._dtype = od
        out.requires_grad = False
        out.grad_fn = None
        if INFERENCE_ACTIVE and _mode.inference:  # tensor._make's rule
            out._inference = True
        return out
    fn.__name__ = fn.__qualname__ = method
    return fn


def _binary_inplace(op_name: str, method: str) -> Callable[..., Tensor]:
    """``x op= alpha * other`` for a floating ``x`` outside any graph (``alpha``: only
    for add/sub, as torch's ``add_(other, alpha=)``)."""
    op = BINARY_OPS[op_name]
    prim = op.prim
    assert op_name in _SAME_DTYPE and op.forward is None

    def fn(x: Tensor, other: Any, alpha: Any = 1) -> Tensor:
        if _mode.enabled or x._dtype.kind != "f":
            if alpha != 1:
                return getattr(Tensor, method)(x, other, alpha=alpha)
            return getattr(Tensor, method)(x, other)
        be = x._device.backend
        xd = x._data
        try:
            if isinstance(other, Tensor):
                od = other._data
                if alpha != 1:
                    od = be.multiply(od, alpha if alpha.__class__ is float else float(alpha))
                if od.shape != xd.shape:
                    od = be.broadcast_to(od, xd.shape)
            else:
                od = other * alpha if other.__class__ is float else float(other) * alpha
            getattr(be, prim)(xd, od, out=xd)
        except Exception as e:  # noqa: BLE001
            raise _backend_failure(method, x._device, e) from None
        base = x._base  # x._bump_version(), inlined
        (x if base is None else base)._vc += 1
        return x
    fn.__name__ = fn.__qualname__ = method
    return fn


def _addc(prim: str, method: str) -> Callable[..., Tensor]:
    """``x += value * (t1 op t2)`` in place (torch's ``addcmul_``/``addcdiv_``)."""
    def fn(x: Tensor, tensor1: Tensor, tensor2: Tensor, value: Any = 1) -> Tensor:
        if _mode.enabled or x._dtype.kind != "f":
            return getattr(Tensor, method)(x, tensor1, tensor2, value=value)
        dev = x._device
        be = dev.backend
        xd = x._data
        try:
            t = getattr(be, prim)(tensor1._data, tensor2._data)
            if value != 1:
                be.multiply(t, value if value.__class__ is float else float(value), out=t)
            if t.shape != xd.shape:
                t = be.broadcast_to(t, xd.shape)
            be.add(xd, t, out=xd)
        except Exception as e:  # noqa: BLE001
            raise _backend_failure(method, dev, e) from None
        base = x._base
        (x if base is None else base)._vc += 1
        return x
    fn.__name__ = fn.__qualname__ = method
    return fn


def _unary(op_name: str, method: str) -> Callable[[Tensor], Tensor]:
    op = UNARY_OPS[op_name]
    cache, prim, fwd, checked = op._cache, op.prim, op.forward, _checked(method)

    def fn(x: Tensor) -> Tensor:
        if _mode.enabled:
            return checked(x)
        d = x._dtype
        cd, od = cache.get(d) or op.resolve(d)
        dev = x._device
        be = dev.backend
        data = x._data
        try:
            if d is not cd:
                data = be.astype(data, cd.np)
            data = getattr(be, prim)(data) if fwd is None else fwd(be, data, cd)
        except Exception as e:  # noqa: BLE001
            raise _backend_failure(op_name, dev, e) from None
        out = _new(Tensor)
        out._data = data
        out._device = dev
        out._dtype = od
        out.requires_grad = False
        out.grad_fn = None
        if INFERENCE_ACTIVE and _mode.inference:  # tensor._make's rule
            out._inference = True
        return out
    fn.__name__ = fn.__qualname__ = method
    return fn


def _axes(ndim: int, dim: Any) -> tuple[int, ...]:
    if dim is None:
        return tuple(range(ndim))
    if dim.__class__ is int:
        return (dim % ndim,)
    return tuple(sorted({int(a) % ndim for a in dim}))


def _reduction(prim: str, method: str) -> Callable[..., Tensor]:
    checked = _checked(method)

    def fn(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
        nd = x._data.ndim
        if _mode.enabled or x._dtype.kind != "f" or nd == 0:
            return checked(x, dim, keepdim)
        dev = x._device
        try:
            data = getattr(dev.backend, prim)(x._data, _axes(nd, dim), keepdim)
        except Exception as e:  # noqa: BLE001
            raise _backend_failure(method, dev, e) from None
        return _make(data, dev, x._dtype)
    fn.__name__ = fn.__qualname__ = method
    return fn


class ops:  # used as a namespace, like the Tensor class it stands in for
    """The trusted ops (see the module docstring); each mirrors the Tensor method of the
    same name on the domain its caller has established."""

    add = staticmethod(_binary("add", "add"))
    sub = staticmethod(_binary("subtract", "sub"))
    mul = staticmethod(_binary("multiply", "mul"))
    div = staticmethod(_binary("divide", "div"))
    maximum = staticmethod(_binary("maximum", "maximum"))
    eq = staticmethod(_binary("equal", "eq"))
    ne = staticmethod(_binary("not_equal", "ne"))
    logical_and = staticmethod(_binary("logical_and", "logical_and"))
    add_ = staticmethod(_binary_inplace("add", "add_"))
    addcmul_ = staticmethod(_addc("multiply", "addcmul_"))
    addcdiv_ = staticmethod(_addc("divide", "addcdiv_"))
    sub_ = staticmethod(_binary_inplace("subtract", "sub_"))
    mul_ = staticmethod(_binary_inplace("multiply", "mul_"))
    div_ = staticmethod(_binary_inplace("divide", "div_"))
    neg = staticmethod(_unary("negative", "neg"))
    exp = staticmethod(_unary("exp", "exp"))
    log = staticmethod(_unary("log", "log"))
    sqrt = staticmethod(_unary("sqrt", "sqrt"))
    sum = staticmethod(_reduction("sum", "sum"))
    amax = staticmethod(_reduction("max", "amax"))

    @staticmethod
    def matmul(a: Tensor, b: Tensor) -> Tensor:
        """``a @ b`` for ``a`` of shape ``(..., K)`` and a matrix ``b``; the leading axes
        of ``a`` are folded into one GEMM (the checked matmul broadcasts ``b`` instead:
        the same numbers). For ``(..., M, K) @ (..., K, N)`` with broadcastable batch
        axes, one batched product."""
        if _mode.enabled or a._data.ndim == 0:
            return a.matmul(b)
        dev = a._device
        be = dev.backend
        ad = a._data
        if b._data.ndim != 2:
            bd = b._data
            if ad.ndim < 2 or bd.ndim < 2:
                return a.matmul(b)
            try:
                sa, sb = ad.shape[:-2], bd.shape[:-2]
                if sa != sb:
                    batch = broadcast_shapes(sa, sb)
                    if sa != batch:
                        ad = be.broadcast_to(ad, batch + ad.shape[-2:])
                    if sb != batch:
                        bd = be.broadcast_to(bd, batch + bd.shape[-2:])
                return _make(be.matmul(ad, bd), dev, a._dtype)
            except Exception as e:  # noqa: BLE001
                raise _backend_failure("matmul", dev, e) from None
        try:
            if ad.ndim == 2:
                return _make(be.matmul(ad, b._data), dev, a._dtype)
            lead = ad.shape[:-1]
            rows = 1
            for n in lead:
                rows *= n
            y = be.matmul(be.reshape(ad, (rows, ad.shape[-1])), b._data)
            return _make(be.reshape(y, lead + (y.shape[1],)), dev, a._dtype)
        except Exception as e:  # noqa: BLE001
            raise _backend_failure("matmul", dev, e) from None

    @staticmethod
    def t(x: Tensor) -> Tensor:
        """The transpose of a matrix (a view)."""
        if _mode.enabled or x._data.ndim != 2:
            return x.t()
        return _as_view(x, x._device.backend.permute(x._data, (1, 0)), _transpose)

    @staticmethod
    def reshape(x: Tensor, shape: tuple[int, ...]) -> Tensor:
        """``x`` with the explicit ``shape`` (no -1), a view when strides allow."""
        if _mode.enabled:
            return x.reshape(shape)
        try:
            data = x._device.backend.reshape(x._data, shape)
        except Exception as e:  # noqa: BLE001
            raise _backend_failure("reshape", x._device, e) from None
        return _as_view(x, data, lambda b: b.reshape(shape))

    @staticmethod
    def unsqueeze(x: Tensor, dim: int) -> Tensor:
        """``x`` with a new axis of size 1 at ``dim`` (a view)."""
        if _mode.enabled:
            return x.unsqueeze(dim)
        shape = x._data.shape
        d = dim % (len(shape) + 1)
        new = shape[:d] + (1,) + shape[d:]
        return _as_view(x, x._device.backend.reshape(x._data, new),
                        lambda b: b.unsqueeze(d))

    @staticmethod
    def to(x: Tensor, dtype: Any) -> Tensor:
        """``x`` converted to the DType ``dtype`` (``x`` itself when it has it)."""
        if dtype is x._dtype:
            return x
        if _mode.enabled:
            return x.to(dtype)
        dev = x._device
        try:
            return _make(dev.backend.astype(x._data, dtype.np), dev, dtype)
        except Exception as e:  # noqa: BLE001
            raise _backend_failure("to", dev, e) from None

    @staticmethod
    def clone(x: Tensor) -> Tensor:
        """A copy of ``x``."""
        if _mode.enabled:
            return x.clone()
        return _make(x._device.backend.copy(x._data), x._device, x._dtype)

    @staticmethod
    def copy_(x: Tensor, src: Tensor) -> Tensor:
        """Write ``src`` (same device and dtype, broadcastable) into ``x`` in place."""
        if _mode.enabled:
            return x.copy_(src)
        be = x._device.backend
        sd = src._data
        if sd.shape != x._data.shape:
            sd = be.broadcast_to(sd, x._data.shape)
        be.assign(x._data, sd)
        x._bump_version()
        return x


    # ---- layout ops (window gathers: convolutions, pools). They move elements without
    # computing on them, so they need no dtype rule: one device and one dtype suffice.
    @staticmethod
    def index(x: Tensor, key: tuple[Any, ...]) -> Tensor:
        """``x[key]`` for a key already in the backend contract's normal form (one entry
        per axis: ``slice(start, stop, step)`` with in-range int bounds or an in-range
        int, plus ``None`` entries that insert an axis): a view sharing ``x``'s version
        counter, without the checked path's key normalisation."""
        if _mode.enabled:
            return x[key]
        try:
            data = x._device.backend.index(x._data, key)
        except Exception as e:  # noqa: BLE001
            raise _backend_failure("getitem", x._device, e) from None
        return _as_view(x, data, lambda b: b[key])

    @staticmethod
    def narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
        """``x.narrow(dim, start, length)`` (a view; ``0 <= start <= start + length <=
        x.shape[dim]``)."""
        if _mode.enabled:
            return x.narrow(dim, start, length)
        shape = x._data.shape
        d = dim % len(shape)
        key = tuple(slice(start, start + length, 1) if i == d else slice(0, n, 1)
                    for i, n in enumerate(shape))
        return ops.index(x, key)

    @staticmethod
    def permute(x: Tensor, dims: tuple[int, ...]) -> Tensor:
        """``x`` with its axes in the order ``dims`` (non-negative, a permutation; a view)."""
        if _mode.enabled:
            return x.permute(dims)
        return _as_view(x, x._device.backend.permute(x._data, dims),
                        lambda b: b.permute(dims))

    @staticmethod
    def cat(tensors: Sequence[Tensor], dim: int) -> Tensor:
        """``cat(tensors, dim)`` of same-device, same-dtype tensors whose shapes agree off
        ``dim`` (non-negative): one backend concat."""
        if _mode.enabled:
            return _join.cat(tensors, dim)
        t0 = tensors[0]
        dev = t0._device
        try:
            data = dev.backend.concat([t._data for t in tensors], dim)
        except Exception as e:  # noqa: BLE001
            raise _backend_failure("cat", dev, e) from None
        return _make(data, dev, t0._dtype)

    @staticmethod
    def stack(tensors: Sequence[Tensor], dim: int) -> Tensor:
        """``stack(tensors, dim)`` of same-device, same-dtype, same-shape tensors
        (``0 <= dim <= ndim``): each gets a size-1 axis as a view, then one concat."""
        if _mode.enabled:
            return _join.stack(tensors, dim)
        t0 = tensors[0]
        dev = t0._device
        be = dev.backend
        shape = t0._data.shape
        new = shape[:dim] + (1,) + shape[dim:]
        try:
            data = be.concat([be.reshape(t._data, new) for t in tensors], dim)
        except Exception as e:  # noqa: BLE001
            raise _backend_failure("stack", dev, e) from None
        return _make(data, dev, t0._dtype)

    @staticmethod
    def full(shape: tuple[int, ...], value: Any, *, dtype: Any, device: Any) -> Tensor:
        """A new tensor of ``shape`` filled with ``value`` (representable in ``dtype``):
        ``dtype`` a DType and ``device`` a Device, as the Tensor attributes give them."""
        try:
            data = device.backend.full(shape, _PY_OF_KIND[dtype.kind](value), dtype.np,
                                       device.index)
        except Exception as e:  # noqa: BLE001
            raise _backend_failure("full", device, e) from None
        return _make(data, device, dtype)


def _transpose(b: Tensor) -> Tensor:
    return b.t()

