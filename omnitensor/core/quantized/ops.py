"""Quantizing, dequantizing and the accessors of quantized tensors, with their argument
rules (checked here once, so every device answers bad input the same way).

The arithmetic is torch's: ``q = clamp(zero_point + round(x * (1 / scale)), qmin, qmax)``
with ``1 / scale`` and the product in float32 and round-half-to-even (``nearbyint``), and
``x = (q - zero_point) * scale`` in float32 (per channel: in float64, then rounded). Every step is an ordinary Tensor op on the
integer representation, so it runs on every backend.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import dtypes as _dt
from ..graph import no_grad_ctx
from ..ops.creation import from_numpy, zeros
from ..tensor import Tensor
from .tensor import QuantizedTensor, make_per_channel, make_per_tensor

__all__ = ["quantize_per_tensor", "quantize_per_channel", "quantize_per_tensor_dynamic",
           "dequantize", "int_repr", "q_scale", "q_zero_point", "q_per_channel_scales",
           "q_per_channel_zero_points", "q_per_channel_axis", "qscheme_of", "empty_quantized",
           "quant_range", "torch_type_name", "check_float_input", "qparams"]

#: the integer representation's dtype and range of each supported quantized dtype
_STORAGE = {_dt.qint8: (_dt.int8, -128, 127), _dt.quint8: (_dt.uint8, 0, 255),
            _dt.qint32: (_dt.int32, -(2 ** 31), 2 ** 31 - 1)}
#: torch's ScalarType names, which its messages use
_TORCH_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half",
                "bfloat16": "BFloat16", "int64": "Long", "int32": "Int", "int16": "Short",
                "int8": "Char", "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
                "complex128": "ComplexDouble", "qint8": "QInt8", "quint8": "QUInt8",
                "qint32": "QInt32"}


def torch_type_name(dtype: Any) -> str:
    """torch's ScalarType name of ``dtype`` (``Float``, ``Long``...)."""
    return _TORCH_NAMES.get(dtype.name, dtype.name)


def quant_range(dtype: Any, op: str) -> tuple[Any, int, int]:
    """(storage dtype, qmin, qmax) of a quantized dtype; anything else is refused."""
    dtype = _dt.as_dtype(dtype)
    found = _STORAGE.get(dtype)
    if found is None:
        if dtype.is_quantized:
            raise RuntimeError(f"{op}: {dtype.name} (sub-byte packed) quantized tensors are "
                               f"not supported; use quint8, qint8 or qint32")
        raise RuntimeError(f"{op}: dtype must be a quantized dtype (quint8, qint8, qint32), "
                           f"got {dtype.name}")
    return found


def check_float_input(x: Any, op: str, allowed: tuple = (_dt.float32,)) -> None:
    """Quantization reads floating-point tensors only (torch: float32 for quantize)."""
    if not isinstance(x, Tensor) or isinstance(x, QuantizedTensor):
        what = "a quantized tensor" if isinstance(x, QuantizedTensor) else type(x).__name__
        raise TypeError(f"{op}: expected a float tensor, got {what}")
    if x.dtype not in allowed:
        raise RuntimeError(f"{op}: Quantize only works on Float Tensor, got "
                           f"{torch_type_name(x.dtype)}")


def _quantize(x: Tensor, inv_scale: Any, zero_point: Any, qmin: int, qmax: int,
              storage: Any) -> Tensor:
    """clamp(zero_point + round(x * inv_scale), qmin, qmax) as ``storage`` integers (the
    offset and clamp in float32 for 8-bit dtypes, where it is exact, and in float64, which
    holds every qint32 value exactly, for qint32)."""
    with no_grad_ctx():
        r = (x * inv_scale).round()
        if storage is _dt.int32:
            r = r.to(_dt.float64)
        return (r + zero_point).clamp(qmin, qmax).to(storage)


def _scalar_qparams(scale: Any, zero_point: Any) -> tuple[float, int]:
    if isinstance(scale, Tensor):
        scale = scale.item()
    if isinstance(zero_point, Tensor):
        zero_point = zero_point.item()
    return float(scale), int(zero_point)


def quantize_per_tensor(input: Any, scale: Any, zero_point: Any, dtype: Any) -> Any:  # noqa: A002
    """A per-tensor affine quantized tensor of the float32 ``input``; given a list of
    tensors (and tensors of scales and zero points), a list of quantized tensors."""
    if isinstance(input, (list, tuple)):
        return [quantize_per_tensor(t, scale[i], zero_point[i], dtype)
                for i, t in enumerate(input)]
    op = "quantize_per_tensor"
    check_float_input(input, op)
    storage, qmin, qmax = quant_range(dtype, op)
    s, z = _scalar_qparams(scale, zero_point)
    if z > qmax or z < qmin:
        raise RuntimeError(f"quantize_tensor_per_tensor_affine zero_point {z} is "
                           f"{'above upper' if z > qmax else 'below lower'} bound.")
    inv = _dt.float32.np.type(1.0) / _dt.float32.np.type(s)
    rep = _quantize(input, float(inv), z, qmin, qmax, storage)
    return make_per_tensor(rep, _dt.as_dtype(dtype), s, z)


