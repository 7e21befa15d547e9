"""torch's ``choose_qparams_optimized``: the greedy range search of its embedding-bag
quantization, a host loop over device reductions (each step one float32 loss)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..graph import no_grad_ctx
from ..tensor import Tensor
from .ops import check_float_input

__all__ = ["choose_qparams_optimized"]

_f32, _f16 = np.float32, np.float16


def _quant_loss(x: Tensor, xmin: Any, xmax: Any, bit_width: int) -> Any:
    """The L2 error of quantizing ``x`` on ``bit_width`` bits over [xmin, xmax], with
    torch's float16-rounded minimum and scale."""
    xmin = _f32(_f16(xmin))
    data_range = _f32(xmax - xmin)
    qmax = _f32((1 << bit_width) - 1)
    scale = _f32(1.0) if data_range == 0 else _f32(_f16(data_range / qmax))
    inv = _f32(1.0) if scale == 0 else _f32(1.0) / scale
    q = ((x - float(xmin)) * float(inv)).round().clamp(0.0, float(qmax))
    err = x - (q * float(scale) + float(xmin))
    return _f32((err * err).sum().sqrt().item())


def choose_qparams_optimized(input: Tensor, numel: int, n_bins: int, ratio: float,  # noqa: A002
                             bit_width: int) -> tuple[Tensor, Tensor]:
    """The range ``[min, max]`` of the first ``numel`` elements narrowed, one of
    ``n_bins`` steps at a time from whichever end lowers the quantization loss, while at
    least ``(1 - ratio)`` of the bins remain; returns ``(max, min)`` of the best local
    optimum as 1-element float32 tensors (torch's order)."""
    check_float_input(input, "choose_qparams_optimized")
    numel = int(numel)
    if not 0 < numel <= input.numel():
        raise RuntimeError(f"choose_qparams_optimized: numel must be in [1, "
                           f"{input.numel()}], got {numel}")
    with no_grad_ctx():
        x = input.detach().reshape(-1)[:numel]
        xmin, xmax = _f32(x.min().item()), _f32(x.max().item())
        step = _f32((xmax - xmin) / _f32(n_bins))
        thr = _f32(int(n_bins * (1.0 - float(_f32(ratio)))) * step)
        best = cur = _quant_loss(x, xmin, xmax, bit_width)
        best_min, best_max, lo, hi = xmin, xmax, xmin, xmax
        while _f32(lo + thr) < hi:
            left = _quant_loss(x, _f32(lo + step), hi, bit_width)
            right = _quant_loss(x, lo, _f32(hi - step), bit_width)
            if cur < left and cur < right and cur < best:
                best, best_min, best_max = cur, lo, hi
            if left < right:
                lo, cur = _f32(lo + step), left
            else:
                hi, cur = _f32(hi - step), right
        out = [Tensor.new_tensor(input, [float(v)], dtype=_dt.float32, device="cpu")
               for v in (best_max, best_min)]
    return out[0], out[1]
