"""Backend-level fast paths for the hottest fused ops (linear, cross_entropy).

A Tensor op costs a few microseconds of dispatch (dtype rule, device check, broadcasting,
graph bookkeeping); a small MLP step issues ~60 of them, so that overhead rivals the
arithmetic. Inside a fused node whose operands are already known to share one device and
one floating dtype, the rules have nothing left to decide, so these helpers call the
backend primitives directly, following the backend contract (``backends/base.py``):
operands of elementwise primitives are pre-broadcast to the output shape, ``out=`` may
alias an input, reductions take normalised axis tuples. Every caller keeps a Tensor-op
path for mixed dtypes/devices and for ``create_graph`` backwards (which need the graph).
"""
from __future__ import annotations

from typing import Any

from ...core.raw import wrap
from ...core.tensor import Tensor


def backend_for(*tensors: Tensor | None) -> Any:
    """The shared backend when every given tensor is on one device with one floating
    dtype (None entries are skipped); else None (take the Tensor-op path)."""
    first = None
    for t in tensors:
        if t is None:
            continue
        if first is None:
            first = t
            if t._dtype.kind != "f":
                return None
        elif t._device is not first._device or t._dtype is not first._dtype:
            return None
    return None if first is None else first._device.backend


def make(data: Any, like: Tensor) -> Tensor:
    """Wrap a backend array with ``like``'s device and dtype."""
    return wrap(data, like)


def matmul_t(be: Any, a: Any, b: Any) -> Any:
    """``a @ b.T`` for 2-D backend arrays."""
    return be.matmul(a, be.permute(b, (1, 0)))


def t_matmul(be: Any, a: Any, b: Any) -> Any:
    """``a.T @ b`` for 2-D backend arrays."""
    return be.matmul(be.permute(a, (1, 0)), b)


def add_row_(be: Any, y: Any, row: Any) -> Any:
    """``y += row`` in place, ``row`` broadcast over the leading axes of ``y``."""
    be.add(y, be.broadcast_to(row, y.shape), out=y)
    return y
