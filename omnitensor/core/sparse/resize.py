"""torch's in-place resizes of a sparse COO tensor: ``sparse_resize_``,
``sparse_resize_and_clear_`` and ``resize_as_sparse_``, with torch's rules: a tensor holding
entries keeps its numbers of sparse and dense dimensions and may only grow (new dense
positions hold zeros); an empty one takes any size. The tensor object itself changes
(its shape and components), as in torch."""
from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from ..ops.copies import constant_pad_nd
from ..ops.creation import zeros
from ..tensor import Tensor
from .arith import check_inplace
from .tensor import SparseCooTensor, _layout_word

__all__ = ["sparse_resize_", "sparse_resize_and_clear_", "resize_as_sparse_"]

_ADVICE = ("\nYou could try the following options:\n1. If you need an empty sparse tensor of "
           "this size, call `x = torch.sparse_coo_tensor(size)`.\n2. If you need to resize "
           "this tensor, you have the following options:\n    1. For both sparse and dense "
           "dimensions, keep the number of them constant and the size of them "
           "non-shrinking, and then try the same call again.\n    2. Or, create a new "
           "sparse tensor with the correct indices and values from this sparse tensor.")


def _coo_self(op: str, x: Any) -> SparseCooTensor:
    if not isinstance(x, SparseCooTensor):
        layout = getattr(x, "layout", None)
        word = _layout_word(layout) if layout is not None else type(x).__name__
        raise NotImplementedError(f"{op}: only sparse COO tensors can be resized this way, "
                                  f"got layout {word}")
    check_inplace(x)
    return x


def _target(size: Any, sparse_dim: int, dense_dim: int) -> tuple[int, ...]:
    shape = tuple(int(s) for s in (size if isinstance(size, (tuple, list)) else (size,)))
    sparse_dim, dense_dim = int(sparse_dim), int(dense_dim)
    if len(shape) != sparse_dim + dense_dim:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: "
                           f"len(size) = {len(shape)}, sparse_dim = {sparse_dim}, "
                           f"dense_dim = {dense_dim}")
    return shape


def _set_empty(x: SparseCooTensor, shape: tuple[int, ...], sparse_dim: int,
               coalesced: bool) -> SparseCooTensor:
    if sparse_dim < 0 or any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(shape)}")
    x._idx = zeros((sparse_dim, 0), dtype=_dt.int64, device=x.device)
    x._vals = zeros((0,) + shape[sparse_dim:], dtype=x.dtype, device=x.device)
    x._shape, x._coalesced = shape, coalesced
    x.__dict__.pop("_grad_memo", None)
    return x


def sparse_resize_(self: Any, size: Any, sparse_dim: int, dense_dim: int) -> Any:
    """Resize sparse COO ``self`` in place to ``size`` with ``sparse_dim`` sparse and
    ``dense_dim`` dense dimensions (torch's rules, see the module doc); returns ``self``."""
    x = _coo_self("sparse_resize_", self)
    shape = _target(size, sparse_dim, dense_dim)
    sd = int(sparse_dim)
    if x._nnz() == 0:
        return _set_empty(x, shape, sd, x._coalesced)
    old_sd, old_dd = x.sparse_dim(), x.dense_dim()
    for kind, old, new in (("sparse", old_sd, sd), ("dense", old_dd, int(dense_dim))):
        if old != new:
            raise RuntimeError(f"changing the number of {kind} dimensions (from {old} to "
                               f"{new}) on a non-empty sparse tensor is not supported."
                               + _ADVICE)
    for kind, old_s, new_s in (("sparse", x._shape[:sd], shape[:sd]),
                               ("dense", x._shape[sd:], shape[sd:])):
        if any(n < o for o, n in zip(old_s, new_s)):
            raise RuntimeError(f"shrinking the size of {kind} dimensions (from "
                               f"{list(old_s)} to {list(new_s)}) on a non-empty sparse "
                               f"tensor is not supported." + _ADVICE)
    grow = [n - o for o, n in zip(x._shape[sd:], shape[sd:])]
    if any(grow):  # new dense positions hold zeros (differentiable: a pad of the values)
        pad: list[int] = []
        for g in reversed(grow):
            pad += [0, g]
        x._vals = constant_pad_nd(x._vals, pad, 0)
    x._shape = shape
    x.__dict__.pop("_grad_memo", None)
    return x


def sparse_resize_and_clear_(self: Any, size: Any, sparse_dim: int, dense_dim: int) -> Any:
    """Remove every stored entry of sparse COO ``self`` and resize it to ``size`` with
    ``sparse_dim`` sparse and ``dense_dim`` dense dimensions; returns ``self``."""
    x = _coo_self("sparse_resize_and_clear_", self)
    return _set_empty(x, _target(size, sparse_dim, dense_dim), int(sparse_dim), True)


def resize_as_sparse_(self: Any, the_template: Any) -> Any:
    """``self.sparse_resize_(the_template.shape, the_template.sparse_dim(),
    the_template.dense_dim())``: ``self`` keeps its own dtype, device and entries."""
    if not isinstance(the_template, Tensor):
        raise TypeError(f"resize_as_sparse_: the_template must be a Tensor, got "
                        f"{type(the_template).__name__}")
    if the_template.layout.name in ("sparse_csr", "sparse_csc"):
        raise RuntimeError("resize_as_sparse_: compressed (CSR/CSC) templates are not "
                         "supported; only sparse COO tensors are resized")
    return sparse_resize_(self, the_template.shape, the_template.sparse_dim(),
                          the_template.dense_dim())
