"""Products with sparse operands: sparse @ dense, dense @ sparse, sparse @ sparse, batched
COO @ dense, ``addmm``.

Every sparse @ dense product is one op, :func:`spmm`: ``out[rows[e]] += values[e] *
dense[cols[e]]``. Its forward is the backend's ``spmm`` hook where the device has a sparse
library (SciPy on cpu when installed, cuSPARSE through ``cupyx.scipy.sparse`` on cuda) for
float32/float64, else a composite of dense index ops (gather rows, scale, ``index_add``)
that every backend runs (OpenCL, SYCL: dpnp has no sparse routines). Its backward is
written with Tensor ops (``S^T @ g`` is itself an :func:`spmm`), so gradients reach the
dense operand and the stored values, to any order.
"""
from __future__ import annotations

from typing import Any

from ...errors import DeviceMismatchError, ShapeError, mismatch_message
from .. import dtypes as _dt
from ..graph import needs_grad, no_grad_ctx, record
from ..layout_dispatch import non_strided, register
from ..ops.creation import arange, zeros
from ..ops.join import cat, repeat_interleave, stack
from ..ops.sorting import searchsorted
from ..tensor import Tensor, _make
from .coalesce import coalesce
from .convert import coordinates, to_compressed, to_coo
from .tensor import SparseCompressedTensor, SparseCooTensor, SparseTensor, make_coo

__all__ = ["spmm", "matmul", "addmm", "sparse_mm", "smm", "sspaddmm"]

_NATIVE = (_dt.float32, _dt.float64)


def _spmm_forward(rows: Tensor, cols: Tensor, vals: Tensor, shape: tuple[int, int],
                  dense: Tensor) -> Tensor:
    hook = dense._device.backend.hook("spmm") if vals._dtype in _NATIVE else None
    if hook is not None and rows.shape[0]:
        data = hook(rows._data, cols._data, vals._data, shape, dense._data)
        return _make(data, dense._device, dense._dtype)
    out = zeros((shape[0], dense.shape[1]), dtype=dense.dtype, device=dense.device)
    return out.index_add(0, rows, vals.unsqueeze(1) * dense.index_select(0, cols))


def spmm(rows: Tensor, cols: Tensor, vals: Tensor, shape: tuple[int, int],
         dense: Tensor) -> Tensor:
    """``A @ dense`` for ``A`` of ``shape`` (m, k) holding ``vals`` at (``rows``,
    ``cols``) (duplicates sum) and a 2-D ``dense`` (k, n) of the values' dtype and device.
    Differentiable in ``vals`` and ``dense``."""
    with no_grad_ctx():
        out = _spmm_forward(rows, cols, vals, shape, dense)
    if needs_grad(vals, dense):
        record("SparseMmBackward0", _spmm_backward, out, (vals, dense),
               (rows, cols, vals, dense), shape=shape)
    return out


def _spmm_backward(node: Any, g: Tensor) -> tuple:
    rows, cols, vals, dense = node.saved_tensors
    gv = gd = None
    if node.needs_input_grad[0]:
        gv = (g.index_select(0, rows) * dense.index_select(0, cols).conj()).sum(1)
    if node.needs_input_grad[1]:
        m, k = node.shape
        gd = spmm(cols, rows, vals.conj(), (k, m), g)
    return gv, gd


