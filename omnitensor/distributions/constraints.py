"""Constraints on parameters and values (torch.distributions.constraints).

A constraint is a region: ``check(value)`` answers, per event, whether ``value`` lies in it
(a bool tensor of shape ``sample_shape + batch_shape``); ``event_dim`` is how many rightmost
dims form one event, ``is_discrete`` whether the region is a lattice. ``validate_args``
checks parameters and samples against them, and ``biject_to``/``transform_to`` map the real
space onto them (``constraint_registry``)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..core.dtypes import bool_ as _bool, finfo
from ..core.tensor import Tensor

__all__ = ["Constraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property",
           "greater_than", "greater_than_eq", "independent", "integer_interval", "interval",
           "half_open_interval", "is_dependent", "less_than", "lower_cholesky",
           "lower_triangular", "MixtureSameFamilyConstraint", "multinomial", "nonnegative",
           "nonnegative_integer", "one_hot", "positive", "positive_semidefinite",
           "positive_definite", "positive_integer", "real", "real_vector", "simplex", "square",
           "stack", "symmetric", "unit_interval"]


class Constraint:
    """Base class of constraints: ``check(value)`` gives a bool tensor, one entry per
    event."""
    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        """Whether each event of ``value`` satisfies the constraint."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for a support that depends on other variables (an interval whose
    bounds are parameters): it cannot be checked, and ``is_dependent`` says so."""

    def __init__(self, *, is_discrete: Any = NotImplemented,
                 event_dim: Any = NotImplemented) -> None:
        self._is_discrete = is_discrete
        self._event_dim = event_dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return bool(self._is_discrete)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return int(self._event_dim)

    def __call__(self, *, is_discrete: Any = NotImplemented,
                 event_dim: Any = NotImplemented) -> "_Dependent":
        """A dependent constraint with the given static attributes."""
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x: Tensor) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: Any) -> bool:
    """Whether ``constraint`` is a (not checkable) dependent one."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that reads as ``dependent`` on the class and as its computed constraint on
    an instance (``@constraints.dependent_property(is_discrete=..., event_dim=...)``)."""

    def __init__(self, fn: Callable[..., Any] | None = None, *,
                 is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented) -> None:
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn: Callable[..., Any]) -> "_DependentProperty":  # type: ignore[override]
        return _DependentProperty(fn, is_discrete=self._is_discrete,
                                  event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """``base_constraint`` with its ``reinterpreted_batch_ndims`` rightmost batch dims taken
    into the event: an event satisfies it when all its entries do."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"independent: base_constraint must be a Constraint, got "
                            f"{type(base_constraint).__name__}")
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError(f"independent: reinterpreted_batch_ndims must be a non-negative "
                             f"int, got {reinterpreted_batch_ndims!r}")
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value: Tensor) -> Tensor:
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.ndim < n:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got "
                             f"{value.ndim}")
        return _all_rightmost(result, n)

    def __repr__(self) -> str:
        return (f"{type(self).__name__[1:]}({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


def _all_rightmost(result: Tensor, n: int) -> Tensor:
    if n == 0:
        return result
    return result.reshape(tuple(result.shape[:result.ndim - n]) + (-1,)).all(-1)


class MixtureSameFamilyConstraint(Constraint):
    """The support of a MixtureSameFamily: a value is valid when every component's support
    holds it (the component dim sits just left of the event)."""

    def __init__(self, base_constraint: Constraint) -> None:
        if not isinstance(base_constraint, Constraint):
            raise TypeError("MixtureSameFamilyConstraint expects a Constraint")
        self.base_constraint = base_constraint
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim

    def check(self, value: Tensor) -> Tensor:
        if value.ndim < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.ndim}")
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        keep = value.ndim - self.event_dim
        return result.reshape(tuple(result.shape[:keep]) + (-1,)).all(-1)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_constraint!r})"


class _Boolean(Constraint):
    """``{0, 1}``."""
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    """One-hot vectors: entries in ``{0, 1}`` summing to 1."""
    is_discrete = True
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        is_boolean = ((value == 0) | (value == 1)).all(-1)
        return is_boolean & (value.sum(-1) == 1)


class _IntegerLessThan(Constraint):
    """Integers at most ``upper_bound``."""
    is_discrete = True

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}(upper_bound={self.upper_bound})"


class _Real(Constraint):
    """The extended real line (anything but NaN)."""

    def check(self, value: Tensor) -> Tensor:
        return value == value


class _LowerBound(Constraint):
    """Shared parts of the two lower-bounded half lines (distinct types, as torch's)."""

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound
        super().__init__()

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound})"


class _GreaterThan(_LowerBound):
    """``(lower_bound, inf)``."""

    def check(self, value: Tensor) -> Tensor:
        return value > self.lower_bound


class _GreaterThanEq(_LowerBound):
    """``[lower_bound, inf)``."""

    def check(self, value: Tensor) -> Tensor:
        return value >= self.lower_bound


class _IntegerGreaterThan(_LowerBound):
    """Integers at least ``lower_bound``."""
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= self.lower_bound)


class _LessThan(Constraint):
    """``(-inf, upper_bound)``."""

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}(upper_bound={self.upper_bound})"


