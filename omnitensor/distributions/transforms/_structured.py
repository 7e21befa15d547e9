"""Transforms onto structured sets: the simplex (softmax, stick breaking), lower Cholesky
factors, positive definite matrices and Cholesky factors of correlation matrices."""
from __future__ import annotations

import math
from typing import Any

from ...core.dtypes import finfo
from ...core.shape_util import Size
from ...core.tensor import Tensor
from .. import constraints
from ..utils import _clipped_sigmoid, _softplus, tril_matrix_to_vec, vec_to_tril_matrix
from ._elementwise import _Stateless

__all__ = ["SoftmaxTransform", "StickBreakingTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "CorrCholeskyTransform"]


def _pad_last(x: Tensor, before: int, after: int, value: float) -> Tensor:
    from ...nn.functional import pad
    return pad(x, [before, after], value=value)


def _need_dims(shape: Any, n: int) -> None:
    if len(shape) < n:
        raise ValueError("Too few dimensions on input")


class SoftmaxTransform(_Stateless):
    """``y = softmax(x)`` over the last dim: real vectors onto the simplex. Not bijective
    (adding a constant changes nothing); the inverse is ``log y``. Use it for
    optimisation, StickBreakingTransform for densities."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x: Tensor) -> Tensor:
        probs = (x - x.max(-1, keepdim=True).values).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def forward_shape(self, shape: Any) -> Any:
        _need_dims(shape, 1)
        return shape

    inverse_shape = forward_shape


def _stick_offsets(x: Tensor) -> Tensor:
    """``log(K - k)`` for k = 1..K-1 (K = the simplex dim), which centres each stick's
    logit so that x = 0 maps to the uniform point of the simplex."""
    k = x.shape[-1]
    from ...core.ops.creation import arange
    return (k - arange(k, dtype=x.dtype, device=x.device)).log()


class StickBreakingTransform(_Stateless):
    """Real vectors of size K-1 onto the K-simplex by stick breaking: stick ``k`` keeps
    ``sigmoid(x_k - log(K - k))`` of what remains. Bijective, so densities transform."""
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def _call(self, x: Tensor) -> Tensor:
        z = _clipped_sigmoid(x - _stick_offsets(x))
        remaining = (1 - z).cumprod(-1)
        return _pad_last(z, 0, 1, 1.0) * _pad_last(remaining, 1, 0, 1.0)

    def _inverse(self, y: Tensor) -> Tensor:
        head = y[..., :-1]
        remaining = (1 - head.cumsum(-1)).clamp(min=finfo(y.dtype).tiny)
        # x_k = logit(y_k / (remaining before k)) + offset_k
        return head.log() - remaining.log() + _stick_offsets(head)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        # log dy_k/dx_k = log y_k + log(1 - z_k), and log(1 - sigmoid(u)) = -u + log sigmoid(u)
        u = x - _stick_offsets(x)
        return (-u - _softplus(-u) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape: Any) -> Any:
        _need_dims(shape, 1)
        return Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape: Any) -> Any:
        _need_dims(shape, 1)
        return Size(tuple(shape[:-1]) + (shape[-1] - 1,))


def _exp_diagonal(x: Tensor, log: bool = False) -> Tensor:
    d = x.diagonal(dim1=-2, dim2=-1)
    d = d.log() if log else d.exp()
    return x.tril(-1) + d.diag_embed()


class LowerCholeskyTransform(_Stateless):
    """Unconstrained square matrices onto lower-triangular ones with a positive diagonal:
    the strict lower triangle is kept and the diagonal exponentiated (the upper triangle
    is dropped, so it is not bijective)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x: Tensor) -> Tensor:
        return _exp_diagonal(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return _exp_diagonal(y, log=True)


class PositiveDefiniteTransform(_Stateless):
    """Unconstrained square matrices onto positive definite ones: ``L L^T`` of
    :class:`LowerCholeskyTransform`'s ``L``."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x: Tensor) -> Tensor:
        low = _exp_diagonal(x)
        return low @ low.mT

    def _inverse(self, y: Tensor) -> Tensor:
        from ...linalg import cholesky
        return _exp_diagonal(cholesky(y), log=True)


class CorrCholeskyTransform(_Stateless):
    """Real vectors of size D(D-1)/2 onto Cholesky factors of D x D correlation matrices:
    ``tanh`` maps each entry into (-1, 1), then each row is filled by stick breaking so
    that its squares sum to 1 (the diagonal takes what remains)."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x: Tensor) -> Tensor:
        from ...core.ops.creation import eye
        eps = finfo(x.dtype).eps
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        # the stick left before column j of each row: prod_{k<j} sqrt(1 - r_k^2)
        left = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + eye(r.shape[-1], dtype=x.dtype, device=x.device)
        return r * _pad_last(left[..., :-1], 1, 0, 1.0)

    def _inverse(self, y: Tensor) -> Tensor:
        left = 1 - (y * y).cumsum(-1)  # squared stick left after each column
        left_before = _pad_last(left[..., :-1], 1, 0, 1.0)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(left_before, diag=-1).sqrt()
        return (t.log1p() - (-t).log1p()) / 2  # atanh

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor, intermediates: Any = None) -> Tensor:
        # stick breaking contributes 1/2 log of the stick left before each strictly-lower
        # entry but the first of its row; tanh contributes log(1 - tanh(x)^2)
        left = 1 - (y * y).cumsum(-1)
        stick = 0.5 * tril_matrix_to_vec(left, diag=-2).log().sum(-1)
        tanh = -2 * (x + _softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick + tanh

    def forward_shape(self, shape: Any) -> Any:
        _need_dims(shape, 1)
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError(f"Input is not a flattened lower-diagonal number: {n} is not "
                             f"D(D-1)/2 for any D")
        return Size(tuple(shape[:-1]) + (d, d))

    def inverse_shape(self, shape: Any) -> Any:
        _need_dims(shape, 2)
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return Size(tuple(shape[:-2]) + (d * (d - 1) // 2,))

