"""Reverse-mode transforms: ``grad``, ``grad_and_value``, ``vjp``, ``jacrev``.

Each runs the function once under autograd on stand-ins of the differentiated arguments
and differentiates the recorded graph. They nest with each other (an argument already in
a reverse graph stays in it and the derivative is built with ``create_graph``) and with
the forward-mode transforms (the stand-ins keep their forward-AD tangents, and the backward
formulas propagate them: ``jacfwd(jacrev(f))``, ``jvp(grad(f), ...)``).
"""
from __future__ import annotations

from typing import Any, Callable

from ..core.grad_mode import enable_grad
from ..core.ops.creation import zeros
from ..core.ops.join import stack
from ..core.tensor import Tensor
from ..utils import _pytree as pytree
from ._common import Diff, argnums_tuple, detach_tree, gradients, split_aux

__all__ = ["grad", "grad_and_value", "vjp", "jacrev"]


def grad_and_value(func: Callable, argnums: Any = 0, has_aux: bool = False) -> Callable:
    """A function returning ``(gradient, value)`` of scalar-valued ``func`` with respect to
    the arguments ``argnums`` (``(gradient, (value, aux))`` with ``has_aux``); a gradient
    has its argument's pytree structure, a tuple of them for a tuple ``argnums``."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = argnums_tuple(argnums, len(args), "grad_and_value")
        call = list(args)
        with enable_grad():
            diff = Diff(call, nums, "grad_and_value")
            out, aux = split_aux(func(*call, **kwargs), has_aux, "grad_and_value")
            if not isinstance(out, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(out).__name__}")
            if out.ndim != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {out.ndim} dims. Maybe "
                                   f"you wanted to use the vjp or jacrev APIs instead?")
            gs = gradients(out, diff.flat, diff.nested)
        grads = diff.rebuild(gs)
        g = grads[0] if isinstance(argnums, int) else grads
        if not diff.nested:
            out, aux = detach_tree(out), detach_tree(aux)
        return (g, (out, aux)) if has_aux else (g, out)
    return wrapper


def grad(func: Callable, argnums: Any = 0, has_aux: bool = False) -> Callable:
    """A function returning the gradient of scalar-valued ``func`` (``(gradient, aux)``
    with ``has_aux``)."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``(func(*primals), vjp_fn)`` (and ``aux`` with ``has_aux``): ``vjp_fn(cotangents)``,
    cotangents shaped like the output pytree, returns one gradient pytree per primal."""
    args = list(primals)
    with enable_grad():
        diff = Diff(args, tuple(range(len(args))), "vjp")
        out, aux = split_aux(func(*args), has_aux, "vjp")
    out_leaves, out_spec = pytree.tree_flatten(out)
    for o in out_leaves:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has "
                               f"only Tensors or pytrees of Tensors as outputs, got "
                               f"{type(o).__name__}")

    def vjp_fn(cotangents: Any) -> tuple:
        cots, cot_spec = pytree.tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{cot_spec}, primal output: {out_spec}")
        total: list[Any] = [None] * len(diff.flat)
        with enable_grad():
            for o, c in zip(out_leaves, cots):
                if not isinstance(c, Tensor) or tuple(c.shape) != tuple(o.shape):
                    raise RuntimeError(f"vjp_fn: a cotangent has shape "
                                       f"{tuple(getattr(c, 'shape', ()))} but its output "
                                       f"has shape {tuple(o.shape)}")
                gs = gradients(o, diff.flat, diff.nested or c.requires_grad, c)
                total = [g if t is None else t + g for t, g in zip(total, gs)]
        if not out_leaves:
            total = [zeros(t.shape, dtype=t.dtype, device=t.device) for t in diff.flat]
        return diff.rebuild(total)

    value = out if diff.nested else detach_tree(out)
    if has_aux:
        return value, vjp_fn, aux if diff.nested else detach_tree(aux)
    return value, vjp_fn


def jacrev(func: Callable, argnums: Any = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable:
    """A function returning the Jacobian of ``func`` with respect to ``argnums``, by one
    backward pass per output element: for each output leaf and input leaf, a tensor of
    shape ``output.shape + input.shape``, nested as (output pytree) of (argnums) of
    (input pytree). ``chunk_size`` is accepted (the passes run one by one anyway)."""
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"jacrev: `chunk_size` should be greater than 0, got {chunk_size!r}")

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = argnums_tuple(argnums, len(args), "jacrev")
        call = list(args)
        with enable_grad():
            diff = Diff(call, nums, "jacrev")
            out, aux = split_aux(func(*call, **kwargs), has_aux, "jacrev")
            out_leaves, out_spec = pytree.tree_flatten(out)
            per_out = [_jacobian_rows(o, diff) for o in out_leaves]
        jac = out_spec.unflatten([p[0] if isinstance(argnums, int) else p for p in per_out])
        if not diff.nested:
            jac, aux = detach_tree(jac), detach_tree(aux)
        return (jac, aux) if has_aux else jac
    return wrapper


def _jacobian_rows(o: Any, diff: Diff) -> tuple:
    """d o / d (every stand-in), one backward per element of ``o``, per argument."""
    if not isinstance(o, Tensor):
        raise RuntimeError(f"jacrev(f, ...)(*args): Expected f to be a function that has only "
                           f"Tensors or pytrees of Tensors as outputs, got {type(o).__name__}")
    flat = o.reshape(-1)
    rows = [gradients(flat[k], diff.flat, diff.nested) for k in range(flat.shape[0])]
    blocks = []
    for j, t in enumerate(diff.flat):
        shape = tuple(o.shape) + tuple(t.shape)
        blocks.append(stack([r[j] for r in rows]).reshape(shape) if rows else
                      zeros(shape, dtype=t.dtype, device=t.device))
    return diff.rebuild(blocks)
