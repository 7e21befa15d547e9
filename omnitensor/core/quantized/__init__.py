"""Quantized tensors (torch's ``torch.ao`` tensors): an integer tensor on any device plus
per-tensor or per-channel affine parameters (see ``docs/quantized.md``)."""
from __future__ import annotations

from typing import Any

from .fake import (fake_quantize_per_channel_affine, fake_quantize_per_tensor_affine,
                   fused_moving_avg_obs_fake_quant)
from .observers import choose_qparams_optimized
from .ops import (dequantize, empty_quantized, int_repr, q_per_channel_axis,
                  q_per_channel_scales, q_per_channel_zero_points, q_scale, q_zero_point,
                  qscheme_of, quantize_per_channel, quantize_per_tensor,
                  quantize_per_tensor_dynamic)
from .tensor import (QuantizedTensor, per_channel_affine, per_channel_affine_float_qparams,
                     per_channel_symmetric, per_tensor_affine, per_tensor_symmetric, qscheme)

__all__ = ["QuantizedTensor", "qscheme", "per_tensor_affine", "per_channel_affine",
           "per_tensor_symmetric", "per_channel_symmetric", "per_channel_affine_float_qparams",
           "quantize_per_tensor", "quantize_per_channel", "quantize_per_tensor_dynamic",
           "dequantize", "int_repr", "q_scale", "q_zero_point", "q_per_channel_scales",
           "q_per_channel_zero_points", "q_per_channel_axis", "empty_quantized",
           "fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine",
           "fused_moving_avg_obs_fake_quant", "choose_qparams_optimized", "bind"]


def _dequantize(self: Any) -> Any:
    """The float32 values of a quantized tensor (a float tensor is itself)."""
    return dequantize(self)


def bind(T: Any) -> None:
    """Bind torch's quantized-tensor methods on :class:`Tensor` (``dequantize``,
    ``int_repr``, ``q_scale``, ``q_zero_point``, ``q_per_channel_*``, ``qscheme``)."""
    T.dequantize = _dequantize
    T.int_repr = int_repr
    T.q_scale = q_scale
    T.q_zero_point = q_zero_point
    T.q_per_channel_scales = q_per_channel_scales
    T.q_per_channel_zero_points = q_per_channel_zero_points
    T.q_per_channel_axis = q_per_channel_axis
    T.qscheme = qscheme_of
