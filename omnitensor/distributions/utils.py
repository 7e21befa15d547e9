"""Helpers shared by the distributions: broadcasting parameters, probs <-> logits."""
from __future__ import annotations

from typing import Any

from ..core.tensor import Tensor

__all__ = ["broadcast_all", "probs_to_logits", "logits_to_probs", "clamp_probs"]


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """Tensors of one shape, dtype and device from tensors and Python numbers (numbers take
    the tensors' dtype and device, or the default dtype when all are numbers)."""
    from ..core.ops.creation import tensor
    from ..core.ops.shape import broadcast_tensors
    from ..core.dtypes import get_default_dtype, result_type
    tensors = [v for v in values if isinstance(v, Tensor)]
    for v in values:
        if not isinstance(v, (Tensor, int, float)) or isinstance(v, bool):
            raise TypeError(f"expected tensors or numbers as distribution parameters, got "
                            f"{type(v).__name__}")
    if tensors:
        dtype = result_type(*[t.dtype for t in tensors])
        if dtype.kind != "f":
            dtype = get_default_dtype()
        device = tensors[0].device
    else:
        dtype, device = get_default_dtype(), None
    out = [v.to(dtype) if isinstance(v, Tensor) else tensor(float(v), dtype=dtype,
                                                             device=device)
           for v in values]
    return tuple(broadcast_tensors(*out)) if len(out) > 1 else (out[0],)


def clamp_probs(probs: Tensor) -> Tensor:
    from ..core.dtypes import finfo
    eps = finfo(probs.dtype).eps
    return probs.clamp(eps, 1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    ps = clamp_probs(probs)
    if is_binary:
        return ps.log() - (-ps).log1p()
    return ps.log()


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    if is_binary:
        return logits.sigmoid()
    return logits.softmax(-1)
