"""``omnitensor.autograd.functional``: torch's higher-level derivatives of a function,
built on :func:`omnitensor.autograd.grad` (reverse mode).

``vjp`` and ``jacobian`` are reverse-mode passes; ``jvp`` uses the double-vjp trick (the vjp
is linear in its cotangent ``u``, so differentiating ``u -> vjp(u)`` against ``v`` gives
``J v``), which is exact, not an approximation; ``hessian``, ``hvp`` and ``vhp`` are
jacobians and vjps of gradients. ``jacobian`` takes one backward pass per output element
(``vectorize=True`` is accepted and computes the same thing the same way).

Inputs and outputs follow torch: a tensor or a tuple of tensors; results keep that
structure. ``create_graph=True`` makes the results differentiable; ``strict=True`` raises
when an output does not depend on an input (else its block is zeros).
"""
from __future__ import annotations

from typing import Any, Callable

from ..core.engine import grad as _grad
from ..core.grad_mode import enable_grad
from ..core.ops.creation import ones_like, zeros, zeros_like
from ..core.ops.join import stack
from ..core.tensor import Tensor

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _tuple(x: Any, what: str, fn: str) -> tuple[bool, tuple]:
    if isinstance(x, Tensor):
        return False, (x,)
    if isinstance(x, (tuple, list)) and all(isinstance(t, Tensor) for t in x):
        return True, tuple(x)
    raise TypeError(f"{fn}: {what} must be a Tensor or a tuple of Tensors, got "
                    f"{type(x).__name__}")


def _prepare(inputs: tuple, create_graph: bool) -> tuple:
    """Inputs that require grad for this computation: kept in the caller's graph when
    ``create_graph`` (so results are differentiable in them), detached otherwise."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))  # a differentiable alias: grads flow to the original
        else:
            out.append(t.detach().requires_grad_(t.dtype.kind in "fc"))
    return tuple(out)


def _grads(outputs: tuple, inputs: tuple, grad_outputs: tuple | None, create_graph: bool,
           strict: bool, fn: str) -> tuple:
    diff_out = [o for o in outputs if o.requires_grad]
    gos = None
    if grad_outputs is not None:
        gos = tuple(g for o, g in zip(outputs, grad_outputs) if o.requires_grad)
    if not diff_out:
        if strict:
            raise RuntimeError(f"{fn}: the outputs do not depend on the inputs (strict=True)")
        return tuple(zeros_like(t) for t in inputs)
    gs = _grad(tuple(diff_out), inputs, grad_outputs=gos, retain_graph=True,
               create_graph=create_graph, allow_unused=True)
    result = []
    for i, (g, t) in enumerate(zip(gs, inputs)):
        if g is None:
            if strict:
                raise RuntimeError(f"{fn}: output does not depend on input {i} (strict=True)")
            g = zeros_like(t)
        result.append(g if create_graph else g.detach())
    return tuple(result)


def _unwrap(is_tuple: bool, values: tuple) -> Any:
    return values if is_tuple else values[0]


def _ones_for(outputs: tuple, v: Any, fn: str) -> tuple:
    if v is not None:
        return _tuple(v, "v", fn)[1]
    for o in outputs:
        if o.numel() != 1:
            raise RuntimeError(f"{fn}: v can only be None if the output has one element; the "
                               f"output has shape {tuple(o.shape)}")
    return tuple(ones_like(o) for o in outputs)


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), vᵀ J)``."""
    in_tuple, ins = _tuple(inputs, "inputs", "vjp")
    with enable_grad():
        ins = _prepare(ins, create_graph)
        out = func(*ins)
        out_tuple, outs = _tuple(out, "the function's output", "vjp")
        vs = _ones_for(outs, v, "vjp")
        g = _grads(outs, ins, vs, create_graph, strict, "vjp")
    outs = outs if create_graph else tuple(o.detach() for o in outs)
    return _unwrap(out_tuple, outs), _unwrap(in_tuple, g)


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), J v)`` by the double-vjp trick (exact)."""
    in_tuple, ins = _tuple(inputs, "inputs", "jvp")
    if v is None:
        if any(t.numel() != 1 for t in ins):
            raise RuntimeError("jvp: v can only be None if the input has one element")
        vs = tuple(ones_like(t) for t in ins)
    else:
        vs = _tuple(v, "v", "jvp")[1]
    with enable_grad():
        ins = _prepare(ins, create_graph)
        out = func(*ins)
        out_tuple, outs = _tuple(out, "the function's output", "jvp")
        us = tuple(zeros_like(o).requires_grad_(o.dtype.kind in "fc") for o in outs)
        g = _grads(outs, ins, us, True, strict, "jvp")  # vjp(u), linear in u
        jv = _grads(g, us, vs, create_graph, strict, "jvp")
    outs = outs if create_graph else tuple(o.detach() for o in outs)
    return _unwrap(out_tuple, outs), _unwrap(out_tuple, jv)


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian: for output ``i`` and input ``j`` a tensor of shape
    ``outputs[i].shape + inputs[j].shape``; nested tuples as torch's."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError(f"jacobian: strategy must be 'reverse-mode' or 'forward-mode', got "
                         f"{strategy!r}")
    in_tuple, ins = _tuple(inputs, "inputs", "jacobian")
    with enable_grad():
        ins = _prepare(ins, create_graph)
        out = func(*ins)
        out_tuple, outs = _tuple(out, "the function's output", "jacobian")
        blocks = []
        for o in outs:
            flat = o.reshape(-1)
            rows: list[list[Tensor]] = [[] for _ in ins]
            for k in range(flat.shape[0]):
                g = _grads((flat[k],), ins, None, create_graph, strict, "jacobian")
                for j, gj in enumerate(g):
                    rows[j].append(gj)
            per_input = []
            for j, t in enumerate(ins):
                if rows[j]:
                    block = stack(rows[j]).reshape(tuple(o.shape) + tuple(t.shape))
                else:  # an empty output
                    block = zeros(tuple(o.shape) + tuple(t.shape), dtype=t.dtype,
                                  device=t.device)
                per_input.append(block)
            blocks.append(_unwrap(in_tuple, tuple(per_input)))
    return _unwrap(out_tuple, tuple(blocks))


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar function: the jacobian of its gradient."""
    in_tuple, ins = _tuple(inputs, "inputs", "hessian")

    def gradient(*xs: Tensor) -> Any:
        out = func(*xs)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("hessian: the function must return a single-element Tensor")
        g = _grads((out,), xs, None, True, strict, "hessian")
        return _unwrap(in_tuple, g)

    return jacobian(gradient, _unwrap(in_tuple, ins), create_graph, strict)


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), vᵀ H)``."""
    in_tuple, ins = _tuple(inputs, "inputs", "vhp")
    vs = _ones_for(ins, v, "vhp") if v is None else _tuple(v, "v", "vhp")[1]
    with enable_grad():
        ins = _prepare(ins, create_graph)
        out = func(*ins)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("vhp: the function must return a single-element Tensor")
        g = _grads((out,), ins, None, True, strict, "vhp")
        hv = _grads(g, ins, vs, create_graph, strict, "vhp")
    return (out if create_graph else out.detach()), _unwrap(in_tuple, hv)


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), H v)``; the Hessian is symmetric, so this equals ``vhp``."""
    return vhp(func, inputs, v, create_graph, strict)
