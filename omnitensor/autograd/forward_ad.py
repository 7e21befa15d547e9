"""``omnitensor.autograd.forward_ad``: torch's forward-mode AD API.

::

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)
        y = f(x)
        jvp = forward_ad.unpack_dual(y).tangent

Every op with a backward formula propagates tangents (derived from that formula, see
``omnitensor/core/forward_ad.py``), including views, in-place ops and ``autograd.Function``
(its ``jvp`` staticmethod when it defines one). Tangents flow under ``no_grad`` and not in
inference mode, as in torch. Unlike torch, dual levels nest (``torch.func.jvp`` nests its
own levels the same way); levels are per thread.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from ..core import forward_ad as _core
from ..core.tensor import Tensor

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]


class UnpackedDualTensor(NamedTuple):
    """``unpack_dual``'s result: the primal (a view without the tangent) and the tangent
    (None when the tensor has none at that level)."""

    primal: Any
    tangent: Tensor | None


def enter_dual_level() -> int:
    """Open a new dual level and return its index (prefer ``with dual_level():``)."""
    return _core.enter_level()


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the innermost dual level; every tangent at it is dropped."""
    _core.exit_level(level)


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` whose tangent at ``level`` (default: the innermost) is
    ``tangent`` (same shape, same device; used as is, not copied)."""
    return _core.make_dual(tensor, tangent, level)


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor`` at ``level`` (default: the innermost)."""
    primal, tangent = _core.unpack_dual(tensor, level)
    return UnpackedDualTensor(primal, tangent)


class dual_level:
    """Context manager for a dual level: ``with dual_level():`` (``as`` gives its index);
    the tangents computed inside are dropped on exit."""

    def __enter__(self) -> int:
        self._level = enter_dual_level()
        return self._level

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level(level=self._level)
