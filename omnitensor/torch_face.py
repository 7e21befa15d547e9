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
from .core.ops.out_arg import write_out as _write_out
from .core.shape_util import as_shape as _as_shape, int_arg as _int_arg, no_none_dim as _no_none_dim
from .core.tensor import Tensor as _Tensor
from .version import __version__, torch_api_version  # noqa: F401 - torch.__version__
from . import torch_backends as backends  # noqa: F401 - torch.backends (not the adapters)
from . import torch_config as __config__  # noqa: F401 - torch.__config__ (build settings)
from . import torch_linalg as linalg  # noqa: F401 - torch.linalg (torch's solve rule)

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
    return _write_out("sort", _sorting.sort_torch(input, d if dim == -1 else dim, descending,
                                                  _b.bool(stable)), out)


def max(input: _Tensor, dim: _Any = _UNSET, keepdim: bool = False, *,  # noqa: A001,A002
        axis: _Any = _UNSET, keepdims: _Any = _UNSET, out: _Any = None) -> _Any:
    """torch's ``max``: the maximum (``max(x)``), ``(values, indices)`` along ``dim``, or
    the elementwise maximum of two tensors (``max(a, b)``)."""
    d = _dim(dim, axis)
    keep = keepdim if keepdims is _UNSET else keepdims
    if isinstance(d, _Tensor):
        return _write_out("max", _ot.maximum(input, d), out)
    if d is _UNSET:
        return _write_out("max", _reduction.amax(input), out)
    return _write_out("max", _reduction.max(input, _no_none_dim(d, "max"), keep), out)


def min(input: _Tensor, dim: _Any = _UNSET, keepdim: bool = False, *,  # noqa: A001,A002
        axis: _Any = _UNSET, keepdims: _Any = _UNSET, out: _Any = None) -> _Any:
    """torch's ``min`` (see :func:`max`)."""
    d = _dim(dim, axis)
    keep = keepdim if keepdims is _UNSET else keepdims
    if isinstance(d, _Tensor):
        return _write_out("min", _ot.minimum(input, d), out)
    if d is _UNSET:
        return _write_out("min", _reduction.amin(input), out)
    return _write_out("min", _reduction.min(input, _no_none_dim(d, "min"), keep), out)


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
    return _write_out("var", _reduction.var(input, axis=d, keepdims=keep, correction=c), out)


def std(input: _Tensor, dim: _Any = None, unbiased: _Any = None,  # noqa: A002
        keepdim: bool = False, *, correction: _Any = None, axis: _Any = _UNSET,
        keepdims: _Any = _UNSET, out: _Any = None) -> _Tensor:
    """torch's ``std`` (the correction rule of :func:`var`)."""
    d, c = _correction(_dim(dim, axis), unbiased, correction)
    keep = keepdim if keepdims is _UNSET else keepdims
    return _write_out("std", _reduction.std(input, axis=d, keepdims=keep, correction=c), out)


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
def squeeze(input: _Tensor, dim: _Any = _UNSET) -> _Tensor:  # noqa: A002
    """torch's ``squeeze``: drops the size-1 axes among ``dim`` (every one when left
    out; an explicit None is refused, as torch); others stay."""
    return _shape.squeeze_torch(input, None if dim is _UNSET else _no_none_dim(dim, "squeeze"))


def prod(input: _Tensor, dim: _Any = _UNSET, keepdim: _b.bool = False, *,  # noqa: A002
         dtype: _Any = None) -> _Tensor:
    """torch's ``prod(x)`` / ``prod(x, dim)`` (one int dim: None or a tuple is refused,
    as torch)."""
    if dim is _UNSET:
        return _reduction.prod(input, dtype=dtype)
    return _reduction.prod(input, _int_arg(dim, "dim", "prod"), keepdim, dtype=dtype)


def cat(tensors: _Any, dim: _Any = 0, *, axis: _Any = _UNSET) -> _Tensor:
    """torch's ``cat``: ``dim`` is an int (the Array API's ``concat(axis=None)``, which
    flattens first, is refused here as torch refuses it)."""
    d = _int_arg(dim if axis is _UNSET else axis, "dim", "cat")
    return _ot.cat(tensors, d)


concat = concatenate = cat


def nonzero(input: _Tensor, *, as_tuple: bool = False, out: _Any = None) -> _Any:  # noqa: A002
    """torch's ``nonzero``: an (N, ndim) int64 tensor, or a tuple with ``as_tuple=True``."""
    return _write_out("nonzero", _gather.nonzero_torch(input, as_tuple=as_tuple), out)


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
    return _write_out("linspace", _creation.linspace(
        _scalar(start), _scalar(end), steps, dtype=dtype, device=device,
        requires_grad=requires_grad), out)