class _Bounds(Constraint):
    """Shared parts of the closed and half-open intervals (distinct types, as torch's)."""

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound
        super().__init__()

    def __repr__(self) -> str:
        return (f"{type(self).__name__[1:]}(lower_bound={self.lower_bound}, "
                f"upper_bound={self.upper_bound})")


class _Interval(_Bounds):
    """``[lower_bound, upper_bound]``."""

    def check(self, value: Tensor) -> Tensor:
        return (value >= self.lower_bound) & (value <= self.upper_bound)


class _HalfOpenInterval(_Bounds):
    """``[lower_bound, upper_bound)``."""

    def check(self, value: Tensor) -> Tensor:
        return (value >= self.lower_bound) & (value < self.upper_bound)


class _IntegerInterval(_Bounds):
    """Integers in ``[lower_bound, upper_bound]``."""
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= self.lower_bound) & (value <= self.upper_bound)


class _Simplex(Constraint):
    """Nonnegative vectors summing to 1 (within 1e-6)."""
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Nonnegative integer vectors summing to at most ``upper_bound`` (the count is
    checked by the distribution)."""
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, x: Tensor) -> Tensor:
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


class _LowerTriangular(Constraint):
    """Square lower-triangular matrices."""
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        return _all_rightmost(value.tril() == value, 2)


class _LowerCholesky(Constraint):
    """Lower-triangular matrices with a positive diagonal."""
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        lower = _all_rightmost(value.tril() == value, 2)
        return lower & (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


class _CorrCholesky(Constraint):
    """Cholesky factors of correlation matrices: lower Cholesky with unit-norm rows."""
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        tol = finfo(value.dtype).eps * value.shape[-1] * 10
        row_norm = (value.detach() ** 2).sum(-1).sqrt()
        unit_rows = ((row_norm - 1.0).abs() <= tol).all(-1)
        return lower_cholesky.check(value) & unit_rows


class _Square(Constraint):
    """Square matrices (a property of the shape: the same answer for every event)."""
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        from ..core.ops.creation import full
        return full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1],
                    dtype=_bool, device=value.device)


class _Symmetric(_Square):
    """Symmetric matrices (within an absolute 1e-6)."""

    def check(self, value: Tensor) -> Tensor:
        square = super().check(value)
        if not bool(square.all()):
            return square
        from ..core.ops.composite import isclose
        return _all_rightmost(isclose(value, value.mT, atol=1e-6), 2)


class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices whose eigenvalues are all nonnegative."""

    def check(self, value: Tensor) -> Tensor:
        sym = super().check(value)
        if not bool(sym.all()):
            return sym
        from ..linalg import eigvalsh
        return (eigvalsh(value) >= 0).all(-1)


class _PositiveDefinite(_Symmetric):
    """Symmetric matrices whose eigenvalues are all positive."""

    def check(self, value: Tensor) -> Tensor:
        sym = super().check(value)
        if not bool(sym.all()):
            return sym
        from ..linalg import eigvalsh
        return (eigvalsh(value) > 0).all(-1)


class _Cat(Constraint):
    """Constraints ``cseq`` applied to consecutive slices (of ``lengths``, default 1 each)
    of dim ``dim``: torch.cat's counterpart."""

    def __init__(self, cseq: Sequence[Constraint], dim: int = 0,
                 lengths: Sequence[int] | None = None) -> None:
        self.cseq = list(cseq)
        if not all(isinstance(c, Constraint) for c in self.cseq):
            raise TypeError("cat: every element of cseq must be a Constraint")
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise ValueError(f"cat: {len(self.cseq)} constraints but {len(self.lengths)} "
                             f"lengths")
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return max(c.event_dim for c in self.cseq)

    def check(self, value: Tensor) -> Tensor:
        from ..core.ops.join import cat as _cat
        if not -value.ndim <= self.dim < value.ndim:
            raise ValueError(f"cat constraint: dim {self.dim} is out of range for a value "
                             f"of {value.ndim} dims")
        checks, start = [], 0
        for constr, length in zip(self.cseq, self.lengths):
            checks.append(constr.check(value.narrow(self.dim, start, length)))
            start += length
        return _cat(checks, self.dim)


class _Stack(Constraint):
    """Constraints ``cseq`` applied to the slices of dim ``dim``, one each: torch.stack's
    counterpart."""

    def __init__(self, cseq: Sequence[Constraint], dim: int = 0) -> None:
        self.cseq = list(cseq)
        if not all(isinstance(c, Constraint) for c in self.cseq):
            raise TypeError("stack: every element of cseq must be a Constraint")
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        dim = max(c.event_dim for c in self.cseq)
        if self.dim + dim < 0:
            dim += 1
        return dim

    def check(self, value: Tensor) -> Tensor:
        from ..core.ops.join import stack as _stack
        if not -value.ndim <= self.dim < value.ndim:
            raise ValueError(f"stack constraint: dim {self.dim} is out of range for a value "
                             f"of {value.ndim} dims")
        if value.shape[self.dim] != len(self.cseq):
            raise ValueError(f"stack constraint: dim {self.dim} has size "
                             f"{value.shape[self.dim]} but there are {len(self.cseq)} "
                             f"constraints")
        return _stack([c.check(value.select(self.dim, i)) for i, c in enumerate(self.cseq)],
                      self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
