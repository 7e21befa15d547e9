"""torch's ``beta * input + alpha * product`` family: ``addmm``, ``addmv``, ``addr``,
``baddbmm``, ``addbmm``, and the elementwise ``addcmul``/``addcdiv``.

Each is one composite of the products in :mod:`.linalg_ops` and elementwise ops, so it runs
on every backend and differentiates through its parts. torch's rules kept here: ``beta=0``
ignores ``input`` (its NaN and inf do not propagate), integer results truncate
``alpha``/``beta`` to ints, and bool results are the logical ``beta and input or alpha and
product``.
"""
from __future__ import annotations

from typing import Any

from ...errors import ShapeError
from .. import dtypes as _dt
from ..tensor import Tensor
from . import linalg_ops
from .out_arg import write_out

__all__ = ["addmm", "addmv", "addr", "baddbmm", "addbmm", "addcmul", "addcdiv", "addcmul_",
           "addcdiv_"]


def _check_ndim(op: str, what: str, t: Tensor, n: int) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}(): argument '{what}' must be Tensor, not {type(t).__name__}")
    if t.ndim != n:
        raise ShapeError(f"{op}: {what} must be a {n}-D tensor, got {t.ndim}-D")


def _scaled(t: Tensor, factor: Any) -> Tensor:
    """``factor * t``, skipped for a factor of 1."""
    return t if factor == 1 else t * factor