def _scalar(v: _Any) -> _Any:
    return v.item() if isinstance(v, _Tensor) else v


# ------------------------------------------------------- torch's stricter call forms
def arange(start: _Any = 0, end: _Any = None, step: _Any = _UNSET, *, out: _Any = None,
           dtype: _Any = None, layout: _Any = None, device: _Any = None,
           pin_memory: bool = False, requires_grad: bool = False) -> _Tensor:
    """torch's ``arange(start=0, end, step=1)`` (``end=`` by keyword too); bounds that
    contradict the step's sign are an error (the Array API gives an empty range)."""
    if end is None and step is _UNSET:
        start, end = 0, start
    elif end is None:  # torch: arange(1, None, 2) is a TypeError, not a range up to 1
        raise TypeError("arange(): argument 'end' must be Number, not NoneType")
    step = 1 if step is _UNSET else step
    s, e, st = (_scalar(v) for v in (start, end, step))
    if (st > 0 and e < s) or (st < 0 and e > s):  # by sign: (e - s) * st can underflow
        raise ValueError(f"arange: upper bound and lower bound inconsistent with step sign "
                         f"(start={s}, end={e}, step={st})")
    res = _creation.arange(s, e, st, dtype=dtype, device=device,
                           requires_grad=requires_grad)
    return _write_out("arange", res, out)


def roll(input: _Tensor, shifts: _Any, dims: _Any = None) -> _Tensor:  # noqa: A002
    """torch's ``roll``: as many shifts as dims, or one shift and no dims (the Array API's
    ``roll`` also takes one shift for many axes)."""
    return input.roll(shifts, dims)


def full(size: _Any, fill_value: _Any, *, dtype: _Any = None, device: _Any = None,
         requires_grad: _b.bool = False) -> _Tensor:
    """torch's ``full(size, fill_value)``: ``size`` is a sequence (``full(3, v)`` is a
    TypeError in torch; the Array API's ``full`` takes an int)."""
    return _creation.full(_as_shape((size,), op="full", sequence=True), fill_value,
                          dtype=dtype, device=device, requires_grad=requires_grad)


def eye(n: int, m: _Any = _UNSET, *, dtype: _Any = None, device: _Any = None,
        requires_grad: _b.bool = False) -> _Tensor:
    """torch's ``eye(n, m)``: ``m`` may be left out but not given as None (the Array API's
    ``eye(n_rows, n_cols=None)`` takes None)."""
    n = _int_arg(n, "n", "eye")
    cols = n if m is _UNSET else _int_arg(m, "m", "eye")
    return _creation.eye(n, cols, dtype=dtype, device=device, requires_grad=requires_grad)


def logspace(start: _Any, end: _Any, steps: int, base: float = 10.0, *, dtype: _Any = None,
             device: _Any = None, requires_grad: bool = False, layout: _Any = None,
             pin_memory: bool = False, out: _Any = None) -> _Tensor:
    """torch's ``logspace`` (0-d tensor ends read as numbers)."""
    res = _creation.logspace(_scalar(start), _scalar(end), steps, base, dtype=dtype,
                             device=device, requires_grad=requires_grad)
    return _write_out("logspace", res, out)


def _tensor_operands(fn: _Any, name: str, both: _b.bool) -> _Any:
    """``fn`` refusing Python numbers where torch does: for ``both``, as either operand
    (``atan2(x, 2)``); otherwise as the first (``eq(2, x)``)."""
    import functools

    @functools.wraps(fn)
    def checked(*args: _Any, **kwargs: _Any) -> _Any:
        for pos, arg in enumerate(("input", "other")[:2 if both else 1]):
            value = args[pos] if pos < len(args) else kwargs.get(arg, None)
            if pos < len(args) or arg in kwargs:
                if not isinstance(value, _Tensor):
                    raise TypeError(f"{name}(): argument '{arg}' (position {pos + 1}) must "
                                    f"be Tensor, not {type(value).__name__}")
        return fn(*args, **kwargs)
    return checked


for _name in ("atan2", "arctan2", "maximum", "minimum", "fmax", "fmin", "logaddexp",
              "logaddexp2", "logical_and", "logical_or", "logical_xor", "hypot",
              "nextafter", "heaviside", "isclose"):
    globals()[_name] = _tensor_operands(getattr(_ot, _name), _name, True)


def xlogy(input: _Any, other: _Any, *, out: _Any = None) -> _Tensor:  # noqa: A002
    """torch's ``xlogy``: a number may stand for one operand, not for both."""
    if not isinstance(input, _Tensor) and not isinstance(other, _Tensor):
        raise TypeError(f"xlogy(): expected a Tensor among the arguments, got "
                        f"({type(input).__name__}, {type(other).__name__})")
    return _write_out("xlogy", _composite.xlogy(input, other), out)


