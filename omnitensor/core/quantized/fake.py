"""Fake quantization: float ops that round values onto a quantization grid and back, with
torch's straight-through gradient (the gradient passes where ``zero_point + round(x /
scale)`` lies in ``[quant_min, quant_max]``, and is zero elsewhere).

The value and the mask are computed outside autograd; the gradient is recorded as
``fq + (x - x.detach()) * mask``: exactly ``fq`` forward, ``mask * grad`` backward, written
with Tensor ops so autograd (and higher orders) need no custom node.
"""
from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from ..graph import is_grad_enabled, no_grad_ctx
from ..ops.ternary import where
from ..shape_util import normalize_axis
from ..tensor import Tensor
from .ops import torch_type_name

__all__ = ["fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine",
           "fused_moving_avg_obs_fake_quant"]

_FLOATS = (_dt.float32, _dt.float64, _dt.float16, _dt.bfloat16)


def _check(x: Any, quant_min: int, quant_max: int, op: str) -> None:
    if not isinstance(x, Tensor) or getattr(x, "is_quantized", False):
        raise TypeError(f"{op}: expected a float tensor, got {type(x).__name__}")
    if x.dtype not in _FLOATS:
        raise NotImplementedError(f"{op}: not implemented for '{torch_type_name(x.dtype)}' "
                                  f"(fake quantization takes floating-point tensors)")
    if int(quant_min) > int(quant_max):
        raise RuntimeError("`quant_min` should be less than or equal to `quant_max`.")


def _straight_through(x: Tensor, fq: Tensor, mask: Tensor) -> Tensor:
    if not (x.requires_grad and is_grad_enabled()):
        return fq
    return fq + (x - x.detach()) * mask.to(x.dtype)


def _fake(x: Tensor, scale: Any, inv_scale: Any, zero_point: Any, float_zp: bool,
          quant_min: int, quant_max: int) -> Tensor:
    """(value, in-range mask) of fake quantization, outside autograd."""
    with no_grad_ctx():
        xd = x.detach()
        q = (xd * inv_scale + zero_point).round() if float_zp else \
            (xd * inv_scale).round() + zero_point
        mask = (q >= quant_min) & (q <= quant_max)
        fq = ((q.clamp(quant_min, quant_max) - zero_point) * scale).to(x.dtype)
    return _straight_through(x, fq, mask)


def fake_quantize_per_tensor_affine(input: Tensor, scale: Any, zero_point: Any,  # noqa: A002
                                    quant_min: int, quant_max: int) -> Tensor:
    """``(clamp(round(x / scale) + zero_point, quant_min, quant_max) - zero_point) * scale``
    (torch's arithmetic: ``1 / scale`` in float32), with the straight-through gradient."""
    op = "fake_quantize_per_tensor_affine"
    _check(input, quant_min, quant_max, op)
    if isinstance(scale, Tensor):
        scale = scale.item()
    if isinstance(zero_point, Tensor):
        zero_point = zero_point.item()
    z = int(zero_point)
    if not int(quant_min) <= z <= int(quant_max):
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    f32 = _dt.float32.np.type
    s = f32(scale)
    return _fake(input, float(s), float(f32(1.0) / s), float(z), False, int(quant_min),
                 int(quant_max))