def _operands(op: str, s: SparseTensor, d: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(rows, cols, values, dense) of a 2-D ``s`` and a dense ``d``, promoted to one dtype."""
    if s._device is not d._device:
        raise DeviceMismatchError(mismatch_message(op, s.device, d.device))
    if s.ndim != 2 or s.dense_dim() != 0:
        raise ShapeError(f"{op}: the sparse operand must be a 2-D matrix without dense "
                         f"dimensions, got shape {list(s.shape)} with {s.dense_dim()} dense")
    dt = _dt.promote_types(s._dtype, d._dtype)
    if dt is _dt.bool_:
        raise _dt.DTypeError(f"{op}: not supported for bool tensors")
    rows, cols = coordinates(s)
    return rows, cols, s._vals.to(dt), d.to(dt)


def _sparse_dense(op: str, s: SparseTensor, d: Tensor) -> Tensor:
    """``s @ d`` (d 1-D or 2-D): dense."""
    rows, cols, vals, dense = _operands(op, s, d)
    vec = dense.ndim == 1
    if dense.ndim not in (1, 2) or dense.shape[0] != s.shape[1]:
        raise ShapeError(f"{op}: shapes {list(s.shape)} and {list(d.shape)} cannot be "
                         f"multiplied")
    out = spmm(rows, cols, vals, (s.shape[0], s.shape[1]),
               dense.reshape(-1, 1) if vec else dense)
    return out.reshape(-1) if vec else out


def _dense_sparse(op: str, d: Tensor, s: SparseTensor) -> Tensor:
    """``d @ s`` = ``(s^T @ d^T)^T``: dense."""
    rows, cols, vals, dense = _operands(op, s, d)
    if dense.ndim not in (1, 2) or dense.shape[-1] != s.shape[0]:
        raise ShapeError(f"{op}: shapes {list(d.shape)} and {list(s.shape)} cannot be "
                         f"multiplied")
    if dense.ndim == 1:
        return spmm(cols, rows, vals, (s.shape[1], s.shape[0]), dense.reshape(-1, 1)
                    ).reshape(-1)
    return spmm(cols, rows, vals, (s.shape[1], s.shape[0]), dense.t()).t()


def _sparse_sparse(a: SparseTensor, b: SparseTensor) -> SparseTensor:
    """``a @ b`` of two 2-D sparse matrices: a coalesced sparse result (in ``a``'s layout
    when both are compressed). Each stored (i, k) of ``a`` meets the stored (k, j) of ``b``,
    found by binary search in ``b``'s row-sorted entries."""
    if a._device is not b._device:
        raise DeviceMismatchError(mismatch_message("mm", a.device, b.device))
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ShapeError(f"mm: shapes {list(a.shape)} and {list(b.shape)} cannot be "
                         f"multiplied")
    dt = _dt.promote_types(a._dtype, b._dtype)
    ca, cb = coalesce(to_coo(a)), coalesce(to_coo(b))
    if ca.dense_dim() or cb.dense_dim():
        raise ShapeError("mm: sparse operands with dense dimensions are not supported")
    with no_grad_ctx():
        kb = cb._idx[0]
        start = searchsorted(kb, ca._idx[1])
        count = searchsorted(kb, ca._idx[1], right=True) - start
        total = int(count.sum().item())
        which = repeat_interleave(arange(count.shape[0], device=a.device), count)
        offset = arange(total, device=a.device) - (count.cumsum(0) - count)[which]
        pos = start[which] + offset
        idx = stack([ca._idx[0][which], cb._idx[1][pos]])
    vals = ca._vals.to(dt).index_select(0, which) * cb._vals.to(dt).index_select(0, pos)
    out = coalesce(make_coo(idx, vals, (a.shape[0], b.shape[1])))
    both = isinstance(a, SparseCompressedTensor) and isinstance(b, SparseCompressedTensor)
    return to_compressed(out, a.layout) if both else out


def _bmm(s: SparseCooTensor, d: Tensor) -> Tensor:
    """``s @ d`` for a 3-D COO ``s`` (three sparse dimensions) and a 3-D dense ``d``: one
    block-diagonal product."""
    if s._device is not d._device:
        raise DeviceMismatchError(mismatch_message("bmm", s.device, d.device))
    b, m, k = s.shape
    if s.sparse_dim() != 3 or d.ndim != 3 or d.shape[0] != b or d.shape[1] != k:
        raise ShapeError(f"bmm: shapes {list(s.shape)} (3 sparse dimensions) and "
                         f"{list(d.shape)} cannot be multiplied")
    dt = _dt.promote_types(s._dtype, d._dtype)
    batch, i, j = s._idx[0], s._idx[1], s._idx[2]
    out = spmm(batch * m + i, batch * k + j, s._vals.to(dt), (b * m, b * k),
               d.to(dt).reshape(b * k, d.shape[2]))
    return out.reshape(b, m, d.shape[2])


@register("matmul")
def matmul(a: Any, b: Any) -> Tensor:
    """``matmul``/``mm``/``mv``/``bmm``/``@`` with a sparse operand."""
    if isinstance(a, SparseTensor) and isinstance(b, SparseTensor):
        return _sparse_sparse(a, b)
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"matmul: expected Tensors, got {type(a).__name__} and "
                        f"{type(b).__name__}")
    if isinstance(a, SparseTensor):
        return _bmm(to_coo(a), b) if a.ndim == 3 else _sparse_dense("mm", a, b)
    assert isinstance(b, SparseTensor)
    return _dense_sparse("mm", a, b)


