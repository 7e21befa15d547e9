"""Activation checkpointing: run a block without keeping its intermediates and recompute
them in backward (torch.utils.checkpoint semantics, including the random state)."""
from __future__ import annotations

from typing import Any, Callable

from ..core.graph import no_grad_ctx
from ..core.ops.random import default_generator
from ..core.tensor import Tensor
from .function import Function
from .grad_mode import enable_grad

__all__ = ["checkpoint"]


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx: Any, run: Callable, preserve_rng: bool, *args: Any) -> Any:
        ctx.run = run
        ctx.rng = default_generator._counter if preserve_rng else None
        ctx.tensor_idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.others = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with no_grad_ctx():
            return run(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        from .engine import backward as run_backward
        saved = ctx.saved_tensors
        args = list(ctx.others)
        detached = []
        for i, t in zip(ctx.tensor_idx, saved):
            d = t.detach()
            d.requires_grad = t.requires_grad
            args[i] = d
            detached.append(d)
        if ctx.rng is not None:
            now = default_generator._counter
            default_generator._counter = ctx.rng
        try:
            with enable_grad():
                outs = ctx.run(*args)
        finally:
            if ctx.rng is not None:
                default_generator._counter = now
        outs = (outs,) if isinstance(outs, Tensor) else tuple(outs)
        pairs = [(o, g) for o, g in zip(outs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if pairs:
            run_backward([o for o, _ in pairs], [g for _, g in pairs])
        result = [None, None] + [None] * len(ctx.others)
        for i, d in zip(ctx.tensor_idx, detached):
            result[2 + i] = d.grad
        return tuple(result)


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None,
               preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """``function(*args)`` whose intermediate activations are recomputed during backward
    instead of being stored. Parameters used inside get their gradients as usual."""
    if kwargs:
        def run(*a: Any) -> Any:
            return function(*a, **kwargs)
    else:
        run = function
    return _Checkpoint.apply(run, preserve_rng_state, *args)
