"""torch's top-level ops on quantized tensors (``torch.quantized_max_pool2d``,
``torch.quantized_batch_norm``...), written once with the dense ops on the integer
representation (see ``docs/quantized.md``)."""
from __future__ import annotations

from typing import Any

from ...core import dtypes as _dt
from ...core.graph import no_grad_ctx
from ...core.quantized.ops import quant_range
from ...core.quantized.tensor import QuantizedTensor, make_per_tensor
from ...core.tensor import Tensor
from .pooling import max_pool

__all__ = ["quantized_max_pool1d", "quantized_max_pool2d", "quantized_max_pool3d",
           "quantized_batch_norm"]


def _per_tensor(x: Any, op: str) -> QuantizedTensor:
    if not isinstance(x, QuantizedTensor):
        what = x.dtype.name if isinstance(x, Tensor) else type(x).__name__
        raise RuntimeError(f"{op}: expected a quantized tensor, got {what} (quantize it "
                           f"with quantize_per_tensor first)")
    if x._scales is not None:
        raise RuntimeError(f"{op}: only per-tensor quantized tensors are supported, got "
                           f"qscheme {x._qscheme!r}")
    return x


def _qmax_pool(x: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
               ceil_mode: bool, nd: int) -> QuantizedTensor:
    """Max pooling of the integers (the map to values is increasing), same parameters."""
    op = f"quantized_max_pool{nd}d"
    q = _per_tensor(x, op)
    stride = None if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
        else stride
    with no_grad_ctx():
        rep = max_pool(q._int, kernel_size, stride, padding, dilation, ceil_mode, False, nd,
                       op)
    return make_per_tensor(rep, q.dtype, q._scale, q._zero_point)


def quantized_max_pool1d(input: Any, kernel_size: Any, stride: Any = (),  # noqa: A002
                         padding: Any = 0, dilation: Any = 1,
                         ceil_mode: bool = False) -> QuantizedTensor:
    """Max pooling of a quantized ``(N, C, L)`` or ``(C, L)`` tensor."""
    return _qmax_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 1)


def quantized_max_pool2d(input: Any, kernel_size: Any, stride: Any = (),  # noqa: A002
                         padding: Any = 0, dilation: Any = 1,
                         ceil_mode: bool = False) -> QuantizedTensor:
    """Max pooling of a quantized ``(N, C, H, W)`` or ``(C, H, W)`` tensor."""
    return _qmax_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 2)


def quantized_max_pool3d(input: Any, kernel_size: Any, stride: Any = (),  # noqa: A002
                         padding: Any = 0, dilation: Any = 1,
                         ceil_mode: bool = False) -> QuantizedTensor:
    """Max pooling of a quantized ``(N, C, D, H, W)`` or ``(C, D, H, W)`` tensor."""
    return _qmax_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 3)


def quantized_batch_norm(input: Any, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
                         mean: Tensor, var: Tensor, eps: float, output_scale: float,
                         output_zero_point: int) -> QuantizedTensor:
    """Inference batch norm of a quantized ``(N, C, ...)`` tensor into one with
    ``output_scale`` and ``output_zero_point``: torch's fused form, ``zero_point +
    round(alpha[c] * (q - in_zero_point) + beta[c])`` with ``alpha = weight /
    sqrt(var + eps) * in_scale / out_scale`` and ``beta = (bias - mean * weight /
    sqrt(var + eps)) / out_scale``, in float32."""
    op = "quantized_batch_norm"
    q = _per_tensor(input, op)
    if q.ndim < 2:
        raise RuntimeError(f"{op}: expected an input of at least 2 dimensions (N, C, ...), "
                           f"got {q.ndim}")
    if weight is None or bias is None:  # torch's Tensor? in the schema, required in fact
        raise RuntimeError(f"{'Weight' if weight is None else 'Bias'} must be provided")
    storage, qmin, qmax = quant_range(q.dtype, op)
    c, dev, f32 = q.shape[1], q.device, _dt.float32
    with no_grad_ctx():
        def channel(v: Tensor) -> Tensor:
            if v.ndim != 1 or v.shape[0] != c:
                raise RuntimeError(f"{op}: expected per-channel tensors of {c} elements, "
                                   f"got shape {tuple(v.shape)}")
            return v.detach().to(dev, f32)
        w, b = channel(weight), channel(bias)
        inv_sigma = 1.0 / (channel(var) + float(f32.np.type(eps))).sqrt()
        ratio = float(f32.np.type(q._scale) / f32.np.type(output_scale))
        alpha = inv_sigma * w * ratio
        beta = (b - channel(mean) * inv_sigma * w) / float(f32.np.type(output_scale))
        view = (1, c) + (1,) * (q.ndim - 2)
        y = alpha.reshape(view) * (q._int.to(f32) - float(q._zero_point)) + beta.reshape(view)
        rep = (y.round().to(_dt.float64) + int(output_zero_point)).clamp(qmin, qmax)
        return make_per_tensor(rep.to(storage), q.dtype, float(output_scale),
                               int(output_zero_point))
