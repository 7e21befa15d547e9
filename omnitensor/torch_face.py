"""The ``torch`` face: the module ``import torch`` is under :mod:`omnitensor.as_torch`.

omnitensor's own namespace is also an Array API standard namespace, and where the standard
and torch disagree (``sort`` returning a tensor or ``(values, indices)``, ``std``'s default
correction, ``squeeze`` of a non-1 axis, ``equal`` elementwise or one bool...) a caller's
namespace decides:

* code written for the standard (``x.__array_namespace__()``, ``import omnitensor as ot``,
  SciPy and scikit-learn through array-api-compat) gets the standard's meaning;
* code written for torch (``import torch`` under the alias) gets this module: every name of
  omnitensor, with torch's meaning and torch's parameter names where they differ.

Both faces run the same kernels, dtype rules and backward formulas: the functions here only
bind torch's calling conventions to core's implementations. Everything else is omnitensor's
own object (``torch.Tensor is omnitensor.Tensor``, ``torch.nn is omnitensor.nn``), so module
state (seeds, default device, grad mode) is shared however it is reached.
"""
from __future__ import annotations

import builtins as _b  # bool, int, max... are torch names here (dtypes, ops)
import sys
from typing import Any as _Any

import omnitensor as _ot
from .core.ops import composite as _composite
from .core.ops import creation as _creation
from .core.ops import gather as _gather
from .core.ops import reduction as _reduction
from .core.ops import shape as _shape
from .core.ops import sorting as _sorting
from .core.tensor import Tensor as _Tensor
from .version import __version__, torch_api_version  # noqa: F401 - torch.__version__

__path__: list[str] = []  # a package, so `import torch.nn` finds its parent (as_torch)

# torch's numpy-compatible keyword names, accepted wherever torch accepts them
_UNSET: _Any = object()


def _dim(dim: _Any, axis: _Any) -> _Any:
    return axis if dim is _UNSET or dim is None and axis is not _UNSET else dim


# ----------------------------------------------------------- sorting and extrema
def sort(input: _Tensor, dim: int = -1, descending: _b.bool = False, *,  # noqa: A002
         stable: _b.bool = False, axis: _Any = _UNSET, out: _Any = None) -> _Any:
    """torch's ``sort``: ``(values, indices)`` along ``dim``."""
    d = -1 if axis is _UNSET else axis
    return _sorting.sort_torch(input, d if dim == -1 else dim, descending, _b.bool(stable))


def max(input: _Tensor, dim: _Any = _UNSET, keepdim: bool = False, *,  # noqa: A001,A002
        axis: _Any = _UNSET, keepdims: _Any = _UNSET, out: _Any = None) -> _Any:
    """torch's ``max``: the maximum (``max(x)``), ``(values, indices)`` along ``dim``, or
    the elementwise maximum of two tensors (``max(a, b)``)."""
    d = _dim(dim, axis)
    keep = keepdim if keepdims is _UNSET else keepdims
    if isinstance(d, _Tensor):
        return _ot.maximum(input, d)
    if d is _UNSET:
        return _reduction.amax(input)
    return _reduction.max(input, d, keep)


def min(input: _Tensor, dim: _Any = _UNSET, keepdim: bool = False, *,  # noqa: A001,A002
        axis: _Any = _UNSET, keepdims: _Any = _UNSET, out: _Any = None) -> _Any:
    """torch's ``min`` (see :func:`max`)."""
    d = _dim(dim, axis)
    keep = keepdim if keepdims is _UNSET else keepdims
    if isinstance(d, _Tensor):
        return _ot.minimum(input, d)
    if d is _UNSET:
        return _reduction.amin(input)
    return _reduction.min(input, d, keep)


# ------------------------------------------------------------------ var and std
def _correction(dim: _Any, unbiased: _Any, correction: _Any) -> tuple[_Any, _Any]:
    """torch's var/std conventions: ``var(x, True)`` passes ``unbiased``; the default is
    Bessel's correction 1; ``correction=`` wins."""
    if isinstance(dim, _b.bool):
        dim, unbiased = None, dim
    if correction is None:
        correction = 0 if unbiased is False else 1
    return dim, correction


def var(input: _Tensor, dim: _Any = None, unbiased: _Any = None,  # noqa: A002
        keepdim: bool = False, *, correction: _Any = None, axis: _Any = _UNSET,
        keepdims: _Any = _UNSET, out: _Any = None) -> _Tensor:
    """torch's ``var`` (correction 1 unless ``unbiased=False`` or ``correction=``)."""
    d, c = _correction(_dim(dim, axis), unbiased, correction)
    keep = keepdim if keepdims is _UNSET else keepdims
    return _reduction.var(input, axis=d, keepdims=keep, correction=c)