def _channel_view(v: Tensor, axis: int, ndim: int) -> Tensor:
    return v.reshape(tuple(-1 if d == axis else 1 for d in range(ndim)))


def quantize_per_channel(input: Tensor, scales: Tensor, zero_points: Tensor, axis: int,  # noqa: A002
                         dtype: Any) -> QuantizedTensor:
    """A per-channel affine quantized tensor: channel ``i`` of dimension ``axis`` with
    ``scales[i]`` and ``zero_points[i]``."""
    op = "quantize_per_channel"
    check_float_input(input, op)
    storage, qmin, qmax = quant_range(dtype, op)
    axis = int(axis)
    if not 0 <= axis < input.ndim:
        raise RuntimeError(f"Channel axis out of range in per channel affine quantization. "
                           f"Got: {axis}Expected: [0, {input.ndim})")
    n = input.shape[axis]
    for name, v in (("scales", scales), ("zero_points", zero_points)):
        if not isinstance(v, Tensor) or v.ndim != 1 or v.shape[0] != n:
            got = v.shape[0] if isinstance(v, Tensor) and v.ndim == 1 else "another shape"
            raise RuntimeError(f"length of {name} must equal to channel, expected {n} got, "
                               f"{got}")
    # the per-channel parameters are small: checked and prepared on the host, once
    s_host = np.asarray(scales.detach().cpu().numpy(), np.float64)
    z_host = np.rint(np.asarray(zero_points.detach().cpu().numpy(), np.float64))
    for bad, word in ((z_host > qmax, "above upper"), (z_host < qmin, "below lower")):
        if bad.any():
            raise RuntimeError(f"quantize_tensor_per_channel_affine zero_point "
                               f"{int(z_host[bad][0])} is {word} bound.")
    dev, nd = input.device, input.ndim
    inv = np.float32(1.0) / s_host.astype(np.float32)
    z_work = z_host.astype(np.float64 if storage is _dt.int32 else np.float32)
    s64, z64 = from_numpy(s_host).to(dev), from_numpy(z_host.astype(np.int64)).to(dev)
    rep = _quantize(input, _channel_view(from_numpy(inv).to(dev), axis, nd),
                    _channel_view(from_numpy(z_work).to(dev), axis, nd), qmin, qmax, storage)
    return make_per_channel(rep, _dt.as_dtype(dtype), s64, z64, axis)


