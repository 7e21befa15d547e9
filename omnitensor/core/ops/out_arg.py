"""torch's ``out=`` argument, one rule for the functions that take it: the result is
written into ``out`` (resized to the result's shape, as torch does) and ``out`` returned;
``out`` must have the result's dtype and device (torch refuses other dtypes for these ops,
and omnitensor never moves data between devices)."""
from __future__ import annotations

from typing import Any

from ...errors import DeviceMismatchError, DTypeError
from ..graph import needs_grad
from ..tensor import Tensor


def _write(op: str, res: Tensor, out: Any) -> Tensor:
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if out.dtype is not res.dtype:
        raise DTypeError(f"{op}: expected out of dtype {res.dtype.name} (the result's), got "
                         f"{out.dtype.name}")
    if out.device != res.device:
        raise DeviceMismatchError(f"{op}: out is on {out.device}, the result on "
                                  f"{res.device}; pass an out tensor on {res.device}")
    if needs_grad(out):
        raise RuntimeError(f"{op}(): functions with out=... arguments don't support "
                           f"automatic differentiation, but one of the arguments requires "
                           f"grad.")
    if tuple(out.shape) != tuple(res.shape):
        from .copies import resize_  # copies writes its own results through this module
        resize_(out, tuple(res.shape))
    return out.copy_(res.detach())


def write_out(op: str, result: Any, out: Any) -> Any:
    """``result`` when ``out`` is None; else ``result`` copied into ``out`` (a tensor, or a
    tuple of tensors for a tuple result), which is returned."""
    if out is None:
        return result
    if isinstance(result, Tensor):
        return _write(op, result, out)
    if not isinstance(out, (tuple, list)) or len(out) != len(result):
        raise TypeError(f"{op}(): out must be a tuple of {len(result)} tensors")
    written = tuple(_write(op, r, o) for r, o in zip(result, out))
    return type(result)(*written) if hasattr(result, "_fields") else written