def fake_quantize_per_channel_affine(input: Tensor, scale: Tensor, zero_point: Tensor,  # noqa: A002
                                     axis: int, quant_min: int, quant_max: int) -> Tensor:
    """Fake quantization with ``scale[i]`` and ``zero_point[i]`` along dimension ``axis``
    (an int32 zero point is added after rounding; a float one, torch's float qparams,
    before), with the straight-through gradient."""
    op = "fake_quantize_per_channel_affine"
    _check(input, quant_min, quant_max, op)
    if not isinstance(scale, Tensor) or not isinstance(zero_point, Tensor):
        raise TypeError(f"{op}: scale and zero_point must be tensors")
    if zero_point.dtype not in (_dt.int32, _dt.float32, _dt.float16):
        raise RuntimeError(f"Zero-point must be Int32, Float or Half, found "
                           f"{torch_type_name(zero_point.dtype)}")
    ax = normalize_axis(axis, input.ndim)  # torch: out of range is an IndexError...
    if int(axis) < 0:  # ...and a negative axis, though in range, is refused
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")
    n = input.shape[ax]
    if scale.ndim != 1 or zero_point.ndim != 1 or scale.shape[0] != n or \
            zero_point.shape[0] != n:
        raise RuntimeError(f"{op}: dimensions of scale and zero-point are not consistent "
                           f"with input tensor (expected {n} channels along axis {ax})")
    float_zp = zero_point.dtype is not _dt.int32
    with no_grad_ctx():
        zp_host = zero_point.detach().cpu().numpy()  # a few values: checked on the host
        if not float_zp and ((zp_host < quant_min) | (zp_host > quant_max)).any():
            raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
        view = tuple(-1 if d == ax else 1 for d in range(input.ndim))
        s = scale.detach().to(input.device, _dt.float32)
        z = zero_point.detach().to(input.device, _dt.float32)
        inv, s, z = (1.0 / s).reshape(view), s.reshape(view), z.reshape(view)
    return _fake(input, s, inv, z, float_zp, int(quant_min), int(quant_max))


def _moving_average(x_min: Tensor, x_max: Tensor, running_min: Tensor, running_max: Tensor,
                    c: float) -> None:
    """torch's observer update, in place: the first observation (a running value still
    infinite) is taken as it is, later ones move the running value by ``c`` of the way."""
    for run, cur in ((running_min, x_min), (running_max, x_max)):
        cur = cur.to(run.dtype).reshape(run.shape)
        run.copy_(where(run.isinf(), cur, run + c * (cur - run)))


def fused_moving_avg_obs_fake_quant(
        input: Tensor, observer_on: Tensor, fake_quant_on: Tensor,  # noqa: A002
        running_min: Tensor, running_max: Tensor, scale: Tensor, zero_point: Tensor,
        averaging_const: float, quant_min: int, quant_max: int, ch_axis: int,
        per_row_fake_quant: bool = False, symmetric_quant: bool = False) -> Tensor:
    """torch's fused observer and fake quantizer (``FusedMovingAvgObsFakeQuantize``):
    while ``observer_on``, update ``running_min``/``running_max`` in place by a moving
    average of ``input``'s (per-row: per-channel) range; while ``fake_quant_on``, choose
    ``scale``/``zero_point`` from them (in place) and fake-quantize ``input`` with them
    (straight-through gradient); else return a copy of ``input``."""
    from .ops import qparams
    if input.numel() == 0:
        return input.clone()
    if int(ch_axis) >= input.ndim:
        raise RuntimeError("Error in fused_moving_avg_obs_fake_quant_cpu: ch_axis must be "
                           "< self.dim()")
    if per_row_fake_quant and int(ch_axis) != 0:
        raise RuntimeError("Per-channel FakeQuant in fused_moving_avg_obs_fake_quant is only "
                           "supported on axis == 0")
    with no_grad_ctx():
        x = input.detach()
        if per_row_fake_quant and x.ndim != 2:
            order = list(range(x.ndim))
            order[0], order[int(ch_axis)] = int(ch_axis), 0
            x = x.permute(order).flatten(1)
        if bool(observer_on.item()):
            lo, hi = x.aminmax(dim=1) if per_row_fake_quant else x.aminmax()
            _moving_average(lo, hi, running_min, running_max, float(averaging_const))
        quantize = bool(fake_quant_on.item())
    if not quantize:
        return input.clone()  # differentiable, as torch's
    with no_grad_ctx():
        lows, highs = running_min.reshape(-1).tolist(), running_max.reshape(-1).tolist()
        chosen = [qparams(a, b, int(quant_min), int(quant_max), bool(symmetric_quant))
                  for a, b in zip(lows, highs)]
        scale.copy_(Tensor.new_tensor(scale, [p[0] for p in chosen]).reshape(scale.shape))
        zero_point.copy_(Tensor.new_tensor(zero_point, [p[1] for p in chosen])
                         .reshape(zero_point.shape))
    if per_row_fake_quant:
        return fake_quantize_per_channel_affine(input, scale, zero_point.to(_dt.int32),
                                                ch_axis, quant_min, quant_max)
    return fake_quantize_per_tensor_affine(input, chosen[0][0], chosen[0][1], quant_min,
                                           quant_max)
