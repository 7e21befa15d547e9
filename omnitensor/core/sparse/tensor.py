"""Sparse tensors: Tensor subclasses made of dense component tensors.

* :class:`SparseCooTensor` (``layout=sparse_coo``): ``_idx`` (int64, ``(sparse_dim, nnz)``)
  and ``_vals`` (``(nnz, *dense_shape)``), possibly uncoalesced (duplicates sum);
* :class:`SparseCompressedTensor` (``sparse_csr`` / ``sparse_csc``, 2-D): ``_compressed``
  (int64 row or column pointers, ``(n + 1,)``), ``_plain`` (int64 column or row indices,
  ``(nnz,)``) and ``_vals`` (``(nnz,)``).

The components are ordinary dense tensors, so every sparse op is a composite of dense ops
that runs on every backend, and autograd reaches a sparse tensor's values through them. A
sparse tensor has no dense storage: reading its ``_data`` raises
:class:`~omnitensor.core.layout_dispatch.LayoutError`, so a dense op given one says so
(and names ``to_dense()``) instead of computing on something else.

Autograd: ``requires_grad`` and ``grad_fn`` are those of the values. A sparse leaf that
requires grad accumulates its gradient on its values; ``.grad`` presents it as torch does
(a COO tensor on the coalesced pattern for COO, a dense tensor for CSR/CSC).
"""
from __future__ import annotations

import sys
from typing import Any, Iterator

import numpy as np

from ..graph import no_grad_ctx
from ..ops.creation import zeros
from ..ops.shape import _alias_view
from ..layout_dispatch import register_kind, unsupported
from ..legacy import Size, _Layout
from ..tensor import Tensor

__all__ = ["sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc",
           "SparseTensor", "SparseCooTensor", "SparseCompressedTensor", "make_coo",
           "make_compressed"]

sparse_coo = _Layout("sparse_coo")
sparse_csr = _Layout("sparse_csr")
sparse_csc = _Layout("sparse_csc")
sparse_bsr = _Layout("sparse_bsr")
sparse_bsc = _Layout("sparse_bsc")

_new = object.__new__
# wrapper functions whose name says nothing about the op a user called
_ANONYMOUS = frozenset(("op", "fn", "method", "call", "<lambda>", "wrapper"))


def _calling_op() -> str:
    """The outermost omnitensor function on the stack: the op the user called."""
    name = ""
    f: Any = sys._getframe(2)
    while f is not None and f.f_globals.get("__name__", "").startswith("omnitensor."):
        code = f.f_code.co_name
        if code not in _ANONYMOUS and not code.startswith("_"):
            name = code
        f = f.f_back
    return name


