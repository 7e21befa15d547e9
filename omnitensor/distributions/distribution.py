"""The base class of every distribution (torch.distributions.Distribution)."""
from __future__ import annotations

from typing import Any

from ..core.grad_mode import no_grad
from ..core.tensor import Tensor
from . import constraints

__all__ = ["Distribution"]

_VALIDATE = [True]  # torch validates by default (outside ``python -O``)


class Distribution:
    """``batch_shape`` (independent, differently-parameterised copies) and ``event_shape``
    (the shape of one draw). ``sample`` draws without gradient; ``rsample`` draws by a
    reparameterisation that gradients flow through, where ``has_rsample``.
    ``validate_args`` (default True, as torch) checks parameters at construction and values
    in ``log_prob`` against the constraints, with an error naming the bad one."""

    has_rsample = False
    has_enumerate_support = False
    arg_constraints: dict[str, constraints.Constraint] = {}
    support: constraints.Constraint | None = None

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        if value not in (True, False):
            raise ValueError("set_default_validate_args expects True or False")
        _VALIDATE[0] = value

    def __init__(self, batch_shape: tuple = (), event_shape: tuple = (),
                 validate_args: bool | None = None) -> None:
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)
        self._validate_args = _VALIDATE[0] if validate_args is None else bool(validate_args)
        if self._validate_args:
            for name, constraint in self.arg_constraints.items():
                if constraint is constraints.dependent or name not in vars(self):
                    continue  # only the parameters given (not ones derived from them)
                value = vars(self)[name]
                if not isinstance(value, Tensor):
                    continue
                if not bool(constraint.check(value).all()):
                    raise ValueError(f"Expected parameter {name} ({type(value).__name__} of shape "
                                     f"{tuple(value.shape)}) of distribution {self!r} to satisfy "
                                     f"the constraint {constraint!r}, but found invalid values:"
                                     f"\n{value}")

    # ------------------------------------------------------------------- shapes
    @property
    def batch_shape(self) -> tuple:
        return self._batch_shape

    @property
    def event_shape(self) -> tuple:
        return self._event_shape

    def _extended_shape(self, sample_shape: Any = ()) -> tuple:
        if isinstance(sample_shape, int):
            sample_shape = (sample_shape,)
        return tuple(sample_shape) + self._batch_shape + self._event_shape

    # ------------------------------------------------------------------ drawing
    def sample(self, sample_shape: Any = ()) -> Tensor:
        """A draw of shape ``sample_shape + batch_shape + event_shape`` (no gradient)."""
        with no_grad():
            return self.rsample(sample_shape).detach()

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no reparameterised sampler "
                                  f"(has_rsample is False): use sample(), or a score-function "
                                  f"estimator with log_prob()")

    def sample_n(self, n: int) -> Tensor:
        return self.sample((n,))

    # ------------------------------------------------------------------ density
    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}.log_prob is not implemented")

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}.cdf is not implemented")

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}.icdf is not implemented")

    def entropy(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}.entropy is not implemented")

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}.mean is not implemented")

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}.mode is not implemented")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}.variance is not implemented")

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def _validate_sample(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise ValueError(f"The value argument to log_prob must be a Tensor, got "
                             f"{type(value).__name__}")
        ev = len(self._event_shape)
        if ev and tuple(value.shape[-ev:]) != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{tuple(value.shape)} vs {self._event_shape}")
        if self.support is not None and not bool(self.support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape "
                             f"{tuple(value.shape)}) to be within the support "
                             f"({self.support!r}) of the distribution {self!r}, but found "
                             f"invalid values:\n{value}")

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in vars(self)]
        args = ", ".join(f"{k}: {tuple(getattr(self, k).shape) if isinstance(getattr(self, k), Tensor) else getattr(self, k)}"  # noqa: E501
                         for k in names)
        return f"{type(self).__name__}({args})"
