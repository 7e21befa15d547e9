"""Bernoulli and Categorical, parameterised by ``probs`` or ``logits`` (one of them)."""
from __future__ import annotations

from typing import Any

from ..core.ops import elementwise as _ew
from ..core.ops.random import rand
from ..core.tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli", "Categorical"]


def _one_of(probs: Any, logits: Any, who: str) -> None:
    if (probs is None) == (logits is None):
        raise ValueError(f"{who}: either `probs` or `logits` must be specified, but not both")


def _softplus(x: Tensor) -> Tensor:
    return _ew.logaddexp(x, 0.0)


class Bernoulli(Distribution):
    """1 with probability ``probs`` (or ``sigmoid(logits)``), else 0."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        _one_of(probs, logits, "Bernoulli")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            shape = tuple(self.probs.shape)
        else:
            (self.logits,) = broadcast_all(logits)
            shape = tuple(self.logits.shape)
        super().__init__(shape, validate_args=validate_args)

    def __getattr__(self, name: str) -> Any:  # the parameter not given, derived on use
        d = self.__dict__
        if name == "probs" and "logits" in d:
            d["probs"] = logits_to_probs(d["logits"], is_binary=True)
            return d["probs"]
        if name == "logits" and "probs" in d:
            d["logits"] = probs_to_logits(d["probs"], is_binary=True)
            return d["logits"]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        return (self.probs >= 0.5).to(self.probs.dtype)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        p = self.probs.detach()
        shape = self._extended_shape(sample_shape)
        return (rand(shape, dtype=p.dtype, device=p.device) < p).to(p.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits = self.logits
        return -(_softplus(logits) - value * logits)

    def entropy(self) -> Tensor:
        logits = self.logits
        return _softplus(logits) - self.probs * logits

    def enumerate_support(self, expand: bool = True) -> Tensor:
        from ..core.ops.creation import arange
        values = arange(2, dtype=self.probs.dtype, device=self.probs.device)
        values = values.reshape((2,) + (1,) * len(self._batch_shape))
        return values.expand((2,) + self._batch_shape) if expand else values


class Categorical(Distribution):
    """One of ``K`` categories with probabilities ``probs`` (normalised along the last dim)
    or ``softmax(logits)``; the batch shape is the parameter's shape without that dim."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        _one_of(probs, logits, "Categorical")
        param = probs if probs is not None else logits
        if not isinstance(param, Tensor) or param.ndim < 1:
            raise ValueError("Categorical: `probs`/`logits` must be a tensor with at least one "
                             "dimension")
        if probs is not None:
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
        self._num_events = param.shape[-1]
        super().__init__(tuple(param.shape[:-1]), validate_args=validate_args)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        if name == "probs" and "logits" in d:
            d["probs"] = logits_to_probs(d["logits"])
            return d["probs"]
        if name == "logits" and "probs" in d:
            d["logits"] = probs_to_logits(d["probs"])
            return d["logits"]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self) -> Tensor:
        from ..core.ops.creation import full
        return full(self._batch_shape, float("nan"), dtype=self.probs.dtype,
                    device=self.probs.device)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return self.mean

    def sample(self, sample_shape: Any = ()) -> Tensor:
        from ..core.ops.random import multinomial
        if isinstance(sample_shape, int):
            sample_shape = (sample_shape,)
        sample_shape = tuple(sample_shape)
        n = 1
        for s in sample_shape:
            n *= s
        probs_2d = self.probs.detach().reshape(-1, self._num_events)
        draws = multinomial(probs_2d, n, replacement=True)  # (batch, n)
        return draws.T.reshape(sample_shape + self._batch_shape)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        from ..core.shape_util import broadcast_shapes
        value = value.long()
        shape = broadcast_shapes(tuple(value.shape), self._batch_shape)
        logits = self.logits.expand(shape + (self._num_events,))
        idx = value.expand(shape).unsqueeze(-1)
        return logits.gather(-1, idx).squeeze(-1)

    def entropy(self) -> Tensor:
        from ..core.dtypes import finfo
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        from ..core.ops.creation import arange
        values = arange(self._num_events, device=self.probs.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values
