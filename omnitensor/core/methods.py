"""Tensor methods and operators, bound from the op functions (one implementation each).

Methods follow torch (``x.max(1)`` returns values and indices, ``x.squeeze(d)`` skips
axes whose size is not 1, ``x.repeat`` tiles, ``x.sort()`` returns values and indices).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..errors import IndexOutOfRangeError, ShapeError
from .engine import tensor_backward
from .graph import needs_grad, no_grad_ctx
from .shape_util import int_arg, no_none_dim, normalize_axis
from .tensor import Tensor
from .legacy import Size, bind as _bind_legacy
from .sparse import bind as _bind_sparse
from .quantized import bind as _bind_quantized
from .ops import (composite, conversion, creation, elementwise as ew, gather, indexing, join,
                  linalg_ops, random as rnd, reduction as red, shape as sh, sorting, ternary,
                  torch_extras)
from .ops.inplace import apply_inplace, check_leaf, inplace_method as _inplace_from
from .shared_memory import is_shared as _is_shared, share_memory_ as _share_memory_

_SCALARS = (bool, int, float, complex)


def _operand(other: Any) -> Any:
    """``other`` as an operator operand: Tensors and Python scalars as they are, a NumPy
    scalar as the Python scalar it holds (weak, like torch), a NumPy array as a cpu
    tensor; None when unsupported."""
    if isinstance(other, (Tensor,) + _SCALARS):
        return other
    if isinstance(other, np.generic) and other.dtype.kind in "biufc":
        return other.item()
    if isinstance(other, np.ndarray) and other.dtype.kind in "biufc":
        return creation.asarray(other)  # a cpu tensor: device operands still must match
    return None


def _dunder(fn: Callable, reflected: bool = False) -> Callable:
    if reflected:
        def op(self: Tensor, other: Any) -> Any:
            other = _operand(other)
            if other is None:
                return NotImplemented
            return fn(other, self)
    else:
        def op(self: Tensor, other: Any) -> Any:
            other = _operand(other)
            if other is None:
                return NotImplemented
            return fn(self, other)
    return op


#: the reflected operators torch binds as C descriptors (or, for the division, as a method
#: of ``self``): called as ``Tensor.__radd__(2, t)`` they refuse a non-tensor ``self``
_TENSOR_SELF_ONLY = frozenset({"radd", "rmul", "rand", "ror", "rxor", "rtruediv"})
#: ... and those that answer NotImplemented to it (torch's wrapper of a refusing kernel)
_NOT_IMPLEMENTED_FOR_NON_TENSOR_SELF = frozenset({"rsub"})


def _binary_dunder(bop: Any, reflected: bool = False, name: str = "") -> Callable:
    """An operator straight into the elementwise dispatcher (the hot path)."""
    binary = ew.binary_entry(bop)  # pow: through autocast's check
    ok = (Tensor,) + _SCALARS
    if reflected:
        strict = name in _TENSOR_SELF_ONLY or name in _NOT_IMPLEMENTED_FOR_NON_TENSOR_SELF

        def op(self: Tensor, other: Any) -> Any:
            if strict and not isinstance(self, Tensor):
                if name in _NOT_IMPLEMENTED_FOR_NON_TENSOR_SELF:
                    return NotImplemented
                raise TypeError(f"descriptor '__{name}__' for 'Tensor' objects doesn't apply "
                                f"to a '{type(self).__name__}' object")
            if not isinstance(other, ok):
                other = _operand(other)
                if other is None:
                    return NotImplemented
            return binary(bop, other, self)
    else:
        def op(self: Tensor, other: Any) -> Any:
            if other.__class__ is Tensor or isinstance(other, ok):
                return binary(bop, self, other)
            other = _operand(other)
            if other is None:
                return NotImplemented
            return binary(bop, self, other)
    return op


def _idunder(op_name: str) -> Callable:
    bop = ew.BINARY_OPS[op_name]

    def op(self: Tensor, other: Any) -> Any:
        other = _operand(other)
        if other is None:
            return NotImplemented
        return ew._binary_inplace(bop, self, other)
    return op


def _bind_operators() -> None:
    B = ew.BINARY_OPS
    pairs = {
        "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
        "floordiv": "floor_divide", "mod": "remainder", "pow": "pow", "and": "bitwise_and",
        "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "bitwise_left_shift",
        "rshift": "bitwise_right_shift",
    }
    for dunder, name in pairs.items():
        setattr(Tensor, f"__{dunder}__", _binary_dunder(B[name]))
        setattr(Tensor, f"__r{dunder}__", _binary_dunder(B[name], True, f"r{dunder}"))
        setattr(Tensor, f"__i{dunder}__", _idunder(name))
    for dunder, name in {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                         "gt": "greater", "ge": "greater_equal"}.items():
        setattr(Tensor, f"__{dunder}__", _binary_dunder(B[name]))
    Tensor.__matmul__ = _dunder(linalg_ops.matmul)
    Tensor.__rmatmul__ = _dunder(linalg_ops.matmul, reflected=True)

    def imatmul(self: Tensor, other: Any) -> Tensor:
        res = linalg_ops.matmul(self, other)
        if res.shape != self.shape:
            raise ShapeError(f"@=: result shape {res.shape} differs from {self.shape}")
        return self.copy_(res)
    Tensor.__imatmul__ = imatmul
    Tensor.__neg__ = lambda self: ew.negative(self)
    Tensor.__pos__ = lambda self: ew.positive(self)
    Tensor.__abs__ = lambda self: ew.abs(self)
    Tensor.__invert__ = lambda self: ew.bitwise_invert(self)
    Tensor.__getitem__ = indexing.getitem
    Tensor.__setitem__ = indexing.setitem


def _inplace_unary(name: str) -> Callable:
    uop = ew.UNARY_OPS[name]

    def method(self: Tensor) -> Tensor:
        return ew._unary_inplace(uop, self)
    method.__name__ = name + "_"
    return method


def _inplace_binary(name: str) -> Callable:
    bop = ew.BINARY_OPS[name]

    def method(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
        if alpha != 1:
            other = other * alpha
        return ew._binary_inplace(bop, self, other)
    method.__name__ = name + "_"
    return method


def zero_(self: Tensor) -> Tensor:
    return fill_(self, 0)


def fill_(self: Tensor, value: Any) -> Tensor:
    """Fill with a scalar (or 0-d tensor) in place."""
    if isinstance(value, Tensor):
        value = value.item()
    if needs_grad(self):
        check_leaf(self)
        return apply_inplace(self, lambda base: base * 0 + value, "fill")
    self._device.backend.assign(self._data, indexing._scalar_of(self, value))
    self._bump_version()
    return self


def copy_(self: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (any device/dtype, broadcastable) into this tensor in place."""
    if not isinstance(src, Tensor):
        src = creation.tensor(src, device=self.device)
    if src._device is not self._device:
        src = conversion.to(src, self._device)
    if needs_grad(self, src):
        check_leaf(self)
        return apply_inplace(self, lambda base: base * 0 + src.to(base.dtype), "copy")
    indexing._write(self, indexing.normalize_key(self, ()), src)
    self._bump_version()
    return self


