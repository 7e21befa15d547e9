"""torch's quantized tensors in checkpoints, rebuilt as data.

torch pickles one as ``torch._utils._rebuild_qtensor(storage, offset, size, stride,
quantizer_params, requires_grad, backward_hooks)`` on a ``QInt8Storage`` /
``QUInt8Storage`` / ``QInt32Storage`` holding the integers, with ``quantizer_params``
``(torch.per_tensor_affine, scale, zero_point)`` or ``(torch.per_channel_affine,
scales, zero_points, axis)`` (the last two tensors). Nothing here calls into the file: the
integers become an ordinary tensor (the usual strided rebuild) and the parameters are
checked before a :class:`~omnitensor.core.quantized.QuantizedTensor` is made of them.
"""
from __future__ import annotations

from typing import Any, Callable

from ..core import dtypes as _dt
from ..core.quantized import ops as _qops
from ..core.quantized import tensor as _qt
from ..core.tensor import Tensor
from .rebuild import LoadContext, StorageType

__all__ = ["quantized_globals", "storage_name_of"]

#: torch's quantized storage classes -> (the quantized dtype, its integers' dtype)
_STORAGES = {"QInt8Storage": _dt.qint8, "QUInt8Storage": _dt.quint8,
             "QInt32Storage": _dt.qint32}
_SCHEMES = ("per_tensor_affine", "per_channel_affine", "per_tensor_symmetric",
            "per_channel_symmetric", "per_channel_affine_float_qparams")


def storage_name_of(dtype: Any) -> str:
    """``torch.QInt8Storage`` & co.: the storage class torch writes a quantized dtype on."""
    return "torch." + next(k for k, v in _STORAGES.items() if v is dtype)


def _number(v: Any, kind: type, what: str, ctx: LoadContext) -> Any:
    if isinstance(v, bool) or not isinstance(v, (int, float) if kind is float else int):
        raise ctx.fail(f"a quantized tensor's {what} is {type(v).__name__}")
    return kind(v)


def _rebuilder(ctx: LoadContext) -> Callable[..., Tensor]:
    def rebuild_qtensor(storage: Any, offset: Any, size: Any, stride: Any,
                        quantizer_params: Any, requires_grad: Any = False,
                        backward_hooks: Any = None) -> Tensor:
        qdtype = getattr(storage, "dtype", None)
        if not isinstance(qdtype, _dt.DType) or not qdtype.is_quantized:
            raise ctx.fail("a quantized tensor is rebuilt from a storage that is not a "
                           "quantized storage")
        storage_dtype, _, _ = _qops.quant_range(qdtype, "torch.load")
        rep = ctx.rebuild(storage, offset, size, stride, False, storage_dtype)
        if not isinstance(quantizer_params, tuple) or not quantizer_params:
            raise ctx.fail(f"bad quantizer parameters {type(quantizer_params).__name__}")
        scheme, rest = quantizer_params[0], quantizer_params[1:]
        if scheme is _qt.per_tensor_affine and len(rest) == 2:
            scale = _number(rest[0], float, "scale", ctx)
            zero_point = _number(rest[1], int, "zero point", ctx)
            return _qt.make_per_tensor(rep, qdtype, scale, zero_point)
        if scheme is _qt.per_channel_affine and len(rest) == 3:
            scales, zero_points, axis = rest
            axis = _number(axis, int, "axis", ctx)
            if not (isinstance(scales, Tensor) and isinstance(zero_points, Tensor)
                    and 0 <= axis < rep.ndim and scales.ndim == zero_points.ndim == 1
                    and scales.shape[0] == zero_points.shape[0] == rep.shape[axis]):
                raise ctx.fail("a per-channel quantized tensor's scales, zero points and "
                               "axis do not fit its shape")
            dev = rep.device
            return _qt.make_per_channel(rep, qdtype, scales.to(dev, _dt.float64),
                                        zero_points.to(dev, _dt.int64), axis)
        raise ctx.fail(f"unsupported quantization scheme {scheme!r} with "
                       f"{len(rest)} parameters (omnitensor reads per_tensor_affine and "
                       f"per_channel_affine)")
    return rebuild_qtensor


def quantized_globals(ctx: LoadContext, call: str, value: str) -> dict[str, tuple[str, Any]]:
    """The allow-list entries for quantized tensors: the rebuild function (``call``
    kind), the quantized storage classes and the qscheme objects (``value`` kind)."""
    table: dict[str, tuple[str, Any]] = {
        "torch._utils._rebuild_qtensor": (call, _rebuilder(ctx))}
    for prefix in ("torch.", "torch.cuda."):
        for sname, qdtype in _STORAGES.items():
            table[prefix + sname] = (value, StorageType(sname, qdtype))
    for name in _SCHEMES:
        table[f"torch.{name}"] = (value, getattr(_qt, name))
    for d in (_dt.qint8, _dt.quint8, _dt.qint32):
        table[f"torch.{d.name}"] = (value, d)
    return table
