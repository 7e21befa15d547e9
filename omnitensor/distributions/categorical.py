"""Categorical(probs | logits) (torch.distributions.categorical)."""
from __future__ import annotations

import math
from typing import Any

from ..core.dtypes import finfo, int64
from ..core.grad_mode import no_grad
from ..core.ops.creation import arange, full
from ..core.ops.random import multinomial
from ..core.ops.shape import broadcast_tensors
from ..core.shape_util import Size
from ..core.tensor import Tensor
from . import constraints
from ._probs_logits import ProbsOrLogits
from .distribution import Distribution
from .utils import _size

__all__ = ["Categorical"]


class Categorical(ProbsOrLogits, Distribution):
    """One of ``K`` categories with probabilities ``probs`` (normalised along the last
    dim) or ``softmax(logits)``; the batch shape is the parameter's shape without that
    dim. Samples are category indices (int64)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True
    _is_binary = False
    _expand_attrs = ("probs", "logits")

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            self._given = "probs"
        else:
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
            self._given = "logits"
        param = self._param
        self._num_events = param.shape[-1]
        super().__init__(param.shape[:-1] if param.ndim > 1 else Size(),
                         validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self) -> Tensor:
        return full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype,
                    device=self.probs.device)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return self.mean

    def sample(self, sample_shape: Any = ()) -> Tensor:
        sample_shape = _size(sample_shape)
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            draws = multinomial(probs_2d, max(sample_shape.numel(), 1), replacement=True)
            if sample_shape.numel() == 0:
                draws = draws[:, :0]
            return draws.T.reshape(tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.to(int64).unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = arange(self._num_events, dtype=int64, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
