"""Ops on tensors of a layout other than strided (sparse COO, CSR, CSC): one table.

A tensor of another layout (``core/sparse``) is a ``Tensor`` subclass made of dense
component tensors (indices, values); it has no dense storage of its own, so reading its
``_data`` raises :class:`LayoutError`. Every dense op therefore refuses such an operand
with a clear error by itself; the ops torch also defines for other layouts hand the operand
here instead:

* the elementwise dispatchers (``core/ops/elementwise.py``) on the failed ``_data`` read,
  so dense operands pay nothing on that hot path;
* ``matmul`` (so ``mm``, ``bmm``, ``mv``, ``@``), ``sum``, ``clone``, ``transpose``, ``t``
  by a :func:`non_strided` check at their entry.

The layout's package registers one implementation per op name (:func:`register`) and its
tensor classes (:func:`register_kind`); :func:`dispatch` is the one place that chooses.
"""
from __future__ import annotations

from typing import Any, Callable

from ..errors import OmnitensorError

__all__ = ["LayoutError", "register", "register_kind", "dispatch", "non_strided",
           "unsupported"]


class LayoutError(OmnitensorError, RuntimeError):
    """An op that has no implementation for an operand's layout (sparse tensors in a
    dense-only op). The message names the op, the layout and the fix (``to_dense()``)."""


_TABLE: dict[str, Callable[..., Any]] = {}
_KINDS: tuple[type, ...] = ()


def register(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: ``fn`` implements the ops ``names`` when an operand is not strided."""
    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        for n in names:
            _TABLE[n] = fn
        return fn
    return deco


def register_kind(cls: type) -> None:
    """Declare ``cls`` (a Tensor subclass) as a non-strided layout's tensor type."""
    global _KINDS
    if cls not in _KINDS:
        _KINDS = _KINDS + (cls,)


def non_strided(*xs: Any) -> bool:
    """Whether any of ``xs`` is a tensor of a non-strided layout."""
    kinds = _KINDS
    return bool(kinds) and any(isinstance(x, kinds) for x in xs)


def unsupported(op: str, *operands: Any) -> LayoutError:
    """The error for op ``op`` on operands one of which has no dense storage."""
    layout = next((x.layout for x in operands if non_strided(x)), None)
    name = f"{op}()" if op else "this operation"
    return LayoutError(
        f"{name} does not support tensors of layout {layout} (sparse tensors have no dense "
        f"storage); convert with .to_dense() first, or use a torch.sparse op (the sparse "
        f"layouts and their ops: docs/sparse.md)")


def dispatch(op: str, *args: Any, **kwargs: Any) -> Any:
    """Run op ``op`` on operands at least one of which is not strided."""
    impl = _TABLE.get(op)
    if impl is None:
        raise unsupported(op, *args, *kwargs.values())
    return impl(*args, **kwargs)
