"""``omnitensor.nn.functional``: stateless neural-network ops (torch's F), written with
Tensor ops so they run and differentiate on every backend."""
from __future__ import annotations

from typing import Any, Sequence

from ..core.ops.shape import pad_constant
from ..core.tensor import Tensor


def softmax(x: Tensor, dim: int | None = None, dtype: Any = None) -> Tensor:
    """``exp(x - max) / sum(exp(x - max))`` along ``dim``, numerically stable."""
    if dim is None:
        dim = -1 if x.ndim != 0 else 0
    if dtype is not None:
        x = x.to(dtype)
    shifted = x - x.detach().amax(dim=dim, keepdim=True)
    e = shifted.exp()
    return e / e.sum(dim=dim, keepdim=True)


def log_softmax(x: Tensor, dim: int | None = None, dtype: Any = None) -> Tensor:
    """``x - logsumexp(x)`` along ``dim``, numerically stable."""
    if dim is None:
        dim = -1 if x.ndim != 0 else 0
    if dtype is not None:
        x = x.to(dtype)
    shifted = x - x.detach().amax(dim=dim, keepdim=True)
    return shifted - shifted.exp().sum(dim=dim, keepdim=True).log()


def pad(x: Tensor, pad: Sequence[int], mode: str = "constant", value: float = 0.0) -> Tensor:
    """torch's ``F.pad``: ``pad = (last_before, last_after, prev_before, prev_after, ...)``;
    negative values crop. Only ``mode='constant'`` is supported."""
    if mode != "constant":
        raise NotImplementedError(f"pad: mode {mode!r} is not supported (use 'constant')")
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise ValueError(f"pad: expected an even number of values, at most 2 * ndim, got "
                         f"{len(pad)} for a {x.ndim}-d tensor")
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return pad_constant(x, widths, value)
