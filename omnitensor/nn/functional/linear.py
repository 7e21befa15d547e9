"""``linear`` and ``bilinear``.

``linear`` is one graph node (torch's AddmmBackward): the forward is a matmul and an
in-place bias add under no_grad, the backward three products. Both formulas are written
once against an op namespace: the trusted ops of ``core/trusted.py`` once one device and
one floating dtype are established (no per-op validation), else the checked Tensor
methods (mixed dtypes or devices, and ``create_graph`` backwards, which need the graph).
Recording one node instead of transpose + matmul + add saves most of the Python cost of
a small MLP step.
"""
from __future__ import annotations

from typing import Any

from ...core.autocast_state import autocast_operands, state as _autocast
from ...core.capture_hooks import composite
from ...core.graph import needs_grad, no_grad_ctx, record
from ...core.shape_util import broadcast_shapes
from ...core.tensor import Tensor
from ...errors import ShapeError
from ...core.trusted import ops_for
from ._utils import differentiable_backward

__all__ = ["linear", "bilinear"]


@composite("linear")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    """``input @ weight.T + bias``; ``input`` is ``(..., in_features)``, ``weight``
    ``(out_features, in_features)``, ``bias`` ``(out_features,)``."""
    if _autocast.active:
        input, weight, bias = autocast_operands("linear", input, weight, bias)  # noqa: A001
    if weight.ndim == 1 and input.ndim >= 1 and input.shape[-1] == weight.shape[0]:
        # torch: a 1-D weight is one output feature with that dim dropped (input @ weight)
        if bias is not None:
            _check_vector_weight_bias(input, bias)
        out = input.matmul(weight)
        return out if bias is None else out + bias
    if weight.ndim != 2:
        raise ValueError(f"linear: weight must be 2-D (out_features, in_features) or 1-D "
                         f"(in_features,), got shape {tuple(weight.shape)}")
    if input.ndim == 0 or input.shape[-1] != weight.shape[1]:
        raise ValueError(f"linear: input of shape {tuple(input.shape)} does not match weight "
                         f"of shape {tuple(weight.shape)} (expected last dim "
                         f"{weight.shape[1]})")
    if bias is not None:
        _check_bias(bias, tuple(input.shape[:-1]) + (weight.shape[0],))
    ops = ops_for(input, weight, bias)
    with no_grad_ctx():
        out = ops.matmul(input, ops.t(weight))
        if bias is not None:
            out = ops.add_(out, bias) if out.dtype is bias.dtype else ops.add(out, bias)
    if needs_grad(input, weight, bias):
        # save only what a requested gradient reads (an in-place change of the other
        # operand is then no error, as in torch)
        record("AddmmBackward0", _linear_backward, out, (input, weight, bias),
               (input if weight.requires_grad else None,
                weight if input.requires_grad else None))
    return out


def _check_bias(bias: Any, shape: tuple) -> None:
    """The bias is added in place to the ``shape`` result: it must broadcast to exactly
    that shape (torch's check; the trusted in-place add checks no shapes)."""
    if not isinstance(bias, Tensor):
        raise TypeError(f"linear: bias must be a Tensor or None, got {type(bias).__name__}")
    try:
        ok = broadcast_shapes(shape, tuple(bias.shape)) == shape
    except ShapeError:
        ok = False
    if not ok:
        raise ShapeError(f"linear: bias of shape {tuple(bias.shape)} does not broadcast to "
                         f"the output shape {shape} (expected ({shape[-1]},))")


def _check_vector_weight_bias(input: Tensor, bias: Any) -> None:  # noqa: A002
    """torch's rule for a bias with a 1-D weight: a 2-D input, or a contiguous input with a
    bias that is 1-D (or one non-1 dim), takes its addmm path, which refuses the vector
    weight; any other input gets the bias added in place to its ``input.shape[:-1]``
    result."""
    shape = getattr(bias, "shape", ())
    vector_bias = len(shape) == 1 or sum(n != 1 for n in shape) == 1
    if input.ndim == 2 or (vector_bias and input.is_contiguous()):
        raise ShapeError("linear: mat2 must be a matrix, got 1-D tensor (torch adds this "
                         "bias through addmm, which needs a 2-D weight: pass "
                         "weight.unsqueeze(0) and drop the output's last dim)")
    _check_bias(bias, tuple(input.shape[:-1]))


def _linear_backward(node: Any, g: Tensor) -> tuple:
    x, w = node.saved_tensors
    need_x, need_w, need_b = node.needs_input_grad
    ops = Tensor if differentiable_backward() else ops_for(g, x, w)
    gx = ops.matmul(g, w) if need_x else None
    gw = gb = None
    if need_w or need_b:
        g2 = g if g.ndim == 2 else ops.reshape(g, _rows(g))
        if need_w:
            gw = ops.matmul(ops.t(g2), x if x.ndim == 2 else ops.reshape(x, _rows(x)))
        if need_b:
            gb = ops.sum(g2, 0)
    return gx, gw, gb


def _rows(t: Tensor) -> tuple[int, int]:
    """``t.shape`` flattened to (rows, last dim), explicitly (no -1)."""
    n = t.shape[-1]
    return (t.numel() // n if n else 0, n)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """``y_k = x1 W_k x2 + b_k`` with ``weight`` of shape ``(out, in1, in2)``."""
    out_f, in1, in2 = weight.shape
    if input1.shape[-1] != in1 or input2.shape[-1] != in2:
        raise ValueError(f"bilinear: inputs {tuple(input1.shape)} and {tuple(input2.shape)} "
                         f"do not match weight {tuple(weight.shape)}")
    # (..., in1) @ (in1, out * in2) -> (..., out, in2), then contract in2 with x2
    w = weight.permute(1, 0, 2).reshape(in1, out_f * in2)
    t = (input1 @ w).reshape(*input1.shape[:-1], out_f, in2)
    out = (t * input2.unsqueeze(-2)).sum(-1)
    if bias is not None:
        out = out + bias
    return out