def std(input: _Tensor, dim: _Any = None, unbiased: _Any = None,  # noqa: A002
        keepdim: bool = False, *, correction: _Any = None, axis: _Any = _UNSET,
        keepdims: _Any = _UNSET, out: _Any = None) -> _Tensor:
    """torch's ``std`` (the correction rule of :func:`var`)."""
    d, c = _correction(_dim(dim, axis), unbiased, correction)
    keep = keepdim if keepdims is _UNSET else keepdims
    return _reduction.std(input, axis=d, keepdims=keep, correction=c)


def var_mean(input: _Tensor, dim: _Any = None, unbiased: _Any = None,  # noqa: A002
             keepdim: bool = False, *, correction: _Any = None) -> tuple[_Tensor, _Tensor]:
    """torch's ``var_mean``: ``(var, mean)``; ``var_mean(x, True)`` passes ``unbiased``."""
    d, c = _correction(dim, unbiased, correction)
    return _reduction.var_mean(input, d, keepdim=keepdim, correction=c)


def std_mean(input: _Tensor, dim: _Any = None, unbiased: _Any = None,  # noqa: A002
             keepdim: bool = False, *, correction: _Any = None) -> tuple[_Tensor, _Tensor]:
    """torch's ``std_mean``: ``(std, mean)``."""
    d, c = _correction(dim, unbiased, correction)
    return _reduction.std_mean(input, d, keepdim=keepdim, correction=c)


# ------------------------------------------------------------- shapes and tests
def squeeze(input: _Tensor, dim: _Any = None) -> _Tensor:  # noqa: A002
    """torch's ``squeeze``: drops the size-1 axes among ``dim``; others stay."""
    return _shape.squeeze_torch(input, dim)


def nonzero(input: _Tensor, *, as_tuple: bool = False, out: _Any = None) -> _Any:  # noqa: A002
    """torch's ``nonzero``: an (N, ndim) int64 tensor, or a tuple with ``as_tuple=True``."""
    return _gather.nonzero_torch(input, as_tuple=as_tuple)


def meshgrid(*tensors: _Any, indexing: str | None = None) -> tuple[_Tensor, ...]:
    """torch's ``meshgrid``: ``indexing='ij'`` unless told otherwise; 0-d tensors count as
    one-element vectors."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    flat = [t.reshape(1) if isinstance(t, _Tensor) and t.ndim == 0 else t for t in tensors]
    return tuple(_creation.meshgrid(*flat, indexing=indexing or "ij"))


def equal(input: _Tensor, other: _Tensor) -> _b.bool:  # noqa: A002
    """torch's ``equal``: True when both have the same shape and elements."""
    return _composite.equal(input, other)


def diff(input: _Tensor, n: int = 1, dim: int = -1, prepend: _Any = None,  # noqa: A002
         append: _Any = None) -> _Tensor:
    """torch's ``diff`` (positional ``n, dim``)."""
    return _composite.diff(input, axis=dim, n=n, prepend=prepend, append=append)


def count_nonzero(input: _Tensor, dim: _Any = None) -> _Tensor:  # noqa: A002
    """torch's ``count_nonzero`` over ``dim`` (an int or a tuple)."""
    return _gather.count_nonzero(input, axis=dim)


def linspace(start: _Any, end: _Any, steps: int, *, dtype: _Any = None,
             device: _Any = None, requires_grad: bool = False, layout: _Any = None,
             pin_memory: bool = False, out: _Any = None) -> _Tensor:
    """torch's ``linspace(start, end, steps)``."""
    return _creation.linspace(_scalar(start), _scalar(end), steps, dtype=dtype,
                              device=device, requires_grad=requires_grad)


def _scalar(v: _Any) -> _Any:
    return v.item() if isinstance(v, _Tensor) else v


# ---------------------------------------------------------------- the namespace
_OVERRIDES = {name for name, value in list(globals().items())
              if not name.startswith("_") and callable(value)
              and getattr(value, "__module__", None) == __name__}


def _copy_namespace() -> None:
    """Bind every public name of omnitensor not overridden above (done once, at import:
    attribute reads on the face cost what they cost on omnitensor)."""
    g = globals()
    for name, value in vars(_ot).items():
        if name.startswith("__") or name in _OVERRIDES or name in g:
            continue
        g[name] = value


_copy_namespace()


def __getattr__(name: str) -> _Any:
    """Lazily made names (``torch.nn``, ``torch.compile``, ``torch.save``...) come from
    omnitensor's own lazy attributes, and are cached here once made."""
    if name == "ops":  # torch.ops.<namespace>.<op>: the torch.library operators
        from .library import ops as torch_ops
        globals()[name] = torch_ops
        return torch_ops
    if name == "torch":  # torch.torch is torch
        return sys.modules[__name__]
    try:
        value = getattr(_ot, name)
    except AttributeError:
        # torch.version, torch._C, torch._dynamo...: submodules reached as attributes
        import importlib.util
        if name.startswith("__") or importlib.util.find_spec(f"omnitensor.{name}") is None:
            raise AttributeError(f"module 'torch' (omnitensor's torch face) has no "
                                 f"attribute {name!r}") from None
        value = importlib.import_module(f"omnitensor.{name}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(dir(_ot)))