def _combine(op: str, input: Tensor, product: Tensor, beta: Any,  # noqa: A002
             alpha: Any, out: Any) -> Tensor:
    """``beta * input + alpha * product`` in ``product``'s shape (``input`` broadcasts to
    it), in the dtype of the operands promoted; for integer results ``alpha`` and ``beta``
    are truncated to ints, for bool ones taken as truths (torch)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    try:
        input.broadcast_to(product.shape)
    except ShapeError:
        raise ShapeError(f"{op}: input of shape {tuple(input.shape)} does not broadcast to "
                         f"the product's shape {tuple(product.shape)}") from None
    dtype = _dt.promote_types(input.dtype, product.dtype)
    if dtype is _dt.bool_:  # torch's logical form: beta and input or alpha and product
        res = product if alpha else product & False
        if beta:
            res = input | res
        return write_out(op, res.broadcast_to(product.shape).clone(), out)
    if dtype.kind in "iu":
        alpha, beta = int(alpha), int(beta)
    res = _scaled(product, alpha)
    if res.dtype is not dtype:
        res = res.to(dtype)
    if beta != 0:  # beta == 0: input is ignored, its NaN and inf do not propagate
        res = _scaled(input, beta) + res
    elif res.shape != product.shape:
        res = res.broadcast_to(product.shape)
    return write_out(op, res, out)


def _bool_product(a: Tensor, b: Tensor) -> Tensor:
    """A matrix product of bool operands (torch's logical one): any(a_ik and b_kj)."""
    if a.dtype is _dt.bool_ and b.dtype is _dt.bool_:
        return linalg_ops.matmul(a.to(_dt.int64), b.to(_dt.int64)) != 0
    return linalg_ops.matmul(a, b)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1,  # noqa: A002
          alpha: Any = 1, out: Any = None) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` for matrices ``mat1`` (n, m) and
    ``mat2`` (m, p); ``input`` broadcasts to (n, p)."""
    _check_ndim("addmm", "mat1", mat1, 2)
    _check_ndim("addmm", "mat2", mat2, 2)
    return _combine("addmm", input, _bool_product(mat1, mat2), beta, alpha, out)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1,  # noqa: A002
          alpha: Any = 1, out: Any = None) -> Tensor:
    """``beta * input + alpha * (mat @ vec)`` for a matrix and a vector."""
    _check_ndim("addmv", "mat", mat, 2)
    _check_ndim("addmv", "vec", vec, 1)
    return _combine("addmv", input, _bool_product(mat, vec), beta, alpha, out)


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1,  # noqa: A002
         alpha: Any = 1, out: Any = None) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``."""
    _check_ndim("addr", "vec1", vec1, 1)
    _check_ndim("addr", "vec2", vec2, 1)
    return _combine("addr", input, linalg_ops.outer(vec1, vec2), beta, alpha, out)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,  # noqa: A002
            alpha: Any = 1, out: Any = None) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2)`` (batched)."""
    _check_ndim("baddbmm", "batch1", batch1, 3)
    _check_ndim("baddbmm", "batch2", batch2, 3)
    if batch1.shape[0] != batch2.shape[0]:
        raise ShapeError(f"baddbmm: batch sizes differ: {batch1.shape[0]} vs "
                         f"{batch2.shape[0]}")
    return _combine("baddbmm", input, _bool_product(batch1, batch2), beta, alpha, out)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,  # noqa: A002
           alpha: Any = 1, out: Any = None) -> Tensor:
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``."""
    _check_ndim("addbmm", "batch1", batch1, 3)
    _check_ndim("addbmm", "batch2", batch2, 3)
    b, n, m = batch1.shape
    if batch2.shape[0] != b or batch2.shape[1] != m:
        raise ShapeError(f"addbmm: batch1 {tuple(batch1.shape)} and batch2 "
                         f"{tuple(batch2.shape)} do not multiply")
    p = batch2.shape[2]
    # one (n, b*m) @ (b*m, p) product sums over the batch as it contracts
    left = batch1.permute(1, 0, 2).reshape(n, b * m)
    right = batch2.reshape(b * m, p)
    return _combine("addbmm", input, _bool_product(left, right), beta, alpha, out)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *,  # noqa: A002
            value: Any = 1, out: Any = None) -> Tensor:
    """``input + value * tensor1 * tensor2`` (broadcasting)."""
    prod = tensor1 * tensor2
    return write_out("addcmul", input + (prod if value == 1 else value * prod), out)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *,  # noqa: A002
            value: Any = 1, out: Any = None) -> Tensor:
    """``input + value * tensor1 / tensor2``; integer ``tensor1``/``tensor2`` are refused
    (torch: integer division with addcdiv is no longer supported)."""
    if all(isinstance(t, Tensor) and t.dtype.kind in "biu" for t in (tensor1, tensor2)):
        raise TypeError("addcdiv: integer division of tensor1 by tensor2 is not supported "
                        "(as in torch); use addcmul(input, tensor1, 1 / tensor2) or cast to "
                        "a floating dtype")
    quot = tensor1 / tensor2
    return write_out("addcdiv", input + (quot if value == 1 else value * quot), out)


def _value_first(op: str, args: tuple, value: Any) -> tuple[Any, Any, Any]:
    """``(tensor1, tensor2, value)`` of ``op``'s arguments, also from torch's deprecated
    overload ``op(value, tensor1, tensor2)`` (still in older optimizers and libraries)."""
    if len(args) == 3 and not isinstance(args[0], Tensor):
        import warnings
        warnings.warn(f"This overload of {op} is deprecated: {op}(Number value, Tensor "
                      f"tensor1, Tensor tensor2); use {op}(tensor1, tensor2, value=value)",
                      UserWarning, stacklevel=3)
        return args[1], args[2], args[0]
    if len(args) != 2:
        raise TypeError(f"{op}() takes tensor1, tensor2 and the keyword value=, got "
                        f"{len(args)} positional arguments")
    return args[0], args[1], value


def addcmul_(self: Tensor, *args: Any, value: Any = 1) -> Tensor:
    """``self += value * tensor1 * tensor2`` in place (one product, one in-place add: the
    optimizers' hot path); also torch's deprecated ``addcmul_(value, tensor1, tensor2)``."""
    tensor1, tensor2, value = _value_first("addcmul_", args, value)
    return self.add_(tensor1 * tensor2, alpha=value)


def addcdiv_(self: Tensor, *args: Any, value: Any = 1) -> Tensor:
    """``self += value * tensor1 / tensor2`` in place (and the deprecated value-first
    overload, as :func:`addcmul_`)."""
    tensor1, tensor2, value = _value_first("addcdiv_", args, value)
    if all(isinstance(t, Tensor) and t.dtype.kind in "biu" for t in (tensor1, tensor2)):
        addcdiv(self, tensor1, tensor2)  # raises torch's refusal of integer division
    return self.add_(tensor1 / tensor2, alpha=value)