def igamma(input: _Tensor, other: _Tensor, *, out: _Any = None) -> _Tensor:  # noqa: A002
    """torch's ``igamma`` (``special.gammainc``), of tensors only."""
    return _write_out("igamma", _tensor_operands(_ot.special.gammainc, "igamma", True)(
        input, other), out)


def igammac(input: _Tensor, other: _Tensor, *, out: _Any = None) -> _Tensor:  # noqa: A002
    """torch's ``igammac`` (``special.gammaincc``), of tensors only."""
    return _write_out("igammac", _tensor_operands(_ot.special.gammaincc, "igammac", True)(
        input, other), out)


def mean(input: _Tensor, dim: _Any = None, keepdim: bool = False, *,  # noqa: A002
         dtype: _Any = None, out: _Any = None, axis: _Any = _UNSET,
         keepdims: _Any = _UNSET) -> _Tensor:
    """torch's ``mean``: of floating or complex tensors (or with such a ``dtype``);
    torch refuses to guess a dtype for the mean of integers, as here."""
    d = input.dtype if dtype is None else _ot.as_dtype(dtype)
    if d.kind not in "fc":
        which = "Input" if dtype is None else "Optional"
        raise _ot.DTypeError(f"mean(): could not infer output dtype. {which} dtype must be "
                             f"either a floating point or complex dtype. Got: {d.name}")
    keep = keepdim if keepdims is _UNSET else keepdims
    res = _reduction.mean(input, _dim(dim, axis), keep, dtype=dtype)
    return _write_out("mean", res, out)
for _name in ("copysign", "eq", "ne", "lt", "le", "gt", "ge", "fmod", "greater", "less",
              "greater_equal", "less_equal", "not_equal"):
    globals()[_name] = _tensor_operands(getattr(_ot, _name), _name, False)
for _name, _fn in (("max", max), ("min", min)):  # max(a, b): the binary form too
    globals()[_name] = _tensor_operands(_fn, _name, False)
del _name, _fn


_GRID_MODES = ("bilinear", "nearest", "bicubic")
_GRID_PADDINGS = ("zeros", "border", "reflection")


def grid_sampler_2d(input: _Tensor, grid: _Tensor, interpolation_mode: int,  # noqa: A002
                    padding_mode: int, align_corners: bool) -> _Tensor:
    """torch's ``grid_sampler_2d``: ``nn.functional.grid_sample`` with the modes as
    torch's enum values (interpolation 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros,
    1 border, 2 reflection)."""
    from .nn.functional import grid_sample
    return grid_sample(input, grid, _GRID_MODES[interpolation_mode],
                       _GRID_PADDINGS[padding_mode], align_corners)


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
    from .aten import torch_attribute  # torch._chunk_cat, torch.segment_reduce: ATen's ops
    packet = torch_attribute(name)
    if packet is not None:
        globals()[name] = packet
        return packet
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



def _bind_functional_at_top() -> None:
    """torch's top-level in-place functions, top-level spellings of Tensor methods and of
    nn.functional ops (``torch.abs_``, ``torch.detach``, ``torch.conv2d``,
    ``torch.batch_norm``...): omnitensor/torch_face_functional.py, one rule per class."""
    from . import torch_face_functional
    g = globals()
    for name, value in torch_face_functional.names().items():
        if name not in g:  # omnitensor's own (torch-meaning) name wins
            g[name] = value


_bind_functional_at_top()


def _bind_more() -> None:
    """The ``*_copy`` functions, torch's switches and renamed signatures, ``range``...:
    omnitensor/torch_face_more.py (these win over omnitensor's own names)."""
    from . import torch_face_more
    globals().update(torch_face_more.names())


_bind_more()


class _Symbolic:
    """torch's symbolic numbers wrap a ``SymNode`` of dynamo's shape environment, which
    omnitensor does not have: making one is refused."""

    def __init__(self, node: _Any) -> None:
        raise TypeError(f"torch.{type(self).__name__}(node): symbolic shapes need dynamo's "
                        f"SymNode; omnitensor's shapes are concrete ints")


class SymInt(_Symbolic):
    """torch's symbolic int (shapes under dynamic tracing): omnitensor's shapes are plain
    ints, so no value is one; code checks ``isinstance(n, (int, torch.SymInt))``."""


class SymFloat(_Symbolic):
    """torch's symbolic float: no value is one here (see :class:`SymInt`)."""


class SymBool(_Symbolic):
    """torch's symbolic bool: no value is one here (see :class:`SymInt`)."""
