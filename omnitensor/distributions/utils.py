"""Helpers shared by the distributions (torch.distributions.utils): broadcasting parameters,
probs <-> logits, lazily derived attributes, and packing lower triangles into vectors."""
from __future__ import annotations

from functools import update_wrapper
from numbers import Number
from typing import Any, Callable

from ..core.dtypes import finfo, get_default_dtype, result_type
from ..core.ops.creation import tensor
from ..core.ops.random import randn
from ..core.ops.shape import broadcast_tensors
from ..core.shape_util import Size
from ..core.tensor import Tensor

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits",
           "lazy_property", "tril_matrix_to_vec", "vec_to_tril_matrix"]

#: the Euler-Mascheroni constant (the Gumbel mean, entropies of Weibull and Gumbel)
euler_constant = 0.57721566490153286060


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """The values as tensors of one broadcast shape: Python numbers become tensors of the
    tensors' dtype and device (the default dtype when all are numbers); raises ValueError
    naming the bad type otherwise."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    for v in values:
        if not isinstance(v, (Tensor, Number)) and not hasattr(v, "__torch_function__"):
            raise ValueError(f"Input arguments must all be instances of numbers.Number or "
                             f"Tensor, got {type(v).__name__}")
    if len(tensors) == len(values):
        return tuple(broadcast_tensors(*values)) if len(values) > 1 else (values[0],)
    if tensors:
        dtype = result_type(*[t.dtype for t in tensors])
        if dtype.kind != "f":
            dtype = get_default_dtype()
        device = tensors[0].device
    else:
        dtype, device = get_default_dtype(), None
    out = [v if isinstance(v, Tensor) else tensor(float(v), dtype=dtype, device=device)
           for v in values]
    return tuple(broadcast_tensors(*out)) if len(out) > 1 else (out[0],)


def _standard_normal(shape: Any, dtype: Any, device: Any) -> Tensor:
    """Standard normal draws of ``shape`` from omnitensor's generator."""
    return randn(tuple(shape), dtype=dtype, device=device)


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """``value`` summed over its ``dim`` rightmost dims (unchanged when ``dim`` is 0)."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.ndim - dim]) + (-1,)).sum(-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities clamped to ``[eps, 1 - eps]`` of their dtype, so logs stay finite."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits of probabilities: ``log p - log(1 - p)`` when ``is_binary``, else ``log p``."""
    ps = clamp_probs(probs)
    if is_binary:
        return ps.log() - (-ps).log1p()
    return ps.log()


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities of logits: ``sigmoid`` when ``is_binary``, else ``softmax`` over the
    last dim."""
    if is_binary:
        return logits.sigmoid()
    return logits.softmax(-1)


class lazy_property:  # torch's name
    """A property computed on first access and stored on the instance (later reads are
    plain attribute reads). On the class it is the descriptor itself, which is how
    ``validate_args`` knows to skip a parameter that was derived rather than given."""

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)  # type: ignore[arg-type]

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return self
        from ..core.grad_mode import enable_grad
        with enable_grad():  # a derived parameter keeps its graph to the given one
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _tril_indices(n: int, diag: int, device: Any) -> tuple[Tensor, Tensor]:
    from ..core.ops.creation import tril_indices
    idx = tril_indices(n, n, offset=diag, device=device)
    return idx[0], idx[1]


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower triangle (below diagonal ``diag``) of the last two dims, row by row, as
    one vector dim."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = _tril_indices(n, diag, mat.device)
    return mat[..., rows, cols]


def _tril_count(n: int, diag: int) -> int:
    """How many entries of an ``n x n`` matrix lie on or below diagonal ``diag``."""
    return sum(max(0, min(n, r + diag + 1)) for r in range(n))


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of :func:`tril_matrix_to_vec`: an ``n x n`` lower-triangular matrix
    (zeros elsewhere) whose triangle below ``diag`` is ``vec``'s last dim."""
    m = vec.shape[-1]
    n = 1
    while _tril_count(n, diag) < m:
        n += 1
    if _tril_count(n, diag) != m:
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as "
                         f"the lower triangular part of a square D x D matrix.")
    from ..core.ops.creation import zeros
    out = zeros(tuple(vec.shape[:-1]) + (n, n), dtype=vec.dtype, device=vec.device)
    rows, cols = _tril_indices(n, diag, vec.device)
    out[..., rows, cols] = vec
    return out


def _size(shape: Any) -> Size:
    """``shape`` (an int, a sequence or a Size) as a Size."""
    if isinstance(shape, int):
        return Size((shape,))
    return Size(tuple(int(s) for s in shape))


def _softplus(x: Tensor) -> Tensor:
    """``log(1 + exp(x))`` without overflow, with gradient ``sigmoid(x)`` everywhere."""
    from ..core.ops.elementwise import logaddexp
    return logaddexp(x, 0.0)


def _clipped_sigmoid(x: Tensor) -> Tensor:
    """``sigmoid(x)`` kept inside ``[tiny, 1 - eps]`` of its dtype, so its log and the log
    of its complement stay finite."""
    fi = finfo(x.dtype)
    return x.sigmoid().clamp(min=fi.tiny, max=1.0 - fi.eps)
