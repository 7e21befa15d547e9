"""Methods and operators of sparse tensors, and the sparse-related methods of every Tensor
(``to_sparse()``, ``to_dense()``, ``indices()``...), bound from the functions of this
package (one implementation each; the operators go through the layout dispatch table, as
the dense ops' module functions do)."""
from __future__ import annotations

from typing import Any, Callable

from ..layout_dispatch import dispatch, register
from ..ops import conversion
from ..shape_util import normalize_axis
from ..tensor import Tensor
from .arith import LINEAR, assign, check_inplace, map_values
from .convert import refuse_layout, sparse_mask, to_dense, to_layout
from .matmul import smm, sspaddmm
from .reduce import sum_sparse
from .resize import resize_as_sparse_, sparse_resize_, sparse_resize_and_clear_
from .tensor import (SparseCompressedTensor, SparseCooTensor, SparseTensor, _layout_word,
                     make_compressed, make_coo, sparse_bsr, sparse_coo, sparse_csc,
                     sparse_csr)

__all__ = ["bind"]


# --------------------------------------------------------------------- shape ops
@register("transpose")
def transpose(x: SparseTensor, dim0: int, dim1: int) -> SparseTensor:
    """Swap two sparse (or two dense) dimensions; a CSR transpose is CSC (same arrays)."""
    a, b = normalize_axis(dim0, x.ndim), normalize_axis(dim1, x.ndim)
    shape = list(x.shape)
    shape[a], shape[b] = shape[b], shape[a]
    if a == b:
        return x
    if isinstance(x, SparseCompressedTensor):
        other = sparse_csc if x.layout is sparse_csr else sparse_csr
        return make_compressed(other, x._compressed, x._plain, x._vals, tuple(shape))
    assert isinstance(x, SparseCooTensor)
    sd = x.sparse_dim()
    if a < sd and b < sd:
        rows = list(range(sd))
        rows[a], rows[b] = rows[b], rows[a]
        return make_coo(x._idx[rows], x._vals, tuple(shape), False)
    if a >= sd and b >= sd:
        return make_coo(x._idx, x._vals.transpose(a - sd + 1, b - sd + 1), tuple(shape),
                        x._coalesced)
    raise ValueError(f"sparse transpose: transposed dimensions must both be sparse or both "
                     f"dense; got sparse_dim {sd}, dims {a} and {b}")


@register("t")
def t(x: SparseTensor) -> SparseTensor:
    """The transpose of a sparse matrix (a 1-D tensor is itself)."""
    if x.ndim > 2:
        raise ValueError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return transpose(x, 0, 1) if x.ndim == 2 else x


def permute(x: SparseTensor, *dims: Any) -> SparseTensor:
    """Reorder dimensions; sparse ones stay among the sparse, dense among the dense."""
    order = tuple(normalize_axis(d, x.ndim) for d in
                  (dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims))
    if sorted(order) != list(range(x.ndim)):
        raise ValueError(f"permute: {order} is not a permutation of {x.ndim} dimensions")
    if isinstance(x, SparseCompressedTensor):
        return x if order == (0, 1) else transpose(x, 0, 1)
    assert isinstance(x, SparseCooTensor)
    sd = x.sparse_dim()
    if sorted(order[:sd]) != list(range(sd)):
        raise ValueError("permute: sparse dimensions can only be reordered among themselves")
    vals = x._vals.permute(0, *(d - sd + 1 for d in order[sd:]))
    shape = tuple(x.shape[d] for d in order)
    same = order[:sd] == tuple(range(sd))
    return make_coo(x._idx if same else x._idx[list(order[:sd])], vals, shape,
                    x._coalesced and same)


@register("clone")
def clone(x: SparseTensor, *, memory_format: Any = None) -> SparseTensor:
    """A copy of the components (differentiable in the values)."""
    if isinstance(x, SparseCooTensor):
        return make_coo(x._idx.clone(), x._vals.clone(), x.shape, x._coalesced)
    assert isinstance(x, SparseCompressedTensor)
    return make_compressed(x.layout, x._compressed.clone(), x._plain.clone(),
                           x._vals.clone(), x.shape)


# ------------------------------------------------------------- sparse methods
def _scaled(other: Any, alpha: Any) -> Any:
    return other if alpha == 1 else other * alpha


