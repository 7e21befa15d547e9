"""``autograd.Function``: user-defined ops with their own backward (torch's API).

The context object given to ``forward``/``backward`` is the graph node itself, so
``ctx.save_for_backward``, ``ctx.saved_tensors``, ``ctx.needs_input_grad``,
``ctx.mark_non_differentiable`` and ``ctx.set_materialize_grads`` behave as in torch and
any other attribute can be stored on it.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from ..core import forward_ad
from ..core.graph import Node, _mode, edge_of, is_grad_enabled, no_grad_ctx
from ..core.ops.creation import zeros_like
from ..core.tensor import Tensor

__all__ = ["Function", "once_differentiable", "FunctionCtx"]

FunctionCtx = Node


class _FunctionMeta(type):
    def __init__(cls, name: str, bases: tuple, ns: dict) -> None:
        super().__init__(name, bases, ns)
        cls._backward_name = name + "Backward"


class Function(metaclass=_FunctionMeta):
    """Subclass with ``@staticmethod forward(ctx, *args)`` and
    ``@staticmethod backward(ctx, *grad_outputs)``, then call ``MyFn.apply(*args)``."""

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("subclasses of Function must implement forward")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError("subclasses of Function must implement backward")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        """Optional torch 2 style: forward without ctx, context set up here."""

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """Optional forward-mode formula: the output tangents from the input tangents.
        Without it, forward-mode AD differentiates ``backward`` (core/forward_ad.py)."""
        raise NotImplementedError

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        record = is_grad_enabled() and any(_in_reverse(a) for a in args)
        forward = _mode.forward and forward_ad.carries_tangents(args)
        # input edges first: a new AccumulateGrad must precede ctx in creation order
        edges = tuple(edge_of(a) if _in_reverse(a) else None for a in args) \
            if record else ()
        # torch's ctx: a Node that also carries the Function's own attributes
        ctx: Any = Node(cls._backward_name, _function_backward)
        ctx.fn_cls = cls
        ctx.needs_input_grad = tuple(_in_reverse(a) for a in args)
        uses_setup = cls.setup_context is not Function.setup_context
        with no_grad_ctx():
            if uses_setup:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        if not (record or forward):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        fixed = []
        for o in outs:
            if isinstance(o, Tensor) and any(o is a for a in args):
                o = o._alias()  # an input returned as is becomes a new graph value
            fixed.append(o)
        if not record:
            ctx.next_functions = (None,) * len(args)
            _forward_tangents(cls, ctx, fixed, args)
            return fixed[0] if single else tuple(fixed)
        ctx.next_functions = edges
        ctx.input_meta = tuple((a.shape, a.dtype, a.device) if isinstance(a, Tensor) else None
                               for a in args)
        ctx.num_outputs = len(fixed)
        meta: list[tuple | None] = []
        for i, o in enumerate(fixed):
            if isinstance(o, Tensor) and id(o) not in ctx.non_differentiable and \
                    o.dtype.kind in "fc":
                o.grad_fn = ctx
                o.requires_grad = True
                o._output_nr = i
                meta.append((o.shape, o.dtype, o.device))
            else:
                meta.append((o.shape, o.dtype, o.device) if isinstance(o, Tensor) else None)
        ctx._output_meta = tuple(meta)
        if forward:
            forward_ad.prepare_outputs(tuple(o for o in fixed if isinstance(o, Tensor)))
        _unlink_saved_outputs(ctx)
        if forward:
            _forward_tangents(cls, ctx, fixed, args)
        return fixed[0] if single else tuple(fixed)


def _in_reverse(a: Any) -> bool:
    return isinstance(a, Tensor) and a.requires_grad and not (
        a.grad_fn is not None and a.grad_fn._fw_only)


def _forward_tangents(cls: Any, ctx: Any, outs: list, args: tuple) -> None:
    """Output tangents of a Function call on inputs carrying tangents: the Function's own
    ``jvp`` when it defines one (torch), else its ``backward`` differentiated."""
    outs_t = tuple(o if isinstance(o, Tensor) and id(o) not in ctx.non_differentiable
                   and o.dtype.kind in "fc" else None for o in outs)
    if cls.jvp is Function.jvp:
        tensors = tuple(o if isinstance(o, Tensor) else None for o in outs)
        skip = frozenset(k for k, o in enumerate(outs_t) if o is None)
        forward_ad.record_tangents(ctx, tensors, args, skip)
        return
    for level in forward_ad.visible_levels():
        ts = [forward_ad.tangent_of(a, level) for a in args]
        if all(t is None for t in ts):
            continue
        with forward_ad.hidden_from(level):
            if ctx.materialize_grads:
                ts = [zeros_like(a) if t is None and isinstance(a, Tensor) and
                      a.dtype.kind in "fc" else t for a, t in zip(args, ts)]
            res = cls.jvp(ctx, *ts)
        res = res if isinstance(res, tuple) else (res,)
        if len(res) != len(outs):
            raise RuntimeError(f"{cls.__name__}.jvp returned {len(res)} tangent(s) for "
                               f"{len(outs)} output(s)")
        for o, r in zip(outs_t, res):
            if o is not None and r is not None:
                forward_ad.set_tangent(o, level, r)


def _unlink_saved_outputs(ctx: Node) -> None:
    """Outputs saved in forward would form a reference cycle with ctx; keep graph-free
    aliases instead (their grad_fn is restored when unpacked)."""
    saved = ctx._saved
    if not saved:
        return
    new, flags = [], []
    for t, is_out in zip(saved, ctx._saved_outputs):
        if isinstance(t, Tensor) and t.grad_fn is ctx:
            a = t._alias()
            fw = t.__dict__.get("_fw")
            if fw is not None:  # the same forward-AD tangents, as the dict itself
                a.__dict__["_fw"] = fw
            new.append(a)
            flags.append(True)
        else:
            new.append(t)
            flags.append(is_out)
    ctx._saved = tuple(new)
    ctx._saved_outputs = tuple(flags)


def _function_backward(ctx: Any, *grads: Any) -> tuple:
    result = ctx.fn_cls.backward(ctx, *grads)
    if not isinstance(result, tuple):
        result = (result,)
    n = len(ctx.next_functions)
    if len(result) > n:
        if any(r is not None for r in result[n:]):
            raise RuntimeError(f"function {ctx.name()} returned an incorrect number of "
                               f"gradients (expected {n}, got {len(result)})")
        result = result[:n]
    return result


def once_differentiable(fn: Callable) -> Callable:
    """Mark a backward as not differentiable itself: it runs without recording."""
    @functools.wraps(fn)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        with no_grad_ctx():
            return fn(ctx, *grads)
    return wrapper
