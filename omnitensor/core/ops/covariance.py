"""torch's ``cov`` and ``corrcoef``: the covariance of the variables in a tensor's rows,
with frequency and analytic weights, by torch's formula (weights kept in their own dtype,
so results round as torch's do), and the correlation coefficients derived from it."""
from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from ..graph import no_grad_ctx
from ..tensor import Tensor
from . import shape as sh

__all__ = ["cov", "corrcoef"]


def _check_weights(name: str, w: Tensor | None, n: int, integral: bool) -> None:
    if w is None:
        return
    if w.ndim > 1:
        raise ValueError(f"cov(): expected {name} to have one or fewer dimensions but got "
                         f"{name} with {w.ndim} dimensions")
    if integral and w.dtype.kind not in "iu":
        raise _dt.DTypeError(f"cov(): expected {name} to have integral dtype but got "
                             f"{name} with {w.dtype.name} dtype")
    if not integral and w.dtype.kind != "f":
        raise _dt.DTypeError(f"cov(): expected {name} to have floating point dtype but got "
                             f"{name} with {w.dtype.name} dtype")
    if w.numel() != n:
        raise ValueError(f"cov(): expected {name} to have the same numel as there are "
                         f"observations in the input but got {w.numel()} != {n}")
    with no_grad_ctx():
        if w.numel() and bool((w < 0).any().item()):
            raise ValueError(f"cov(): {name} cannot be negative")


def cov(x: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """Covariance of the variables in ``x``'s rows (observations in columns), torch's
    formula (weights kept in their own dtype; size-1 dimensions squeezed, so a 1-D input
    gives a 0-d variance)."""
    if x.ndim > 2:
        raise ValueError(f"cov(): expected input to have two or fewer dimensions but got "
                         f"an input with {x.ndim} dimensions")
    x = x.reshape(1, -1) if x.ndim < 2 else x
    n = x.shape[1]
    _check_weights("fweights", fweights, n, True)
    _check_weights("aweights", aweights, n, False)
    if x.dtype.kind not in "fc":
        x = x.to(_dt.get_default_dtype())
    w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum: Any = n
        avg = x.sum(dim=1) / n
    else:
        w_sum = w.sum()
        avg = (x * w).sum(dim=1) / w_sum
    if w is None:
        norm = n - correction
    elif correction == 0:
        norm = w_sum
    elif aweights is None:
        norm = w_sum - correction
    else:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    xm = x - avg.unsqueeze(1)
    c = xm @ (xm if w is None else xm * w).mT.conj()
    out = c / norm
    return sh.squeeze(out, tuple(k for k, m in enumerate(out.shape) if m == 1))


def corrcoef(x: Tensor) -> Tensor:
    """Pearson correlation coefficients of ``x``'s rows (clipped to [-1, 1])."""
    c = cov(x)
    if c.ndim == 0:
        return c / c
    d = sh.diagonal(c, 0, 0, 1)
    std = d.real.sqrt() if d.dtype.kind == "c" else d.sqrt()
    c = c / std.reshape(-1, 1) / std.reshape(1, -1)
    return c.clamp(-1.0, 1.0) if c.dtype.kind == "f" else c
