"""``omnitensor.sparse`` (torch's ``torch.sparse``): products, sums and softmax of sparse
tensors, and building them from diagonals. The layouts, their tensors and every op on them
live in ``omnitensor/core/sparse/``; see ``docs/sparse.md`` for what exists.
"""
from __future__ import annotations

from typing import Any

from .core.layout_dispatch import non_strided
from .core.sparse import addmm as _addmm, log_softmax, softmax, sparse_mm as _mm, spdiags
from .core.sparse import sum_sparse as _sum
from .core.sparse.csr_products import mm_reduce as _mm_reduce, sampled_addmm
from .core.tensor import Tensor

__all__ = ["mm", "addmm", "sampled_addmm", "sum", "softmax", "log_softmax", "spdiags",
           "check_sparse_tensor_invariants"]


def mm(mat1: Tensor, mat2: Tensor, reduce: str | None = None) -> Tensor:
    """``mat1 @ mat2`` with a sparse operand: dense for sparse @ dense (and dense @
    sparse), sparse for sparse @ sparse. Gradients reach the dense operand and the sparse
    operand's stored values. ``reduce`` (``"sum"``, ``"mean"``, ``"amax"``, ``"amin"``:
    how each output entry combines its products) needs a CSR ``mat1`` and a dense
    ``mat2``, as in torch."""
    if reduce is not None:
        return _mm_reduce(mat1, mat2, reduce)
    if not non_strided(mat1, mat2):
        return mat1 @ mat2
    return _mm(mat1, mat2)


def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1,
          alpha: Any = 1) -> Tensor:
    """``beta * mat + alpha * (mat1 @ mat2)`` for a sparse ``mat1`` and dense ``mat``,
    ``mat2`` (``mat`` is not read when ``beta == 0``)."""
    return _addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


def sum(input: Tensor, dim: Any = None, dtype: Any = None) -> Tensor:  # noqa: A001,A002
    """The sum over ``dim`` (all dimensions when None: a 0-d dense tensor); a sparse result
    unless every sparse dimension is summed."""
    if not non_strided(input):
        raise TypeError("torch.sparse.sum expects a sparse tensor; use torch.sum for a dense "
                        "one")
    return _sum(input, dim, dtype=dtype)


class check_sparse_tensor_invariants:
    """torch's switch for validating sparse tensors on construction. omnitensor always
    validates them (an invalid index is a clear error, never memory corruption), so this
    is accepted as a context manager or decorator and changes nothing."""

    def __init__(self, enable: bool = True) -> None:
        self.enable_ = enable

    @staticmethod
    def is_enabled() -> bool:
        """Always True: omnitensor checks every sparse tensor it builds."""
        return True

    @staticmethod
    def enable() -> None:
        """Checks are always on."""

    @staticmethod
    def disable() -> None:
        """Checks cannot be turned off (they are what keeps a bad index an error)."""

    def __enter__(self) -> "check_sparse_tensor_invariants":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __call__(self, fn: Any) -> Any:
        return fn