class SparseTensor(Tensor):
    """What every sparse layout shares: metadata from the components, autograd through the
    values, and refusal of dense-only access. Build one with ``sparse_coo_tensor``,
    ``sparse_csr_tensor`` or ``Tensor.to_sparse*()``."""

    _shape: tuple[int, ...]
    _vals: Tensor
    _layout: Any

    @property
    def _data(self) -> Any:
        raise unsupported(_calling_op(), self)

    # ------------------------------------------------------------------ metadata
    @property
    def layout(self) -> Any:
        return self._layout

    @property
    def shape(self) -> Size:
        return Size(self._shape)

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def dim(self) -> int:
        return len(self._shape)

    ndimension = dim

    def numel(self) -> int:
        n = 1
        for s in self._shape:
            n *= s
        return n

    nelement = numel

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        raise unsupported("iteration", self)

    def is_contiguous(self, memory_format: Any = None) -> bool:
        return False  # torch: a sparse tensor is never contiguous

    def stride(self, dim: int | None = None) -> Any:
        raise RuntimeError(f"stride(): tensors of layout {self._layout} have no strides; "
                           f"use .to_dense() for a strided tensor")

    def is_inference(self) -> bool:
        """Whether the values were made inside ``inference_mode()`` (torch's rule)."""
        return self._vals.is_inference()

    def dense_dim(self) -> int:
        """Number of dense dimensions (those of each stored value)."""
        return self._vals.ndim - 1

    def _nnz(self) -> int:
        """Number of stored entries (duplicates of an uncoalesced tensor included)."""
        return self._vals.shape[0]

    # ----------------------------------------------------------------- autograd
    @property
    def requires_grad(self) -> bool:
        return self._vals.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    @property
    def grad_fn(self) -> Any:
        return self._vals.grad_fn

    @grad_fn.setter
    def grad_fn(self, value: Any) -> None:
        raise AttributeError("a sparse tensor's grad_fn is that of its values; use "
                             ".detach() for one without history")

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if bool(requires_grad) != self._vals.requires_grad:
            self._vals.requires_grad_(requires_grad)
        return self

    @property
    def grad(self) -> Tensor | None:
        """The gradient of a sparse leaf, as torch presents it (see the module doc)."""
        g = self._vals.grad
        if g is None:
            return None
        memo = self.__dict__.get("_grad_memo")
        if memo is not None and memo[0] is g and memo[1] == g._version:
            return memo[2]
        with no_grad_ctx():
            out = self._grad_from_values(g)
        self.__dict__["_grad_memo"] = (g, g._version, out)
        return out

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            raise NotImplementedError("assigning .grad of a sparse tensor is not supported "
                                      "(only None, to reset it)")
        self._vals.grad = None
        self.__dict__.pop("_grad_memo", None)

    def _grad_from_values(self, g: Tensor) -> Tensor:
        raise NotImplementedError

    def register_hook(self, hook: Any) -> Any:
        raise NotImplementedError("register_hook on a sparse tensor is not supported; "
                                  "register it on a dense tensor computed from it")

    def retain_grad(self) -> None:
        raise NotImplementedError("retain_grad on a sparse tensor is not supported")

    def backward(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("backward() from a sparse tensor is not supported; reduce "
                                  "it to a dense scalar first (torch.sparse.sum(s).backward())")

    def detach(self) -> Tensor:
        """The same components, values detached (sharing memory)."""
        return self._with_values(self._vals.detach())

    def detach_(self) -> Tensor:
        self._vals = self._vals.detach()
        return self

    @property
    def data(self) -> Tensor:
        return self.detach()

    @data.setter
    def data(self, value: Tensor) -> None:
        raise NotImplementedError("assigning .data of a sparse tensor is not supported; "
                                  "build a new one")

    def _detached_copy(self) -> Tensor:
        with no_grad_ctx():
            return self.clone().detach()

    # --------------------------------------------------------------- conversion
    def _with_values(self, vals: Tensor) -> "SparseTensor":
        """This tensor's structure (moved to ``vals``' device) with other values."""
        raise NotImplementedError

    def numpy(self, *, force: bool = False) -> np.ndarray:
        raise TypeError(f"can't convert a tensor of layout {self._layout} to numpy; use "
                        f"Tensor.to_dense() first")

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return self.numpy()

    def tolist(self) -> Any:
        raise TypeError(f"tolist() of a tensor of layout {self._layout}: use "
                        f".to_dense().tolist()")

    def item(self) -> Any:
        raise TypeError(f"item() of a tensor of layout {self._layout}: use "
                        f".to_dense().item()")

    def _components(self) -> list[tuple[str, Tensor]]:
        raise NotImplementedError

    def __repr__(self) -> str:
        head = "tensor("
        parts = []
        for name, comp in self._components():
            pad = " " * (len(head) + len(name) + 1)
            parts.append(f"{name}=" + repr(comp.detach()).replace("\n", "\n" + pad))
        tail = f"size={tuple(self._shape)}, nnz={self._nnz()}"
        if self._dtype.name != "float32":
            tail += f", dtype=omnitensor.{self._dtype.name}"
        if self._device.type != "cpu":
            tail += f", device='{self._device}'"
        tail += f", layout={self._layout!r}"
        if self.grad_fn is not None:
            tail += f", grad_fn=<{self.grad_fn.name()}>"
        elif self.requires_grad:
            tail += ", requires_grad=True"
        return head + (",\n" + " " * len(head)).join(parts + [tail]) + ")"

    __str__ = __repr__


class SparseCooTensor(SparseTensor):
    """A COO tensor: ``_idx`` (sparse_dim, nnz) int64 and ``_vals`` (nnz, *dense)."""

    _idx: Tensor
    _coalesced: bool

    is_sparse = True
    is_sparse_csr = False

    def sparse_dim(self) -> int:
        """Number of sparse dimensions (rows of the index tensor)."""
        return self._idx.shape[0]

    def is_coalesced(self) -> bool:
        """Whether the indices are sorted and unique (torch's flag: set by ``coalesce()``
        and by ops known to produce coalesced results)."""
        return self._coalesced

    def _indices(self) -> Tensor:
        """The index tensor as stored (duplicates included)."""
        return self._idx

    def _values(self) -> Tensor:
        """The values as stored, outside autograd (torch's ``_values()``)."""
        return self._vals.detach()

    def indices(self) -> Tensor:
        """The index tensor of a coalesced tensor."""
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._idx

    def values(self) -> Tensor:
        """The values of a coalesced tensor (a differentiable alias)."""
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return _alias_view(self._vals)

    def _with_values(self, vals: Tensor) -> SparseTensor:
        idx = self._idx if self._idx._device is vals._device else self._idx.to(vals._device)
        return make_coo(idx, vals, self._shape, self._coalesced)

    def _grad_from_values(self, g: Tensor) -> Tensor:
        if self._coalesced:
            return make_coo(self._idx, g, self._shape, True)
        from .coalesce import first_occurrences  # duplicates share one gradient value
        first, idx = first_occurrences(self._idx, self._shape[:self.sparse_dim()])
        return make_coo(idx, g.index_select(0, first), self._shape, True)

    def _components(self) -> list[tuple[str, Tensor]]:
        return [("indices", self._idx), ("values", self._vals)]


class SparseCompressedTensor(SparseTensor):
    """A 2-D CSR (``_compressed`` = row pointers, ``_plain`` = column indices) or CSC
    (column pointers, row indices) tensor with 1-D values."""

    _compressed: Tensor
    _plain: Tensor

    is_sparse = False

    @property
    def is_sparse_csr(self) -> bool:
        return self._layout is sparse_csr

    def sparse_dim(self) -> int:
        return 2

    def _accessor(self, name: str, layout: Any, comp: Tensor) -> Tensor:
        if self._layout is not layout:
            kind = "row" if layout is sparse_csr else "column"
            raise RuntimeError(f"{name} expected sparse {kind} compressed tensor layout but "
                               f"got {_layout_word(self._layout)}")
        return comp

    def crow_indices(self) -> Tensor:
        """Row pointers of a CSR tensor (``(rows + 1,)``)."""
        return self._accessor("crow_indices", sparse_csr, self._compressed)

    def col_indices(self) -> Tensor:
        """Column index of each stored value of a CSR tensor."""
        return self._accessor("col_indices", sparse_csr, self._plain)

    def ccol_indices(self) -> Tensor:
        """Column pointers of a CSC tensor (``(columns + 1,)``)."""
        return self._accessor("ccol_indices", sparse_csc, self._compressed)

    def row_indices(self) -> Tensor:
        """Row index of each stored value of a CSC tensor."""
        return self._accessor("row_indices", sparse_csc, self._plain)

    def values(self) -> Tensor:
        """The stored values (a differentiable alias)."""
        return _alias_view(self._vals)

    def _with_values(self, vals: Tensor) -> SparseTensor:
        dev = vals._device
        c, p = self._compressed, self._plain
        if c._device is not dev:
            c, p = c.to(dev), p.to(dev)
        return make_compressed(self._layout, c, p, vals, self._shape)

    def _grad_from_values(self, g: Tensor) -> Tensor:
        from .convert import compressed_coordinates
        rows, cols = compressed_coordinates(self)
        out = zeros(self._shape, dtype=g.dtype, device=g.device)
        out[rows, cols] = g  # torch gives a dense gradient for compressed leaves
        return out

    def _components(self) -> list[tuple[str, Tensor]]:
        names = ("crow_indices", "col_indices") if self._layout is sparse_csr else \
            ("ccol_indices", "row_indices")
        return [(names[0], self._compressed), (names[1], self._plain), ("values", self._vals)]


def _layout_word(layout: Any) -> str:
    """torch's spelling of a layout in its messages (``SparseCsr``, ``Strided``)."""
    return {"sparse_coo": "Sparse", "sparse_csr": "SparseCsr", "sparse_csc": "SparseCsc",
            "strided": "Strided"}.get(layout.name, layout.name)


def make_coo(idx: Tensor, vals: Tensor, shape: tuple[int, ...],
             coalesced: bool = False) -> SparseCooTensor:
    """A COO tensor from trusted components (no checks: callers validated them)."""
    t = _new(SparseCooTensor)
    t._device = vals._device
    t._dtype = vals._dtype
    t._layout = sparse_coo
    t._shape = tuple(int(s) for s in shape)
    t._idx = idx
    t._vals = vals
    t._coalesced = bool(coalesced)
    return t


def make_compressed(layout: Any, compressed: Tensor, plain: Tensor, vals: Tensor,
                    shape: tuple[int, ...]) -> SparseCompressedTensor:
    """A CSR/CSC tensor from trusted components (no checks)."""
    t = _new(SparseCompressedTensor)
    t._device = vals._device
    t._dtype = vals._dtype
    t._layout = layout
    t._shape = tuple(int(s) for s in shape)
    t._compressed = compressed
    t._plain = plain
    t._vals = vals
    return t


register_kind(SparseTensor)
