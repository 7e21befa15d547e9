"""Constraints on parameters and values (torch.distributions.constraints): each has
``check(value) -> bool tensor``; used by ``validate_args``."""
from __future__ import annotations

from typing import Any

from ..core.tensor import Tensor

__all__ = ["Constraint", "real", "positive", "nonnegative", "unit_interval", "boolean",
           "nonnegative_integer", "simplex", "interval", "half_open_interval",
           "integer_interval", "positive_definite", "lower_cholesky", "real_vector",
           "independent", "greater_than", "dependent"]


class Constraint:
    """A region of values; ``event_dim`` is how many rightmost dims form one event."""
    event_dim = 0
    is_discrete = False

    def check(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_")


class _Dependent(Constraint):
    """Depends on other parameters (e.g. an integer interval's bounds): not checked."""

    def check(self, value: Tensor) -> Tensor:
        raise ValueError("cannot check a dependent constraint")


class _Real(Constraint):
    def check(self, value: Tensor) -> Tensor:
        return value == value  # not nan


class _GreaterThan(Constraint):
    def __init__(self, lower: Any, strict: bool = True) -> None:
        self.lower, self.strict = lower, strict

    def check(self, value: Tensor) -> Tensor:
        return value > self.lower if self.strict else value >= self.lower


class _Interval(Constraint):
    def __init__(self, low: Any, high: Any, closed_high: bool = True) -> None:
        self.low, self.high, self.closed_high = low, high, closed_high

    def check(self, value: Tensor) -> Tensor:
        upper = value <= self.high if self.closed_high else value < self.high
        return (value >= self.low) & upper


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value == 0) | (value == 1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, low: Any, high: Any) -> None:
        self.low, self.high = low, high

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= self.low) & (value <= self.high)


class _NonnegativeInteger(Constraint):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= 0)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return (value >= 0).all(dim=-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _RealVector(Constraint):
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return (value == value).all(dim=-1)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        lower = (value.tril() == value).all(dim=-1).all(dim=-1)
        return lower & (value.diagonal(dim1=-2, dim2=-1) > 0).all(dim=-1)


class _PositiveDefinite(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        from ..linalg import eigvalsh
        sym = ((value - value.mT).abs() < 1e-6).all(dim=-1).all(dim=-1)
        return sym & (eigvalsh(value) > 0).all(dim=-1)


class independent(Constraint):  # noqa: N801 - torch's name
    """``base`` over ``reinterpreted_batch_ndims`` more event dims."""

    def __init__(self, base: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base, self.n = base, reinterpreted_batch_ndims
        self.event_dim = base.event_dim + reinterpreted_batch_ndims
        self.is_discrete = base.is_discrete

    def check(self, value: Tensor) -> Tensor:
        ok = self.base.check(value)
        for _ in range(self.n):
            ok = ok.all(dim=-1)
        return ok


dependent = _Dependent()
real = _Real()
real_vector = _RealVector()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThan(0.0, strict=False)
unit_interval = _Interval(0.0, 1.0)
boolean = _Boolean()
nonnegative_integer = _NonnegativeInteger()
simplex = _Simplex()
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()
interval = _Interval
half_open_interval = lambda low, high: _Interval(low, high, closed_high=False)  # noqa: E731
integer_interval = _IntegerInterval
greater_than = _GreaterThan
