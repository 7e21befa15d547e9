"""Products that torch defines for CSR matrices only: ``torch.sparse.sampled_addmm`` (the
product of two dense matrices computed only where a CSR matrix stores values, plus that
matrix) and ``torch.sparse.mm(csr, dense, reduce)`` (each row's products reduced by sum,
mean, amax or amin instead of summed).

``out = alpha * (mat1 @ mat2) * spy(input) + beta * input`` keeps ``input``'s sparsity
pattern. Each stored value ``e`` at ``(rows[e], cols[e])`` takes the dot product of row
``rows[e]`` of ``mat1`` with column ``cols[e]`` of ``mat2``: two row gathers, a product and
a sum, so the full ``mat1 @ mat2`` is never formed, every device runs it as dense ops, and
gradients reach ``mat1``, ``mat2`` and ``input``'s values by the ops' own backward.
``mm_reduce`` forms the products of each stored value with its row of the dense operand and
reduces them per output row with ``index_add`` / ``index_reduce`` (rows without stored
values stay 0, as torch's).
"""
from __future__ import annotations

from typing import Any

from ...errors import DeviceMismatchError, ShapeError, mismatch_message
from ..layout_dispatch import non_strided
from ..ops.creation import zeros
from ..tensor import Tensor
from .convert import compressed_coordinates
from .tensor import SparseCompressedTensor, make_compressed, sparse_csr

__all__ = ["sampled_addmm", "mm_reduce"]

#: torch.sparse.mm's reductions
REDUCTIONS = ("sum", "mean", "amax", "amin")


def _check(input: Any, mat1: Any, mat2: Any) -> None:  # noqa: A002 - torch's name
    """torch's argument rules, with its messages."""
    if not (isinstance(input, SparseCompressedTensor) and input.layout is sparse_csr):
        got = getattr(input, "layout", type(input).__name__)
        raise RuntimeError(f"sampled_addmm: Expected self to be a sparse CSR tensor, but got "
                           f"{got}")
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if not isinstance(m, Tensor) or non_strided(m):
            got = getattr(m, "layout", type(m).__name__)
            raise RuntimeError(f"sampled_addmm: Expected {name} to have strided layout, but "
                               f"got {got}")
        if m.ndim != 2:
            raise RuntimeError(f"sampled_addmm: Expected {name} to be a matrix, got a "
                               f"{m.ndim}-D tensor (batched CSR is not supported)")
        if m.dtype is not input.dtype:
            raise RuntimeError(f"sampled_addmm: Expected {name} and self to have the same "
                               f"dtype, but got {m.dtype} and {input.dtype}")
        if m.device != input.device:
            raise DeviceMismatchError(mismatch_message("sampled_addmm", m.device,
                                                       input.device))
    if mat1.shape[1] != mat2.shape[0]:
        raise ShapeError(f"sampled_addmm: mat1 and mat2 shapes cannot be multiplied "
                         f"({mat1.shape[0]}x{mat1.shape[1]} and "
                         f"{mat2.shape[0]}x{mat2.shape[1]})")
    if tuple(input.shape) != (mat1.shape[0], mat2.shape[1]):
        raise ShapeError(f"sampled_addmm: self of size {tuple(input.shape)} does not match "
                         f"the product's size ({mat1.shape[0]}, {mat2.shape[1]})")


def sampled_addmm(input: Any, mat1: Any, mat2: Any, *, beta: Any = 1.0,  # noqa: A002
                  alpha: Any = 1.0, out: Any = None) -> SparseCompressedTensor:
    """``alpha * (mat1 @ mat2) * spy(input) + beta * input`` for a CSR ``input`` and dense
    ``mat1`` (m, k), ``mat2`` (k, n): a CSR result with ``input``'s pattern (torch's
    ``torch.sparse.sampled_addmm``)."""
    if out is not None:
        raise TypeError("sampled_addmm: out= is not supported for sparse results; use the "
                        "returned tensor")
    _check(input, mat1, mat2)
    rows, cols = compressed_coordinates(input)
    dots = (mat1.index_select(0, rows) * mat2.t().index_select(0, cols)).sum(1)
    vals = dots * alpha if alpha != 1 else dots
    if beta != 0:
        stored = input.values()
        vals = vals + (stored if beta == 1 else stored * beta)
    return make_compressed(sparse_csr, input.crow_indices(), input.col_indices(), vals,
                           tuple(input.shape))


def mm_reduce(input: Any, mat: Any, reduce: str) -> Tensor:  # noqa: A002 - torch's name
    """``torch.sparse.mm(input, mat, reduce)`` for a CSR ``input`` (m, k) and a dense
    ``mat`` (k, n): ``out[i, j]`` reduces ``input[i, c] * mat[c, j]`` over the stored
    columns ``c`` of row ``i``."""
    if reduce not in REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, mean, amax or amin, got "
                           f"{reduce}")
    if not (isinstance(input, SparseCompressedTensor) and input.layout is sparse_csr):
        raise NotImplementedError(f"torch.sparse.mm(reduce={reduce!r}) needs a sparse CSR "
                                  f"first operand, got {getattr(input, 'layout', input)}; "
                                  f"convert it with .to_sparse_csr()")
    if not isinstance(mat, Tensor) or non_strided(mat) or mat.ndim != 2:
        raise RuntimeError("torch.sparse.mm(reduce=...): the second operand must be a dense "
                           "matrix")
    if input.shape[1] != mat.shape[0]:
        raise ShapeError(f"sparse.mm: mat1 and mat2 shapes cannot be multiplied "
                         f"({input.shape[0]}x{input.shape[1]} and "
                         f"{mat.shape[0]}x{mat.shape[1]})")
    rows, cols = compressed_coordinates(input)
    prods = input.values().unsqueeze(1) * mat.index_select(0, cols)
    out = zeros(input.shape[0], mat.shape[1], dtype=prods.dtype, device=prods.device)
    if reduce == "sum":
        return out.index_add(0, rows, prods)
    return out.index_reduce(0, rows, prods, reduce, include_self=False)
