"""torch's lazy modules (``LazyLinear``, ``LazyConv{1,2,3}d``, ``LazyConvTranspose{1,2,3}d``,
``LazyBatchNorm{1,2,3}d``, ``LazyInstanceNorm{1,2,3}d``) and the placeholders they hold
(``UninitializedParameter``, ``UninitializedBuffer``).

One rule makes every lazy class (:func:`lazy_class`): it takes its module's constructor
arguments without the first (``in_features``, ``in_channels``, ``num_features``), holds
placeholders, and on its first call reads that size from the input (the last dimension for
Linear, the channel dimension otherwise), builds the module as torch would (same
initialization), moves the built tensors into the placeholders (so an optimizer made
before the first call holds the real parameters) and becomes that module
(``cls_to_become``), as torch's ``LazyModuleMixin`` does.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

from ..core.ops.creation import empty
from ..core.tensor import Tensor
from .module import Module
from .parameter import Parameter

__all__ = ["UninitializedParameter", "UninitializedBuffer", "LazyModuleMixin", "lazy_class"]


def _take(placeholder: Tensor, built: Tensor, cls: type) -> Tensor:
    """``placeholder`` holding ``built``'s storage, as a ``cls`` (materialized)."""
    placeholder._data, placeholder._device = built._data, built._device
    placeholder._dtype = built._dtype
    placeholder.__class__ = cls
    return placeholder


class UninitializedParameter(Parameter):
    """torch's ``nn.UninitializedParameter``: a parameter whose shape is not known yet;
    :meth:`materialize` gives it one and makes it a :class:`Parameter`."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None,
                dtype: Any = None) -> "UninitializedParameter":
        p = super().__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)
        return p  # type: ignore[return-value]

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give this placeholder an (uninitialised) tensor of ``shape``."""
        built = empty(shape, device=device or self.device, dtype=dtype or self.dtype)
        _take(self, built, self.cls_to_become)

    def __repr__(self) -> str:
        return "<UninitializedParameter>"

    __str__ = __repr__


class UninitializedBuffer(Tensor):
    """torch's ``nn.UninitializedBuffer``: a buffer whose shape is not known yet."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                persistent: bool = True) -> "UninitializedBuffer":
        t = empty(0, device=device, dtype=dtype)
        t.__class__ = cls
        t.requires_grad = bool(requires_grad)
        t.__dict__["persistent"] = persistent
        return t  # type: ignore[return-value]

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give this placeholder an (uninitialised) tensor of ``shape``."""
        _take(self, empty(shape, device=device or self.device, dtype=dtype or self.dtype),
              Tensor)

    def __repr__(self) -> str:
        return "<UninitializedBuffer>"

    __str__ = __repr__