sparse_mm = matmul


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1,  # noqa: A002
          alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` (``input`` ignored when ``beta == 0``,
    as torch: its NaNs do not propagate)."""
    prod = matmul(mat1, mat2) if non_strided(mat1, mat2) else mat1 @ mat2
    if non_strided(prod):
        raise TypeError("addmm: the product of two sparse matrices is sparse; use "
                        "torch.sparse.mm and add the dense term yourself")
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod
    return prod + (input if beta == 1 else input * beta)


# ------------------------------------------- torch's legacy COO products: smm, sspaddmm
def _legacy_operands(op: str, mat1: Any, mat2: Any) -> SparseCooTensor:
    """torch's checks of ``sspaddmm``'s ``mat1`` (2-D COO, scalar values) and ``mat2``
    (strided, one dtype and device with ``mat1``); returns ``mat1`` coalesced."""
    if not isinstance(mat1, SparseCooTensor):
        raise RuntimeError(f"{op}: expected 'mat1' to have sparse layout, got 'mat1' with "
                           f"layout {_layout_name(mat1)}")
    if not isinstance(mat2, Tensor) or non_strided(mat2):
        raise RuntimeError(f"{op}: expected 'mat2' to have strided layout, got 'mat2' with "
                           f"layout {_layout_name(mat2)}")
    if mat1._device is not mat2._device:
        raise DeviceMismatchError(mismatch_message(op, mat1.device, mat2.device))
    if mat1._dtype is not mat2._dtype:
        raise RuntimeError(f"expected scalar type {mat1._dtype.name} but found "
                           f"{mat2._dtype.name}")
    if mat1.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"{op}: expected 2-D matrices, got {mat1.ndim}-D and {mat2.ndim}-D")
    if mat1.dense_dim():
        raise RuntimeError(f"{op}: Argument #2: scalar values expected, got "
                           f"{mat1.dense_dim()}D values")
    if mat2.shape[0] != mat1.shape[1]:
        raise RuntimeError(f"{op}: Argument #3: Expected dim 0 size {mat1.shape[1]}, got "
                         f"{mat2.shape[0]}")
    return coalesce(mat1)


def _layout_name(t: Any) -> str:
    from .tensor import _layout_word
    layout = getattr(t, "layout", None)
    return _layout_word(layout) if layout is not None else type(t).__name__


def _row_products(c: SparseCooTensor, mat2: Tensor, alpha: Any) -> tuple[Tensor, Tensor]:
    """torch's pattern for ``mat1 @ mat2``: every column of each row where the coalesced
    ``mat1`` has entries (zeros included), rows ascending; (indices, values)."""
    m, n = c.shape[0], mat2.shape[1]
    prod = spmm(c._idx[0], c._idx[1], c._vals, (m, c.shape[1]), mat2)
    with no_grad_ctx():
        rows = c._idx[0].unique()
        idx = stack([repeat_interleave(rows, n),
                     arange(n, device=mat2.device).repeat(rows.shape[0])])
    vals = prod.index_select(0, rows).reshape(-1)
    return idx, (vals if alpha == 1 else vals * alpha)


def sspaddmm(input: Any, mat1: Any, mat2: Tensor, *, beta: Any = 1,  # noqa: A002
             alpha: Any = 1, out: Any = None) -> SparseTensor:
    """torch's ``sspaddmm``: ``beta * input + alpha * (mat1 @ mat2)`` for a sparse COO
    ``input`` and ``mat1`` and a dense ``mat2``, as an uncoalesced COO tensor holding
    ``input``'s entries (scaled) then every column of each row where ``mat1`` has entries,
    as torch lays it out. ``out=`` (a COO tensor) receives the result."""
    if not isinstance(input, SparseCooTensor):
        raise RuntimeError("sspaddmm: expected 'self' (input) to be a sparse COO tensor, got "
                           f"layout {_layout_name(input)}")
    c = _legacy_operands("sspaddmm", mat1, mat2)
    if input._dtype is not mat1._dtype:
        raise RuntimeError(f"expected scalar type {mat1._dtype.name} but found "
                           f"{input._dtype.name}")
    m, n = mat1.shape[0], mat2.shape[1]
    for d, want in enumerate((m, n)):
        if input.ndim != 2 or input.shape[d] != want:
            raise RuntimeError(f"sspaddmm: Argument #1: Expected dim {d} size {want}, got "
                             f"{input.shape[d] if input.ndim > d else None}")
    if input.dense_dim():
        raise RuntimeError("sspaddmm: Argument #1: scalar values expected, got "
                           f"{input.dense_dim()}D values")
    idx, vals = _row_products(c, mat2, alpha)
    ivals = input._vals if beta == 1 else input._vals * beta
    idx = cat([input._idx, idx], 1)
    res = make_coo(idx, cat([ivals, vals]), (m, n), idx.shape[1] <= 1)  # torch's flag
    if out is None:
        return res
    if not isinstance(out, SparseCooTensor):
        raise RuntimeError("sspaddmm: out= must be a sparse COO tensor")
    from .arith import assign
    return assign(out, res)


def smm(input: Any, mat: Tensor) -> SparseCooTensor:  # noqa: A002 - torch's name
    """torch's ``smm``: sparse COO ``input`` @ dense ``mat`` as an (uncoalesced) COO tensor
    holding every column of each row where ``input`` has entries (``sspaddmm`` on an empty
    ``input``, as in torch)."""
    if not isinstance(input, SparseCooTensor):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    c = _legacy_operands("sspaddmm", input, mat)
    idx, vals = _row_products(c, mat, 1)
    return make_coo(idx, vals, (input.shape[0], mat.shape[1]), idx.shape[1] <= 1)
