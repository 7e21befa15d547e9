"""``Module.register_full_backward_hook`` / ``register_full_backward_pre_hook`` (torch).

A module with such hooks routes its Tensor positional inputs and its outputs through
identity autograd Functions (views of the same memory, no copies): the outputs' node sees
``grad_output`` first, then the inputs' node sees ``grad_input`` and calls
``hook(module, grad_input, grad_output)``, whose non-None result replaces ``grad_input``.
A pre-hook ``hook(module, grad_output)`` runs when the outputs' gradients arrive and may
replace them. When no input requires grad, the hooks run at the outputs' node with
``grad_input`` all None, as in torch.
"""
from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..core.tensor import Tensor


class _Call:
    """One forward call's bookkeeping: which inputs were wrapped, the outputs' gradients."""

    __slots__ = ("module", "n_inputs", "inputs_need_grad", "grad_output")

    def __init__(self, module: Any, n_inputs: int, inputs_need_grad: bool) -> None:
        self.module = module
        self.n_inputs = n_inputs
        self.inputs_need_grad = inputs_need_grad
        self.grad_output: tuple | None = None


def _replacement(r: Any, current: tuple, what: str) -> tuple:
    """A hook's result: ``current`` when None, else as many gradients as ``current``."""
    if r is None:
        return current
    r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
    if len(r) != len(current) or not all(g is None or isinstance(g, Tensor) for g in r):
        raise RuntimeError(f"backward {what} must return None or {len(current)} gradients "
                           f"(Tensors or None); got {r!r:.80}")
    return r


def _run_hooks(call: _Call, grad_input: tuple) -> tuple:
    m = call.module
    for hook in list(m._backward_hooks.values()):
        grad_input = _replacement(hook(m, grad_input, call.grad_output), grad_input,
                                  "hook (one gradient per Tensor input)")
    return grad_input


class _Outputs(Function):
    @staticmethod
    def forward(ctx: Any, call: _Call, *outs: Tensor) -> Any:
        ctx.call = call
        ctx.set_materialize_grads(False)  # an output without a gradient shows as None
        res = tuple(o.detach() for o in outs)
        return res[0] if len(res) == 1 else res

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        call = ctx.call
        m = call.module
        for hook in list(m._backward_pre_hooks.values()):
            grads = _replacement(hook(m, grads), grads, "pre-hook (one gradient per output)")
        call.grad_output = tuple(grads)
        if not call.inputs_need_grad:
            _run_hooks(call, (None,) * call.n_inputs)
        return (None, *grads)


class _Inputs(Function):
    @staticmethod
    def forward(ctx: Any, call: _Call, *ins: Tensor) -> Any:
        ctx.call = call
        ctx.set_materialize_grads(False)
        res = tuple(t.detach() for t in ins)
        return res[0] if len(res) == 1 else res

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        return (None, *_run_hooks(ctx.call, tuple(grads)))


def call_with_backward_hooks(module: Any, args: tuple, kwargs: dict, run: Any) -> Any:
    """``run(args, kwargs)`` (the forward with its forward hooks) with the inputs and
    outputs wrapped so that the module's backward hooks see their gradients."""
    idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    need = any(args[i].requires_grad for i in idx)
    call = _Call(module, len(idx), need)
    if need:
        wrapped = _Inputs.apply(call, *[args[i] for i in idx])
        wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
        new_args = list(args)
        for i, w in zip(idx, wrapped):
            new_args[i] = w
        args = tuple(new_args)
    out = run(args, kwargs)
    if isinstance(out, Tensor):
        return _Outputs.apply(call, out) if out.requires_grad else out
    if isinstance(out, tuple) and out and all(isinstance(o, Tensor) for o in out) and \
            any(o.requires_grad for o in out):
        res = _Outputs.apply(call, *out)
        return res if isinstance(res, tuple) else (res,)
    return out