def _operators() -> dict[str, Callable[..., Any]]:
    return {
        "__add__": lambda s, o: dispatch("add", s, o),
        "__radd__": lambda s, o: dispatch("add", o, s),
        "__sub__": lambda s, o: dispatch("subtract", s, o),
        "__rsub__": lambda s, o: dispatch("subtract", o, s),
        "__mul__": lambda s, o: dispatch("multiply", s, o),
        "__rmul__": lambda s, o: dispatch("multiply", o, s),
        "__truediv__": lambda s, o: dispatch("divide", s, o),
        "__rtruediv__": lambda s, o: dispatch("divide", o, s),
        "__pow__": lambda s, o: dispatch("pow", s, o),
        "__rpow__": lambda s, o: dispatch("pow", o, s),
        "__matmul__": lambda s, o: dispatch("matmul", s, o),
        "__rmatmul__": lambda s, o: dispatch("matmul", o, s),
        "__neg__": lambda s: dispatch("negative", s),
        "__pos__": lambda s: dispatch("positive", s),
        "__abs__": lambda s: dispatch("abs", s),
        "__iadd__": lambda s, o: dispatch("add_", s, o),
        "__isub__": lambda s, o: dispatch("subtract_", s, o),
        "__imul__": lambda s, o: dispatch("multiply_", s, o),
        "__itruediv__": lambda s, o: dispatch("divide_", s, o),
        "add": lambda s, o, *, alpha=1: dispatch("add", s, _scaled(o, alpha)),
        "sub": lambda s, o, *, alpha=1: dispatch("subtract", s, _scaled(o, alpha)),
        "add_": lambda s, o, *, alpha=1: dispatch("add_", s, _scaled(o, alpha)),
        "sub_": lambda s, o, *, alpha=1: dispatch("subtract_", s, _scaled(o, alpha)),
        "mul": lambda s, o: dispatch("multiply", s, o),
        "mul_": lambda s, o: dispatch("multiply_", s, o),
        "div": lambda s, o, *, rounding_mode=None: dispatch("divide", s, o, rounding_mode),
        "div_": lambda s, o: dispatch("divide_", s, o),
        "pow": lambda s, o: dispatch("pow", s, o),
        "matmul": lambda s, o: dispatch("matmul", s, o),
        "mm": lambda s, o: dispatch("matmul", s, o),
        "mv": lambda s, o: dispatch("matmul", s, o),
        "bmm": lambda s, o: dispatch("matmul", s, o),
    }


#: torch's Tensor methods that map the stored values (f(0) == 0), by method name; the
#: value is the Tensor function applied to the values.
_VALUE_MAPS = ("abs", "absolute", "neg", "negative", "positive", "conj", "sqrt", "square",
               "sin", "tan", "tanh", "asin", "arcsin", "atan", "arctan", "sinh", "asinh",
               "arcsinh", "atanh", "arctanh", "erf", "expm1", "log1p", "sign", "sgn", "floor",
               "ceil", "round", "trunc", "frac", "relu", "deg2rad", "rad2deg", "isnan", "isinf",
               "isposinf", "isneginf", "signbit", "nan_to_num")
_LINEAR_METHODS = frozenset(("neg", "negative", "positive", "conj")) | LINEAR


def _value_map(name: str) -> Callable[..., Any]:
    linear = name in _LINEAR_METHODS

    def method(self: SparseTensor, *args: Any, **kwargs: Any) -> SparseTensor:
        return map_values(self, lambda v: getattr(Tensor, name)(v, *args, **kwargs), linear)
    method.__name__ = name
    method.__doc__ = f"``{name}`` of the stored values (sparse in, sparse out)."
    return method


def _value_map_(name: str) -> Callable[..., Any] | None:
    inplace = getattr(Tensor, name + "_", None)
    if inplace is None:
        return None
    linear = name in _LINEAR_METHODS

    def method(self: SparseTensor, *args: Any, **kwargs: Any) -> SparseTensor:
        if not linear and isinstance(self, SparseCooTensor) and not self._coalesced:
            raise RuntimeError(f"{name}_ requires coalesced input")
        check_inplace(self)
        inplace(self._vals, *args, **kwargs)
        return self
    method.__name__ = name + "_"
    return method


def _to(self: SparseTensor, *args: Any, **kwargs: Any) -> SparseTensor:
    """``to(device)``, ``to(dtype)``... (torch's forms, parsed by the dense ``to``) of the
    values, the indices following to the same device."""
    vals = conversion.to(self._vals, *args, **kwargs)
    return self if vals is self._vals else self._with_values(vals)


def _zero_(self: SparseTensor) -> SparseTensor:
    """No stored entries (torch's ``zero_`` on a sparse tensor)."""
    check_inplace(self)
    empty: SparseTensor
    if isinstance(self, SparseCooTensor):
        empty = make_coo(self._idx[:, :0], self._vals[:0], self.shape, True)
    else:
        assert isinstance(self, SparseCompressedTensor)
        empty = make_compressed(self.layout, self._compressed * 0, self._plain[:0],
                                self._vals[:0], self.shape)
    return assign(self, empty)


def _cuda(self: SparseTensor, device: Any = None, non_blocking: bool = False,
          memory_format: Any = None) -> SparseTensor:
    """This tensor on the device ``cuda`` names (see the dense ``Tensor.cuda``)."""
    return self._with_values(conversion.cuda(self._vals, device))