class LazyModuleMixin:
    """What every lazy module shares: :meth:`has_uninitialized_params` and
    :meth:`initialize_parameters`; the first call materializes."""

    cls_to_become: type
    _infer: Callable[[Any, Tensor], int]
    _lazy_args: dict

    def has_uninitialized_params(self) -> bool:
        """Whether a placeholder is still unmaterialized."""
        held = list(self._parameters.values()) + list(self._buffers.values())  # type: ignore[attr-defined]
        return any(isinstance(t, (UninitializedParameter, UninitializedBuffer)) for t in held)

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:  # noqa: A002
        """Build the module for ``input``'s size and take its parameters and buffers."""
        built = self.cls_to_become(type(self)._infer(self, input), **self._lazy_args)
        internal = set(vars(Module()))
        for key, value in vars(built).items():
            if key not in internal:
                self.__dict__[key] = value
        for store, kind in ((self._parameters, Parameter), (self._buffers, Tensor)):  # type: ignore[attr-defined]
            for name, value in getattr(built, "_parameters" if kind is Parameter
                                       else "_buffers").items():
                held = store.get(name)
                lazy = isinstance(held, (UninitializedParameter, UninitializedBuffer))
                store[name] = _take(held, value, kind) if lazy and value is not None \
                    else value
        self.__class__ = self.cls_to_become

    def forward(self, input: Tensor, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
        self.initialize_parameters(input)
        return self.forward(input, *args, **kwargs)  # the built module's forward now


def _placeholders(self: Module, bound: dict, device: Any, dtype: Any) -> None:
    """Register the placeholders torch's lazy module holds for these arguments."""
    affine = bound.get("affine", True)
    if affine:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bound.get("bias", True):
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        else:
            self.register_parameter("bias", None)
    else:
        self.register_parameter("weight", None)
        self.register_parameter("bias", None)
    if bound.get("track_running_stats", False):
        for name in ("running_mean", "running_var"):
            self.register_buffer(name, UninitializedBuffer(device=device, dtype=dtype))
        from ..core import dtypes
        from ..core.ops.creation import tensor
        self.register_buffer("num_batches_tracked",
                             tensor(0, dtype=dtypes.int64, device=device))


def _lazy_norm_init(eps: float = 1e-5, momentum: Any = 0.1, affine: bool = True,
                    track_running_stats: bool = True, device: Any = None, dtype: Any = None,
                    *, bias: bool = True) -> None:
    """torch's ``_LazyNormBase`` signature: every lazy norm, the instance norms too, is
    affine and tracks running statistics by default."""


def lazy_class(name: str, cls: type, infer: Callable[[Any, Tensor], int],
               signature_of: Callable[..., None] | None = None) -> type:
    """The lazy form of ``cls``: its constructor without the first argument (or the
    signature of ``signature_of``), whose value ``infer(module, input)`` reads from the
    first input."""
    full = inspect.signature(cls)  # the constructor's, without self
    params = list(full.parameters.values())
    lazy_sig = inspect.signature(signature_of) if signature_of else \
        full.replace(parameters=params[1:])

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        bound = lazy_sig.bind(*args, **kwargs)
        bound.apply_defaults()
        Module.__init__(self)
        self._lazy_args = dict(bound.arguments)
        setattr(self, params[0].name, 0)  # torch's lazy modules answer 0 until built
        self._lazy_repr = ", ".join(f"{k}={v!r}" for k, v in bound.arguments.items()
                                    if k not in ("device", "dtype"))
        _placeholders(self, dict(bound.arguments), bound.arguments.get("device"),
                      bound.arguments.get("dtype"))
    me = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    __init__.__signature__ = lazy_sig.replace(  # type: ignore[attr-defined]
        parameters=[me] + list(lazy_sig.parameters.values()))
    doc = (f"torch's ``nn.{name}``: ``{cls.__name__}`` whose ``{params[0].name}`` is read "
           f"from the first input.")
    return type(name, (LazyModuleMixin, cls), {
        "__init__": __init__, "cls_to_become": cls, "_infer": staticmethod(infer),
        "__doc__": doc, "__module__": __name__, "forward": LazyModuleMixin.forward,
        "extra_repr": lambda self: self._lazy_repr})


def _channels(spatial: int) -> Callable[[Any, Tensor], int]:
    """The channel count of an input with ``spatial`` spatial dimensions (axis 0 when the
    input has no batch axis)."""
    def infer(module: Any, x: Tensor) -> int:
        return int(x.shape[0] if x.ndim == spatial + 1 else x.shape[1])
    return infer


def _last(module: Any, x: Tensor) -> int:
    return int(x.shape[-1])


def _batch_features(module: Any, x: Tensor) -> int:
    return int(x.shape[1] if x.ndim > 1 else x.shape[0])


def make_all() -> dict[str, type]:
    """Every lazy class torch.nn has, by name."""
    from . import conv, linear, normalization as norm
    out = {"LazyLinear": lazy_class("LazyLinear", linear.Linear, _last)}
    for k in (1, 2, 3):
        for kind, mod in (("Conv", conv), ("ConvTranspose", conv)):
            base = getattr(mod, f"{kind}{k}d")
            out[f"Lazy{kind}{k}d"] = lazy_class(f"Lazy{kind}{k}d", base, _channels(k))
        out[f"LazyBatchNorm{k}d"] = lazy_class(f"LazyBatchNorm{k}d",
                                               getattr(norm, f"BatchNorm{k}d"),
                                               _batch_features, _lazy_norm_init)
        out[f"LazyInstanceNorm{k}d"] = lazy_class(f"LazyInstanceNorm{k}d",
                                                  getattr(norm, f"InstanceNorm{k}d"),
                                                  _channels(k), _lazy_norm_init)
    return out
