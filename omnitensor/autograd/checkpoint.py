"""Activation checkpointing: run a block without keeping its intermediates and recompute
them in backward (torch.utils.checkpoint semantics, including the random state).

Both of torch's variants:

* ``use_reentrant=True``: the block runs under ``no_grad``; its output requires grad only
  when a tensor argument does, and the recomputation's backward accumulates into every
  leaf it reaches, so (as in torch) it works with ``backward()`` but not with
  ``autograd.grad`` or ``backward(inputs=...)`` (a clear error).
* ``use_reentrant=False`` (and the default): the block runs with grad recording and the
  graph is dropped at once (peak memory is one block's activations, as during the
  recomputation anyway), so the output requires grad exactly when something inside needs
  it, parameters included, even when no argument requires grad. Under ``autograd.grad``
  the recomputation computes only the arguments' gradients, touching no ``.grad``.
"""
from __future__ import annotations

from typing import Any, Callable

from ..core.engine import backward as run_backward, current_pass_accumulates_all
from ..core.engine import grad as autograd_grad
from ..core.grad_mode import enable_grad, is_grad_enabled, no_grad_ctx
from ..core.ops.creation import zeros
from ..core.ops.random import default_generator
from ..core.tensor import Tensor
from .function import Function

__all__ = ["checkpoint"]


def _as_tuple(outs: Any) -> tuple:
    return (outs,) if isinstance(outs, Tensor) else tuple(outs)


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx: Any, run: Callable, preserve_rng: bool, reentrant: bool, anchor: Any,
                *args: Any) -> Any:
        ctx.run = run
        ctx.reentrant = reentrant
        ctx.rng = default_generator._counter if preserve_rng else None
        ctx.tensor_idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.others = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        if reentrant:
            with no_grad_ctx():
                return run(*args)
        with enable_grad():  # recorded to learn what needs grad; the graph dies here
            outs = run(*args)
        ctx.inner_needs_grad = any(isinstance(o, Tensor) and o.requires_grad
                                   for o in _as_tuple(outs))
        if isinstance(outs, Tensor):
            return outs.detach()
        return type(outs)(o.detach() if isinstance(o, Tensor) else o for o in outs)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        accumulate = current_pass_accumulates_all() is not False
        if ctx.reentrant and not accumulate:
            raise RuntimeError("checkpoint(use_reentrant=True) is not compatible with "
                               "autograd.grad() or backward(inputs=...); use "
                               "use_reentrant=False, or call .backward()")
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
                outs = _as_tuple(ctx.run(*args))
        finally:
            if ctx.rng is not None:
                default_generator._counter = now
        pairs = [(o, g) for o, g in zip(outs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        result: list = [None] * (4 + len(ctx.others))
        if not pairs:
            return tuple(result)
        if accumulate:  # .backward(): parameters inside get their .grad, as in torch
            run_backward([o for o, _ in pairs], [g for _, g in pairs])
            for i, d in zip(ctx.tensor_idx, detached):
                result[4 + i] = d.grad
            return tuple(result)
        wanted = [(i, d) for i, d in zip(ctx.tensor_idx, detached) if d.requires_grad]
        if wanted:
            gs = autograd_grad([o for o, _ in pairs], [d for _, d in wanted],
                               [g for _, g in pairs], allow_unused=True)
            for (i, _), g in zip(wanted, gs):
                result[4 + i] = g
        return tuple(result)


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None,
               preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """``function(*args)`` whose intermediate activations are recomputed during backward
    instead of being stored. Parameters used inside get their gradients as usual;
    ``use_reentrant`` picks torch's variant (see the module docstring; default False)."""
    if kwargs:
        def run(*a: Any) -> Any:
            return function(*a, **kwargs)
    else:
        run = function
    if not is_grad_enabled():  # nothing will be recorded: nothing to recompute
        return run(*args)
    reentrant = bool(use_reentrant)
    # non-reentrant: an anchor that requires grad makes the node record even when no
    # argument does; outputs that need no gradient are detached again below
    anchor = None if reentrant else zeros((), requires_grad=True)
    out = _Checkpoint.apply(run, preserve_rng_state, reentrant, anchor, *args)
    if reentrant:
        return out
    node = next((o.grad_fn for o in _as_tuple(out) if isinstance(o, Tensor)), None)
    if node is not None and not getattr(node, "inner_needs_grad", True):
        return out.detach() if isinstance(out, Tensor) else type(out)(
            o.detach() if isinstance(o, Tensor) else o for o in out)
    return out