def deepcopy(self: Tensor, memo: dict) -> Tensor:
    """``copy.deepcopy``: a detached copy with the same requires_grad (and a copy of
    ``.grad``); pickling stays refused."""
    with no_grad_ctx():
        out = self.clone()
    out.requires_grad = self.requires_grad
    if self.grad is not None:
        out.grad = self.grad.clone()
    memo[id(self)] = out
    return out


def new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    return creation.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                           requires_grad=requires_grad)


def _new_filled(fn: Callable) -> Callable:
    def method(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
        return fn(*size, dtype=dtype or self.dtype, device=device or self.device,
                  requires_grad=requires_grad)
    return method


def new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    return creation.full(size, fill_value, dtype=dtype or self.dtype,
                         device=device or self.device, requires_grad=requires_grad)


def flip_method(self: Tensor, *dims: Any, **kwargs: Any) -> Tensor:
    """``x.flip(0, 1)``, ``x.flip((0, 1))`` or ``x.flip(dims=...)`` (torch; an explicit
    None is refused, as torch does: the Array API's ``flip(x, axis=None)`` is a function)."""
    if dims:
        kwargs["dims"] = dims[0] if len(dims) == 1 else dims
    if "dims" in kwargs:
        no_none_dim(kwargs["dims"], "flip", "dims")
    return sh.flip(self, **kwargs)


def roll_method(self: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    """``x.roll(shifts, dims)`` (torch): as many shifts as dims, or one shift and no dims
    (the flattened tensor); the Array API's ``roll`` also takes one shift for many axes."""
    n_shifts = len(shifts) if isinstance(shifts, (tuple, list)) else 1
    n_dims = 0 if dims is None else len(dims) if isinstance(dims, (tuple, list)) else 1
    if n_shifts and not (n_dims == 0 and n_shifts == 1) and n_shifts != n_dims:
        raise ValueError(f"shifts and dimensions must align. shifts: {n_shifts}, "
                         f"dims:{n_dims}")
    return join.roll(self, shifts, dims if n_dims else None)


def tile_method(self: Tensor, *reps: Any) -> Tensor:
    """``x.tile(2, 1)`` or ``x.tile((2, 1))`` (torch)."""
    return join.tile(self, reps[0] if len(reps) == 1 else reps)


def where_method(self: Tensor, condition: Tensor, y: Any) -> Tensor:
    """torch's ``x.where(cond, y)``: self where cond else y."""
    return ternary.where(condition, self, y)


# torch's methods whose dim may be left out but not given as None (``x.squeeze()`` works,
# ``x.squeeze(None)`` is a TypeError in torch)
_NO_DIM: Any = object()


def squeeze_method(self: Tensor, dim: Any = _NO_DIM) -> Tensor:
    return sh.squeeze_torch(self, None if dim is _NO_DIM else no_none_dim(dim, "squeeze"))


def max_method(self: Tensor, dim: Any = _NO_DIM, keepdim: bool = False) -> Any:
    return red.max(self, None if dim is _NO_DIM else no_none_dim(dim, "max"), keepdim)


def min_method(self: Tensor, dim: Any = _NO_DIM, keepdim: bool = False) -> Any:
    return red.min(self, None if dim is _NO_DIM else no_none_dim(dim, "min"), keepdim)


def prod_method(self: Tensor, dim: Any = _NO_DIM, keepdim: bool = False, *, axis: Any = None,
                keepdims: bool = False, dtype: Any = None) -> Tensor:
    """torch's ``x.prod()`` / ``x.prod(dim)`` (one int dim: None or a tuple is refused,
    as torch; NumPy's ``axis=``/``keepdims=`` spellings as before)."""
    keep = keepdim or keepdims
    if dim is _NO_DIM:
        return red.prod(self, axis=axis, keepdims=keep, dtype=dtype)
    return red.prod(self, int_arg(dim, "dim", "prod"), keep, dtype=dtype)


def sort_method(self: Tensor, dim: int = -1, descending: bool = False,
                stable: bool = False) -> Any:
    return sorting.sort_torch(self, dim, descending, stable)


def argsort_method(self: Tensor, dim: int = -1, descending: bool = False,
                   stable: bool = False) -> Tensor:
    return sorting.argsort(self, dim, descending, True)


def std_method(self: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
               correction: Any = None) -> Tensor:
    if correction is None:
        correction = 0 if unbiased is False else 1
    return red.std(self, dim, keepdim=keepdim, correction=correction)


def var_method(self: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
               correction: Any = None) -> Tensor:
    if correction is None:
        correction = 0 if unbiased is False else 1
    return red.var(self, dim, keepdim=keepdim, correction=correction)


def nonzero_method(self: Tensor, *, as_tuple: bool = False) -> Any:
    return gather.nonzero_torch(self, as_tuple=as_tuple)


def round_method(self: Tensor, decimals: int = 0) -> Tensor:
    return composite.round_decimals(self, decimals)


def _size_method(self: Tensor) -> "_Size":
    return _Size(self.numel(), self.shape)  # shape, not _data: sparse tensors have none


class _Size(int):
    """``x.size`` is the element count (the Array API's attribute) and, called, torch's
    ``x.size()`` / ``x.size(dim)``."""

    _shape: tuple

    def __new__(cls, n: int, shape: tuple) -> "_Size":
        obj = super().__new__(cls, n)
        obj._shape = shape
        return obj

    def __call__(self, dim: int | None = None) -> Any:
        if dim is None:
            return Size(self._shape)
        if isinstance(dim, bool):
            raise TypeError("size(): argument 'dim' must be int, not bool")
        a = normalize_axis(dim, len(self._shape))
        if not self._shape:  # torch's message: a 0-d tensor has no size(dim)
            raise IndexOutOfRangeError(f"Dimension specified as {dim} but tensor has no "
                                       f"dimensions")
        return self._shape[a]


def item_size(self: Tensor) -> int:
    return self.numel()


def _bind_methods() -> None:
    """Attach the Tensor methods, family by family (order matters: aliases and in-place
    forms reuse what an earlier step bound)."""
    T = Tensor
    _bind_elementwise(T)
    _bind_reductions_and_shapes(T)
    _bind_indexing_and_products(T)
    _bind_conversion_and_filling(T)
    _bind_families(T)


def _bind_elementwise(T: type[Tensor]) -> None:
    """Elementwise ops by Array API and torch names, their in-place forms and aliases."""
    for name in ew.UNARY_OPS:
        setattr(T, name, getattr(ew, name))
        setattr(T, name + "_", _inplace_unary(name))
    for name in ew.BINARY_OPS:
        setattr(T, name, getattr(ew, name))
        setattr(T, name + "_", _inplace_binary(name))
    aliases = {
        "neg": "negative", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
        "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "absolute": "abs",
        "sub": "subtract", "mul": "multiply", "arctan2": "atan2", "bitwise_not":
        "bitwise_invert", "eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
        "gt": "greater", "ge": "greater_equal", "greater_than": "greater",
        "less_than": "less", "power": "pow",
    }
    for alias, name in aliases.items():
        setattr(T, alias, getattr(T, name))
        if hasattr(T, name + "_"):
            setattr(T, alias + "_", getattr(T, name + "_"))
    T.real = property(ew.real, doc="Real part (torch: a property).")
    T.imag = property(ew.imag, doc="Imaginary part of a complex tensor (a property).")
    T.add = ew.add
    T.subtract = T.sub = ew.subtract
    T.div = T.divide = T.true_divide = composite.divide
    T.div_ = T.divide_ = T.true_divide_ = _inplace_from(composite.divide, "div")
    T.fmod = composite.fmod
    T.fmod_ = _inplace_from(composite.fmod, "fmod")
    T.round = round_method
    T.frac, T.lerp, T.trace, T.cross = composite.frac, composite.lerp, composite.trace, \
        composite.cross
    T.isclose, T.allclose, T.equal = composite.isclose, composite.allclose, composite.equal
    T.logit, T.xlogy, T.sinc = composite.logit, composite.xlogy, composite.sinc
    T.clamp = T.clip = ternary.clamp
    T.clamp_ = T.clip_ = _inplace_from(ternary.clamp, "clamp")
    T.where = where_method
    T.masked_fill = gather.masked_fill
    T.masked_fill_ = _inplace_from(gather.masked_fill, "masked_fill")
    T.lerp_ = _inplace_from(composite.lerp, "lerp")


def _bind_reductions_and_shapes(T: type[Tensor]) -> None:
    for name in ("sum", "prod", "mean", "amax", "amin", "argmax", "argmin", "all", "any",
                 "logsumexp", "cumsum", "cumprod", "nansum", "nanmean",
                 "aminmax"):
        setattr(T, name, getattr(red, name))
    T.cumsum_ = _inplace_from(red.cumsum, "cumsum")
    T.max, T.min, T.std, T.var = max_method, min_method, std_method, var_method
    T.prod = prod_method
    T.count_nonzero = gather.count_nonzero
    # shape
    for name in ("reshape", "view", "flatten", "unflatten", "permute", "transpose", "swapaxes",
                 "swapdims", "t", "moveaxis", "movedim", "unsqueeze", "expand", "expand_as",
                 "broadcast_to", "contiguous", "clone", "flip", "fliplr", "flipud",
                 "diagonal", "diag", "diag_embed"):
        setattr(T, name, getattr(sh, name))
    for name in ("split", "chunk", "tensor_split", "unbind", "narrow", "select", "tile",
                 "repeat_interleave"):
        setattr(T, name, getattr(join, name))
    T.roll = roll_method
    T.t_ = _t_inplace
    T.flip = flip_method
    T.tile = tile_method
    T.squeeze = squeeze_method
    T.repeat = join.repeat_tensor
    T.view_as = lambda self, other: sh.view(self, other.shape)
    T.reshape_as = lambda self, other: sh.reshape(self, other.shape)
    T.tril, T.triu = creation.tril, creation.triu
    T.tril_ = _inplace_from(creation.tril, "tril")
    T.triu_ = _inplace_from(creation.triu, "triu")


def _bind_indexing_and_products(T: type[Tensor]) -> None:
    for name in ("gather", "scatter", "scatter_add", "index_select", "take", "masked_select",
                 "take_along_dim"):
        setattr(T, name, getattr(gather, name))
    T.scatter_ = _inplace_from(gather.scatter, "scatter")
    T.scatter_add_ = _inplace_from(gather.scatter_add, "scatter_add")
    T.nonzero = nonzero_method
    T.argwhere = lambda self: gather.nonzero_torch(self)
    # sorting
    T.sort, T.argsort = sort_method, argsort_method
    for name in ("topk", "kthvalue", "median", "nanmedian", "quantile", "unique", "msort"):
        setattr(T, name, getattr(sorting, name))
    # products
    for name in ("matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger"):
        setattr(T, name, getattr(linalg_ops, name))


def _bind_conversion_and_filling(T: type[Tensor]) -> None:
    """Conversion, filling, copying, random and ``new_*`` methods."""
    T.to, T.cpu, T.cuda, T.type_as = conversion.to, conversion.cpu, conversion.cuda, \
        conversion.type_as
    T.astype = conversion.astype
    for name, fn in conversion.CAST_METHODS.items():
        setattr(T, name, fn)
    # filling, copying, random
    T.zero_, T.fill_, T.copy_ = zero_, fill_, copy_
    T.__deepcopy__ = deepcopy
    T.backward = tensor_backward
    T.__new__ = staticmethod(_construct)
    T.uniform_, T.normal_, T.bernoulli_ = rnd.uniform_, rnd.normal_, rnd.bernoulli_
    T.random_, T.exponential_ = rnd.random_, rnd.exponential_
    T.new_tensor, T.new_full = new_tensor, new_full
    T.new_zeros = _new_filled(creation.zeros)
    T.new_ones = _new_filled(creation.ones)
    T.new_empty = _new_filled(creation.empty)
    T.size = property(_size_method)
    T.heaviside = composite.heaviside
    T.deg2rad, T.rad2deg = composite.deg2rad, composite.rad2deg


def _bind_families(T: type[Tensor]) -> None:
    """The method families bound by their own modules: sparse, quantized, legacy,
    storage, torch's linalg and spectral forms, torch_api and methods_torch."""
    torch_extras.bind(T)
    _bind_sparse(T)  # to_sparse/to_dense/indices... and the sparse classes (core/sparse)
    _bind_quantized(T)  # dequantize/int_repr/q_scale... (core/quantized)
    _bind_legacy(T)  # Tensor.type, is_xpu/is_opencl..., data_ptr (core/legacy.py)
    from .ops import storage
    T.storage_offset, T.as_strided = storage.storage_offset, storage.as_strided
    T.untyped_storage, T.storage = storage.untyped_storage, storage.typed_storage
    T.is_set_to, T.set_ = storage.is_set_to, storage.set_
    from .legacy_storage import storage_type
    T.storage_type = storage_type  # torch.FloatStorage & co. (core/legacy_storage.py)
    from .ops import linalg_factor, linalg_torch
    for name in ("svd", "qr", "cholesky", "cholesky_solve", "cholesky_inverse", "lu",
                 "lu_solve", "triangular_solve", "geqrf", "orgqr", "ormqr"):
        setattr(T, name, getattr(linalg_torch, name))
    T.matrix_exp = linalg_factor.matrix_exp
    from .ops import spectral
    T.stft, T.istft = spectral.stft, spectral.istft
    T.share_memory_, T.is_shared = _share_memory_, _is_shared  # core/shared_memory.py
    from .ops import torch_api  # addmm, scatter_reduce, cummax... (core/ops/torch_api.py)
    torch_api.bind(T)
    from . import methods_torch  # digamma, fill_diagonal_, the in-place forms...
    methods_torch.bind(T)


def _construct(cls: type, *args: Any, **kwargs: Any) -> Tensor:
    """``Tensor(data, ...)`` is ``omnitensor.tensor(data, ...)`` (torch's legacy
    constructor); ``Tensor()`` is an empty float32 cpu tensor."""
    if args or kwargs:
        return creation.tensor(*args, **kwargs)
    return creation.tensor([], dtype="float32", device="cpu")


def _t_inplace(self: Tensor) -> Tensor:
    raise NotImplementedError("t_() is not supported; use x = x.t()")


_bind_operators()
_bind_methods()
