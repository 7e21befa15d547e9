"""ONNX's reductions (ReduceSum & co., ArgMax/ArgMin, CumSum, TopK) and linear algebra
(MatMul, Gemm, Einsum) as omnitensor functions, registered in ``ops.OPS`` (``runtime``
imports this module)."""
from __future__ import annotations

from typing import Any, Callable

from ..core.ops.linalg_ops import einsum, matmul
from ..core.tensor import Tensor
from .ops import OPS, Ctx, _axes, _joint, op

# ------------------------------------------------------------------ reductions
def _reduce(name: str) -> Callable:
    def run(ctx: Ctx, x: Tensor, axes: Any = None) -> Tensor:
        keep = bool(ctx.attr("keepdims", 1))
        ax = _axes(ctx, axes)
        if not ax:
            if ctx.attr("noop_with_empty_axes", 0):
                return x
            ax = list(range(x.ndim))
        dims = tuple(a % x.ndim for a in ax) if x.ndim else ()
        if name == "mean":
            return x.mean(dim=dims, keepdim=keep)
        if name == "sum":
            return x.sum(dim=dims, keepdim=keep)
        if name == "max":
            return x.amax(dim=dims, keepdim=keep)
        if name == "min":
            return x.amin(dim=dims, keepdim=keep)
        if name == "prod":
            out = x
            for a in sorted(dims, reverse=True):
                out = out.prod(dim=a, keepdim=keep)
            return out
        if name == "l2":
            return (x * x).sum(dim=dims, keepdim=keep).sqrt()
        if name == "sumsquare":
            return (x * x).sum(dim=dims, keepdim=keep)
        return x.logsumexp(dim=dims, keepdim=keep)  # log_sum_exp
    return run


for _name, _r in {"ReduceMean": "mean", "ReduceSum": "sum", "ReduceMax": "max",
                  "ReduceMin": "min", "ReduceProd": "prod", "ReduceL2": "l2",
                  "ReduceSumSquare": "sumsquare", "ReduceLogSumExp": "lse"}.items():
    OPS[_name] = _reduce(_r)


def _arg(kind: str) -> Callable:
    def run(ctx: Ctx, x: Tensor) -> Tensor:
        axis, keep = ctx.attr("axis", 0), bool(ctx.attr("keepdims", 1))
        if ctx.attr("select_last_index", 0):
            n = x.shape[axis]
            r = getattr(x.flip(dims=(axis,)), kind)(dim=axis, keepdim=keep)
            return (n - 1) - r
        return getattr(x, kind)(dim=axis, keepdim=keep)
    return run


OPS["ArgMax"] = _arg("argmax")
OPS["ArgMin"] = _arg("argmin")


@op("CumSum")
def _cumsum(ctx: Ctx, x: Tensor, axis: Tensor) -> Tensor:
    a = int(axis.item()) % x.ndim
    if ctx.attr("reverse", 0):
        x = x.flip(dims=(a,))
    out = x.cumsum(a)
    if ctx.attr("exclusive", 0):
        out = out - x
    return out.flip(dims=(a,)) if ctx.attr("reverse", 0) else out


@op("TopK")
def _topk(ctx: Ctx, x: Tensor, k: Tensor) -> tuple:
    axis = ctx.attr("axis", -1)
    r = x.topk(int(k.item()), dim=axis, largest=bool(ctx.attr("largest", 1)),
               sorted=bool(ctx.attr("sorted", 1)))
    return r.values, r.indices


# ------------------------------------------------------------------ linear algebra
@op("MatMul")
def _matmul(ctx: Ctx, a: Tensor, b: Tensor) -> Tensor:
    a, b = _joint(a, b)
    return matmul(a, b)


@op("Gemm")
def _gemm(ctx: Ctx, a: Tensor, b: Tensor, c: Any = None) -> Tensor:
    a, b = _joint(a, b)
    if ctx.attr("transA", 0):
        a = a.t()
    if ctx.attr("transB", 0):
        b = b.t()
    alpha, beta = ctx.attr("alpha", 1.0), ctx.attr("beta", 1.0)
    out = matmul(a, b)
    if alpha != 1.0:
        out = out * alpha
    if c is not None:
        (c,) = _joint(c) if c.device == out.device else [c.to(out.device)]
        out = out + (c * beta if beta != 1.0 else c)
    return out


@op("Einsum")
def _einsum(ctx: Ctx, *xs: Tensor) -> Tensor:
    return einsum(ctx.attr("equation"), *_joint(*xs))
