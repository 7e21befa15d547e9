"""``torch.linalg`` as the torch face holds it: :mod:`omnitensor.linalg`'s functions (the
same objects), with torch's meaning where torch and the Array API standard disagree
(docs/torch_and_array_api.md). ``omnitensor.linalg`` stays the standard's linalg extension.

The differences: :func:`solve` reads ``B`` of exactly ``A.shape[:-1]`` as a stack of
vectors (torch's rule), also where the standard reads it as matrices (``A`` (n, n, n) and
``B`` (n, n); a 0-batch of 0x0 matrices); :func:`cross` takes inputs of one number of
dimensions only (the standard broadcasts any).
"""
from __future__ import annotations

from typing import Any

from . import linalg as _linalg
from .core.ops.linalg import solve_with_rule as _solve_with_rule
from .core.ops.out_arg import write_out as _write_out
from .core.tensor import Tensor as _Tensor
from .errors import ShapeError as _ShapeError

__all__ = list(_linalg.__all__)


def solve(A: _Tensor, B: _Tensor, *, left: bool = True, out: Any = None) -> _Tensor:
    """torch's ``linalg.solve``: ``X`` with ``A X = B`` (``X A = B`` with ``left=False``);
    ``B`` is a (stack of) vector(s) when it is 1-D or exactly ``A.shape[:-1]``."""
    x = (_solve_with_rule(A, B, torch_rule=True) if left else
         _solve_with_rule(A.mT, B.mT, torch_rule=True).mT)
    return _write_out("linalg.solve", x, out)


def cross(input: _Tensor, other: _Tensor, *, dim: int = -1,  # noqa: A002
          out: Any = None) -> _Tensor:
    """torch's ``linalg.cross``: the cross product of 3-vectors along ``dim`` of two
    inputs with the same number of dimensions (which then broadcast)."""
    if input.ndim != other.ndim:
        raise _ShapeError(f"linalg.cross: inputs must have the same number of dimensions "
                          f"(got {input.ndim} and {other.ndim}); unsqueeze the smaller one")
    return _linalg.cross(input, other, axis=dim, out=out)


def _bind() -> None:
    """Every other public name of omnitensor.linalg, the same object."""
    g = globals()
    for name in dir(_linalg):
        if not name.startswith("_") and name not in g:
            g[name] = getattr(_linalg, name)


_bind()