def _coalesce(self: SparseCooTensor) -> SparseCooTensor:
    """Sorted, unique indices with duplicates summed (``self`` when already so)."""
    from .coalesce import coalesce
    return coalesce(self)


def _bind_sparse() -> None:
    S = SparseTensor
    for name, fn in _operators().items():
        setattr(S, name, fn)
    for name in _VALUE_MAPS:
        setattr(S, name, _value_map(name))
        fn_ = _value_map_(name)
        if fn_ is not None:
            setattr(S, name + "_", fn_)
    S.subtract, S.multiply, S.divide, S.true_divide = S.sub, S.mul, S.div, S.div
    S.sum = sum_sparse
    S.t, S.transpose, S.permute, S.clone = t, transpose, permute, clone
    S.to, S.zero_ = _to, _zero_
    S.cpu = lambda self: self.to("cpu")
    S.cuda = _cuda
    S.type_as = lambda self, other: self.to(other.dtype)
    for name, cast in conversion.CAST_METHODS.items():
        setattr(S, name, _caster(cast))
    SparseCooTensor.coalesce = _coalesce


def _caster(cast: Callable[..., Tensor]) -> Callable[..., Tensor]:
    return lambda self, memory_format=None: self._with_values(cast(self._vals))


# --------------------------------------------------- methods of every Tensor
def _expects(name: str, kind: str) -> Callable[..., Any]:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{name} expected {kind} layout but got "
                           f"{_layout_word(self.layout)}")
    method.__name__ = name
    method.__doc__ = f"Only for tensors of {kind} layout (torch's {name})."
    return method


def to_sparse(self: Tensor, sparse_dim: int | None = None, *, layout: Any = None,
              blocksize: Any = None, dense_dim: int | None = None) -> Tensor:
    """This tensor in a sparse layout: COO (the first ``sparse_dim`` dimensions sparse)
    unless ``layout`` says CSR/CSC; blocked layouts are refused."""
    if blocksize is not None:
        raise refuse_layout(sparse_bsr)
    if dense_dim:
        raise NotImplementedError("to_sparse(dense_dim=...): hybrid compressed tensors are "
                                  "not supported; use sparse_dim= with the COO layout")
    return to_layout(self, layout, sparse_dim)


def _to_dense(self: Tensor, dtype: Any = None, *, masked_grad: Any = None) -> Tensor:
    """The dense (strided) tensor; itself for a dense one."""
    return to_dense(self, dtype)


def _to_compressed(layout: Any) -> Callable[..., Tensor]:
    def method(self: Tensor, dense_dim: int | None = None) -> Tensor:
        return to_sparse(self, layout=layout, dense_dim=dense_dim)
    method.__name__ = f"to_sparse_{layout.name[7:]}"
    method.__doc__ = f"This 2-D tensor in {layout!r} layout."
    return method


def _to_sparse_coo(self: Tensor) -> Tensor:
    """This tensor in COO layout (every dimension sparse for a dense one)."""
    return to_sparse(self, layout=sparse_coo)


def _sparse_dim(self: Tensor) -> int:
    """Number of sparse dimensions: 0 for a strided tensor."""
    return 0


def _dense_dim(self: Tensor) -> int:
    """Number of dense dimensions: all of a strided tensor's."""
    return self.ndim


def _refuse_blocked(self: Tensor, blocksize: Any = None, dense_dim: int | None = None) -> Any:
    """Blocked layouts are not supported (a clear error naming those that are)."""
    raise refuse_layout(sparse_bsr)


def bind(T: Any) -> None:
    """Bind the sparse-related methods on :class:`Tensor` (from ``core/methods.py``) and
    the methods of the sparse tensor classes."""
    coo, row, col = ("sparse coordinate tensor", "sparse row compressed tensor",
                     "sparse column compressed tensor")
    for name, kind in (("indices", coo), ("_indices", coo), ("_values", coo),
                       ("coalesce", coo), ("is_coalesced", coo), ("crow_indices", row),
                       ("col_indices", row), ("ccol_indices", col), ("row_indices", col),
                       ("values", "sparse tensor"), ("_nnz", "sparse tensor")):
        setattr(T, name, _expects(name, kind))
    T.to_sparse = to_sparse
    T.to_sparse_coo = _to_sparse_coo
    T.to_sparse_csr, T.to_sparse_csc = _to_compressed(sparse_csr), _to_compressed(sparse_csc)
    T.to_sparse_bsr = T.to_sparse_bsc = _refuse_blocked
    T.to_dense = _to_dense
    T.sparse_mask = sparse_mask
    T.sparse_dim, T.dense_dim = _sparse_dim, _dense_dim
    T.smm, T.sspaddmm = smm, sspaddmm
    T.sparse_resize_, T.sparse_resize_and_clear_ = sparse_resize_, sparse_resize_and_clear_
    T.resize_as_sparse_ = resize_as_sparse_
    _bind_sparse()
