"""The base class of every distribution (torch.distributions.Distribution)."""
from __future__ import annotations

import warnings
from typing import Any

from ..core.grad_mode import no_grad
from ..core.shape_util import Size
from ..core.tensor import Tensor
from . import constraints
from .utils import _size, lazy_property

__all__ = ["Distribution"]


def _init_of(klass: type) -> Any:
    """The ``__init__`` a class runs (the first one along its MRO)."""
    return next(vars(c)["__init__"] for c in klass.__mro__ if "__init__" in vars(c))


class Distribution:
    """A family member with ``batch_shape`` (independent, differently parameterised copies)
    and ``event_shape`` (the shape of one draw).

    ``sample`` draws without gradient; ``rsample`` draws by a reparameterisation that
    gradients flow through, where ``has_rsample``. With ``validate_args`` (default: on,
    unless Python runs with ``-O``, as torch; see :meth:`set_default_validate_args`) the
    constructor checks the parameters against ``arg_constraints`` and ``log_prob`` checks
    its value against ``support``, each raising ValueError naming the bad one.

    A family states ``_expand_attrs``, the tensor attributes that carry its batch shape
    (leading) and the parameter's own event dims (trailing); :meth:`expand` is written once
    from it. Families whose state is more than that override :meth:`expand`."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__
    _expand_attrs: tuple[str, ...] | None = None

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions constructed later without
        an explicit ``validate_args``."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args expects True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape: Any = (), event_shape: Any = (),
                 validate_args: bool | None = None) -> None:
        self._batch_shape = _size(batch_shape)
        self._event_shape = _size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._validate_parameters()
        super().__init__()

    def _validate_parameters(self) -> None:
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            warnings.warn(f"{type(self)} does not define `arg_constraints`. Please set "
                          f"`arg_constraints = {{}}` or initialize the distribution with "
                          f"`validate_args=False` to turn off validation.", stacklevel=3)
            return
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # cannot be checked
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None),
                                                         lazy_property):
                continue  # derived from the given parameter, not given itself
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(f"Expected parameter {param} ({type(value).__name__} of "
                                 f"shape {tuple(value.shape)}) of distribution {self!r} to "
                                 f"satisfy the constraint {constraint!r}, but found invalid "
                                 f"values:\n{value}")

    # ----------------------------------------------------------------- expanding
    def expand(self, batch_shape: Any, _instance: Any = None) -> "Distribution":
        """A new distribution with batch dims expanded to ``batch_shape`` (the parameters
        are expanded views: no copies, and no re-validation)."""
        owner = next((c for c in type(self).__mro__ if "_expand_attrs" in c.__dict__
                      and c.__dict__["_expand_attrs"] is not None), None)
        if owner is None:
            raise NotImplementedError(f"{type(self).__name__} does not implement expand")
        new = self._get_checked_instance(owner, _instance)
        batch_shape = _size(batch_shape)
        nb = len(self._batch_shape)
        for name in self._expand_attrs or ():
            if name not in self.__dict__:
                continue
            value = self.__dict__[name]
            if isinstance(value, Tensor):
                value = value.expand(tuple(batch_shape) + tuple(value.shape[nb:]))
            setattr(new, name, value)
        for name, value in self.__dict__.items():  # the rest (counts, temperatures) as is
            if name not in new.__dict__ and name not in ("_batch_shape", "_event_shape"):
                new.__dict__[name] = value
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        """An empty instance of ``type(self)`` for ``expand`` to fill (or ``_instance``)."""
        if _instance is None and _init_of(type(self)) is not _init_of(cls):
            raise NotImplementedError(f"Subclass {type(self).__name__} of {cls.__name__} "
                                      f"that defines a custom __init__ method must also "
                                      f"define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    # -------------------------------------------------------------------- shapes
    @property
    def batch_shape(self) -> Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of one draw (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        """The constraint each parameter must satisfy."""
        raise NotImplementedError

    @property
    def support(self) -> Any:
        """The constraint every value of the distribution satisfies."""
        raise NotImplementedError

    def _extended_shape(self, sample_shape: Any = ()) -> Size:
        """``sample_shape + batch_shape + event_shape``."""
        return Size(tuple(_size(sample_shape)) + tuple(self._batch_shape)
                    + tuple(self._event_shape))

    # ------------------------------------------------------------------- moments
    @property
    def mean(self) -> Tensor:
        """The mean."""
        raise NotImplementedError(f"{type(self)} does not implement mean")

    @property
    def mode(self) -> Tensor:
        """The mode."""
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self) -> Tensor:
        """The variance."""
        raise NotImplementedError(f"{type(self)} does not implement variance")

    @property
    def stddev(self) -> Tensor:
        """The standard deviation."""
        return self.variance.sqrt()

    # ------------------------------------------------------------------- drawing
    def sample(self, sample_shape: Any = ()) -> Tensor:
        """A draw of shape ``sample_shape + batch_shape + event_shape``, without gradient."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """A reparameterised draw (gradients flow to the parameters)."""
        raise NotImplementedError(f"{type(self).__name__} has no reparameterised sampler "
                                  f"(has_rsample is False): use sample(), or a "
                                  f"score-function estimator with log_prob()")

    def sample_n(self, n: int) -> Tensor:
        """``sample((n,))`` (deprecated in torch)."""
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning,
                      stacklevel=2)
        return self.sample(Size((n,)))

    # ------------------------------------------------------------------- density
    def log_prob(self, value: Tensor) -> Tensor:
        """The log density (or mass) at ``value``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def cdf(self, value: Tensor) -> Tensor:
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf")

    def icdf(self, value: Tensor) -> Tensor:
        """The inverse of :meth:`cdf`."""
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every value of a discrete support along a new leading dim."""
        raise NotImplementedError(f"{type(self).__name__} does not implement "
                                  f"enumerate_support")

    def entropy(self) -> Tensor:
        """The entropy, batched over ``batch_shape``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def perplexity(self) -> Tensor:
        """``exp(entropy)``."""
        return self.entropy().exp()

    def _validate_sample(self, value: Tensor) -> None:
        """ValueError unless ``value`` is a tensor broadcastable with the batch and event
        shapes and inside the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        shape = tuple(value.shape)
        ev = len(self._event_shape)
        if shape[len(shape) - ev:] != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{Size(shape)} vs {self._event_shape}.")
        expected = tuple(self._batch_shape) + tuple(self._event_shape)
        for i, j in zip(reversed(shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{Size(shape)} vs {Size(expected)}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{type(self)} does not define `support` to enable sample "
                          f"validation. Please initialize the distribution with "
                          f"`validate_args=False` to turn off validation.", stacklevel=3)
            return
        if not bool(support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape "
                             f"{shape}) to be within the support ({support!r}) of the "
                             f"distribution {self!r}, but found invalid values:\n{value}")

    def __repr__(self) -> str:
        try:
            names = [k for k in self.arg_constraints if k in self.__dict__]
        except NotImplementedError:
            names = []
        parts = []
        for k in names:
            v = self.__dict__[k]
            shown = v if not isinstance(v, Tensor) or v.numel() == 1 else Size(v.shape)
            parts.append(f"{k}: {shown}")
        return f"{type(self).__name__}({', '.join(parts)})"