def qparams(lo: float, hi: float, qmin: int, qmax: int,
            preserve_sparsity: bool = False) -> tuple[float, int]:
    """torch's ``ChooseQuantizationParams``: the scale (a double) and zero point mapping
    [lo, hi] (widened to hold 0; made symmetric with ``preserve_sparsity``) onto [qmin,
    qmax], the zero point nudged to an integer. ``lo``/``hi`` are float32, as in torch."""
    f32 = _dt.float32.np.type
    lo, hi = f32(lo), f32(hi)
    if lo > hi:
        raise RuntimeError("In ChooseQuantizationParams, min should be less than or equal "
                           "to max")
    symmetric = bool(preserve_sparsity and lo < 0 < hi)
    if symmetric:
        sq_min, sq_max = -((qmax - qmin) // 2 + 1), (qmax - qmin) // 2
        m = max(abs(float(lo) / sq_min), abs(float(hi) / sq_max))
        lo, hi = f32(m * sq_min), f32(m * sq_max)
    lo, hi = min(lo, f32(0.0)), max(hi, f32(0.0))
    scale = (float(hi) - float(lo)) / (qmax - qmin)
    if float(f32(scale)) == 0.0 or not abs(1.0 / float(f32(scale))) < float("inf"):
        scale = 0.1
    small = f32(6.1e-5)  # torch's SMALL_SCALE_THRESHOLD
    if scale < small:
        org, scale = f32(scale), float(small)
        if lo == 0.0:
            hi = f32(small * (qmax - qmin))
        elif hi == 0.0:
            lo = f32(-small * (qmax - qmin))
        else:
            amp = f32(small / org)
            lo, hi = f32(lo * amp), f32(hi * amp)
    lo_s, hi_s = float(lo) / scale, float(hi) / scale
    z0 = qmin - lo_s if abs(qmin) - abs(lo_s) < abs(qmax) - abs(hi_s) else qmax - hi_s
    if symmetric:
        z0 = (qmin + qmax) / 2
    z = qmin if z0 < qmin else qmax if z0 > qmax else int(round(z0))
    return scale, z


def quantize_per_tensor_dynamic(input: Tensor, dtype: Any, reduce_range: bool) -> QuantizedTensor:  # noqa: A002
    """Quantized per tensor with parameters chosen from ``input``'s range (torch's
    dynamic quantization; ``reduce_range`` halves the integer range)."""
    op = "quantize_per_tensor_dynamic"
    check_float_input(input, op)
    dtype = _dt.as_dtype(dtype)
    if dtype not in (_dt.quint8, _dt.qint8):
        raise RuntimeError(f"{op}: dtype must be quint8 or qint8, got {dtype.name}")
    _, qmin, qmax = quant_range(dtype, op)
    if reduce_range:
        qmin, qmax = qmin // 2, qmax // 2
    with no_grad_ctx():
        lo, hi = (input.min().item(), input.max().item()) if input.numel() else (0.0, 0.0)
    scale, z = qparams(lo, hi, qmin, qmax)
    return quantize_per_tensor(input, scale, z, dtype)


def _expect(x: Any, op: str, per_channel: bool | None = None) -> QuantizedTensor:
    if not isinstance(x, QuantizedTensor):
        what = x.dtype.name if isinstance(x, Tensor) else type(x).__name__
        raise NotImplementedError(f"{op}() expects a quantized tensor, got a {what} tensor "
                                  f"(make one with quantize_per_tensor)")
    if per_channel is not None and (x._scales is not None) != per_channel:
        want = "per_channel_affine" if per_channel else "per_tensor_affine"
        raise RuntimeError(f"{op}() expects a {want} quantized tensor, got one with "
                           f"qscheme {x._qscheme!r}")
    return x


def dequantize(input: Any) -> Any:  # noqa: A002
    """The float32 values ``(int_repr - zero_point) * scale``; a float tensor is returned
    as it is, and a list of tensors gives a list."""
    if isinstance(input, (list, tuple)):
        return [dequantize(t) for t in input]
    if not isinstance(input, QuantizedTensor):
        if isinstance(input, Tensor):
            return input
        raise TypeError(f"dequantize: expected a tensor, got {type(input).__name__}")
    with no_grad_ctx():
        v = input._int.to(_dt.float32)
        if input._scales is None:
            return (v - float(input._zero_point)) * float(_dt.float32.np.type(input._scale))
        ax, nd = input._axis, input.ndim  # torch: per channel in float64, then rounded
        z = _channel_view(input._zero_points, ax, nd)  # type: ignore[arg-type]
        s = _channel_view(input._scales, ax, nd)
        return ((input._int.to(_dt.float64) - z) * s).to(_dt.float32)


def int_repr(input: Any) -> Tensor:  # noqa: A002
    """The integer representation (int8 for qint8, uint8 for quint8, int32 for qint32)."""
    return _expect(input, "int_repr")._int.clone()


def q_scale(input: Any) -> float:  # noqa: A002
    """The scale of a per-tensor quantized tensor."""
    return _expect(input, "q_scale", per_channel=False)._scale


def q_zero_point(input: Any) -> int:  # noqa: A002
    """The zero point of a per-tensor quantized tensor."""
    return _expect(input, "q_zero_point", per_channel=False)._zero_point


def q_per_channel_scales(input: Any) -> Tensor:  # noqa: A002
    """The per-channel scales (float64) of a per-channel quantized tensor."""
    return _expect(input, "q_per_channel_scales", per_channel=True)._scales.clone()  # type: ignore[union-attr]


def q_per_channel_zero_points(input: Any) -> Tensor:  # noqa: A002
    """The per-channel zero points (int64) of a per-channel quantized tensor."""
    x = _expect(input, "q_per_channel_zero_points", per_channel=True)
    return x._zero_points.clone()  # type: ignore[union-attr]


def q_per_channel_axis(input: Any) -> int:  # noqa: A002
    """The quantized dimension of a per-channel quantized tensor."""
    return _expect(input, "q_per_channel_axis", per_channel=True)._axis


def qscheme_of(input: Any) -> Any:  # noqa: A002
    """The quantization scheme (``per_tensor_affine`` or ``per_channel_affine``)."""
    return _expect(input, "qscheme")._qscheme


def empty_quantized(size: Sequence[int], qtensor: Any, *, dtype: Any = None,
                    layout: Any = None, device: Any = None, pin_memory: Any = None,
                    memory_format: Any = None) -> QuantizedTensor:
    """A quantized tensor of shape ``size`` with ``qtensor``'s quantization parameters
    (its integers are zeros: torch leaves them uninitialized)."""
    q = _expect(qtensor, "empty_quantized")
    qdtype = q.dtype if dtype is None else _dt.as_dtype(dtype)
    storage, _, _ = quant_range(qdtype, "empty_quantized")
    rep = zeros(tuple(size), dtype=storage, device=q.device if device is None else device)
    if q._scales is None:
        return make_per_tensor(rep, qdtype, q._scale, q._zero_point)
    return make_per_channel(rep, qdtype, q._scales.to(rep.device),
                            q._zero_points.to(rep.device), q._axis)  # type: ignore[union-attr]

