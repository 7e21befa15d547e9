"""``omnitensor.func``: torch.func's function transforms, on omnitensor's reverse-mode autograd.

``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``,
``functional_call`` and ``vmap``, with torch.func's signatures (``argnums``, ``has_aux``, dict
and tuple arguments such as a parameter dict).

How, honestly:

* every transform runs the function once under autograd and differentiates the recorded
  graph (no tracing, no functorch levels). Transforms nest (``grad(grad(f))``,
  ``jacrev(jacrev(f))``): an input that already requires grad stays in its graph and the
  inner derivative is built with ``create_graph=True``;
* ``jvp`` and ``jacfwd`` are computed in reverse mode (``jvp`` by the exact double-vjp trick,
  ``jacfwd`` as ``jacrev``): same numbers as forward mode, different cost;
* ``jacrev`` takes one backward pass per output element;
* ``vmap`` is a Python loop over the mapped dimension that stacks the results — correct for
  functions of one example, not vectorized (no speed-up), and ``randomness`` other than the
  loop's natural "different" is refused.
"""
from __future__ import annotations

from typing import Any, Callable

from .core.engine import grad as _autograd_grad
from .core.grad_mode import enable_grad
from .core.tensor import Tensor

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
           "functional_call", "vmap"]


# ------------------------------------------------------------------ small pytrees
def _flatten(tree: Any) -> tuple[list[Tensor], Callable[[list], Any]]:
    """Leaves (tensors) of nested dict/list/tuple ``tree`` and a function rebuilding it."""
    if isinstance(tree, Tensor):
        return [tree], lambda leaves: leaves[0]
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(t) for t in tree]
        kind = type(tree)

        def rebuild_seq(leaves: list) -> Any:
            out, i = [], 0
            for (ls, fn) in parts:
                out.append(fn(leaves[i:i + len(ls)]))
                i += len(ls)
            return kind(out) if kind in (tuple, list) else kind(*out)
        return [leaf for ls, _ in parts for leaf in ls], rebuild_seq
    if isinstance(tree, dict):
        keys = list(tree)
        parts = [_flatten(tree[k]) for k in keys]

        def rebuild_dict(leaves: list) -> Any:
            out, i = {}, 0
            for k, (ls, fn) in zip(keys, parts):
                out[k] = fn(leaves[i:i + len(ls)])
                i += len(ls)
            return out
        return [leaf for ls, _ in parts for leaf in ls], rebuild_dict
    raise TypeError(f"omnitensor.func: expected tensors or dicts/lists/tuples of tensors, got "
                    f"{type(tree).__name__}")


def _prepare(leaves: list[Tensor]) -> tuple[list[Tensor], bool]:
    """Differentiable stand-ins for ``leaves``; True when some leaf is in an outer graph (a
    nested transform), which makes the inner derivative itself differentiable."""
    nested = any(t.requires_grad for t in leaves)
    out = []
    for t in leaves:
        if t.dtype.kind not in "fc":
            raise TypeError(f"omnitensor.func: can only differentiate with respect to floating "
                            f"point tensors, got {t.dtype.name}")
        out.append(t.view_as(t) if t.requires_grad else t.detach().requires_grad_(True))
    return out, nested


def _differentiable(args: list, nums: Any) -> tuple[list[Tensor], list, bool]:
    """Replace ``args[a]`` (a tensor or a tree of them) for each ``a`` in ``nums`` by the same
    tree of differentiable stand-ins (call in grad mode): (every stand-in, flat; ``(start,
    count, rebuild, nested)`` per argument; whether any argument is in an outer graph)."""
    flat: list[Tensor] = []
    rebuilds = []
    for a in nums:
        leaves, rebuild = _flatten(args[a])
        leaves, nested = _prepare(leaves)
        rebuilds.append((len(flat), len(leaves), rebuild, nested))
        flat += leaves
        args[a] = rebuild(leaves)
    return flat, rebuilds, any(r[3] for r in rebuilds)


def _gradients(output: Tensor, inputs: list[Tensor], create_graph: bool,
               grad_output: Any = None) -> list[Tensor]:
    from .core.ops.creation import zeros_like
    if not output.requires_grad:
        return [zeros_like(t) for t in inputs]
    gs = _autograd_grad((output,), tuple(inputs),
                        grad_outputs=None if grad_output is None else (grad_output,),
                        retain_graph=True, create_graph=create_graph, allow_unused=True)
    return [zeros_like(t) if g is None else (g if create_graph else g.detach())
            for g, t in zip(gs, inputs)]


def _argnums(argnums: Any, nargs: int, fn: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise ValueError(f"{fn}: argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int) or not -nargs <= a < nargs:
            raise ValueError(f"{fn}: argnums {argnums!r} is out of range for {nargs} "
                             f"positional argument(s)")
    return tuple(a % nargs for a in nums)


def _split_aux(out: Any, has_aux: bool, fn: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise ValueError(f"{fn}(..., has_aux=True): the function must return a tuple "
                         f"(output, aux)")
    return out


def _detach_tree(tree: Any) -> Any:
    if isinstance(tree, Tensor):
        return tree.detach()
    if isinstance(tree, (tuple, list)):
        return type(tree)(_detach_tree(t) for t in tree)
    if isinstance(tree, dict):
        return {k: _detach_tree(v) for k, v in tree.items()}
    return tree


# ---------------------------------------------------------------------- transforms
def grad_and_value(func: Callable, argnums: Any = 0, has_aux: bool = False) -> Callable:
    """A function returning ``(gradient, value)`` (``(gradient, (value, aux))`` with
    ``has_aux``) of scalar-valued ``func`` with respect to the arguments ``argnums``."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args), "grad")
        call_args = list(args)
        with enable_grad():
            flat, rebuilds, nested = _differentiable(call_args, nums)
            out, aux = _split_aux(func(*call_args, **kwargs), has_aux, "grad")
            if not isinstance(out, Tensor) or out.numel() != 1:
                raise RuntimeError(f"grad: the function must return a single-element Tensor, "
                                   f"got {type(out).__name__}"
                                   f"{'' if not isinstance(out, Tensor) else tuple(out.shape)}")
            gs = _gradients(out, flat, nested)
        grads = tuple(rebuild(gs[start:start + n]) for start, n, rebuild, _ in rebuilds)
        g = grads[0] if isinstance(argnums, int) else grads
        value = out if nested else out.detach()
        return (g, (value, aux if nested else _detach_tree(aux))) if has_aux else (g, value)
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
    """``(func(*primals), vjp_fn[, aux])``; ``vjp_fn(cotangents)`` returns one gradient per
    primal (a tuple), for cotangents shaped like the output."""
    args = list(primals)
    with enable_grad():
        flat, rebuilds, nested = _differentiable(args, range(len(args)))
        out, aux = _split_aux(func(*args), has_aux, "vjp")
    out_leaves, out_rebuild = _flatten(out)

    def vjp_fn(cotangents: Any) -> tuple:
        cots, _ = _flatten(cotangents)
        if len(cots) != len(out_leaves):
            raise ValueError(f"vjp_fn: expected {len(out_leaves)} cotangent(s) shaped like the "
                             f"output, got {len(cots)}")
        total: list[Any] = [None] * len(flat)
        with enable_grad():
            for o, c in zip(out_leaves, cots):
                if tuple(c.shape) != tuple(o.shape):
                    raise ValueError(f"vjp_fn: cotangent shape {tuple(c.shape)} does not match "
                                     f"the output shape {tuple(o.shape)}")
                gs = _gradients(o, flat, nested or c.requires_grad, c)
                total = [g if t is None else t + g for t, g in zip(total, gs)]
        return tuple(rebuild(total[s:s + n]) for s, n, rebuild, _ in rebuilds)

    value = out if nested else _detach_tree(out)
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def jvp(func: Callable, primals: Any, tangents: Any, *, has_aux: bool = False) -> tuple:
    """``(func(*primals), J·tangents)``, by the double-vjp trick (exact; see the module doc)."""
    from .core.ops.creation import zeros_like
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise TypeError("jvp: primals and tangents must be tuples (as torch.func.jvp)")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primal(s) but {len(tangents)} tangent(s)")
    out = vjp(func, *primals, has_aux=has_aux)
    value, vjp_fn = out[0], out[1]
    out_leaves, out_rebuild = _flatten(value)
    with enable_grad():
        us = [zeros_like(o).requires_grad_(True) for o in out_leaves]
        gs = vjp_fn(out_rebuild(us))  # linear in us
        g_leaves, _ = _flatten(gs)
        t_leaves, _ = _flatten(tangents)
        result = [zeros_like(o) for o in out_leaves]
        for g, t in zip(g_leaves, t_leaves):
            if tuple(g.shape) != tuple(t.shape):
                raise ValueError(f"jvp: tangent shape {tuple(t.shape)} does not match its "
                                 f"primal's {tuple(g.shape)}")
            if g.requires_grad:
                part = _gradients(g, us, t.requires_grad, t)
                result = [r + p for r, p in zip(result, part)]
    jv = out_rebuild(result)
    return (value, jv, out[2]) if has_aux else (value, jv)


def jacrev(func: Callable, argnums: Any = 0, *, has_aux: bool = False,
           chunk_size: Any = None) -> Callable:
    """A function returning the Jacobian of ``func`` with respect to ``argnums``: for each
    output, ``output.shape + input.shape``."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from .core.ops.join import stack
        nums = _argnums(argnums, len(args), "jacrev")
        call_args = list(args)
        with enable_grad():
            flat, rebuilds, nested = _differentiable(call_args, nums)
            out, aux = _split_aux(func(*call_args, **kwargs), has_aux, "jacrev")
            out_leaves, out_rebuild = _flatten(out)
            jac_per_out = []
            for o in out_leaves:
                o_flat = o.reshape(-1)
                rows = [_gradients(o_flat[k], flat, nested) for k in range(o_flat.shape[0])]
                blocks = []
                for j, t in enumerate(flat):
                    shape = tuple(o.shape) + tuple(t.shape)
                    if rows:
                        blocks.append(stack([r[j] for r in rows]).reshape(shape))
                    else:
                        from .core.ops.creation import zeros
                        blocks.append(zeros(shape, dtype=t.dtype, device=t.device))
                per_arg = tuple(rebuild(blocks[s:s + n]) for s, n, rebuild, _ in rebuilds)
                jac_per_out.append(per_arg[0] if isinstance(argnums, int) else per_arg)
        jac = out_rebuild(jac_per_out)
        return (jac, aux if nested else _detach_tree(aux)) if has_aux else jac
    return wrapper


def jacfwd(func: Callable, argnums: Any = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """The Jacobian, as :func:`jacrev` computes it (reverse mode: the same numbers)."""
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func: Callable, argnums: Any = 0) -> Callable:
    """The Hessian of scalar-valued ``func``: ``jacfwd(jacrev(func))`` as torch defines it."""
    return jacfwd(jacrev(func, argnums), argnums)


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = (),
                    kwargs: dict | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """Call ``module`` with some parameters/buffers replaced by the given tensors (by dotted
    name, as in ``state_dict``); the module is restored afterwards, even on error."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, dict):
        dicts = (dicts,)
    replace: dict[str, Tensor] = {}
    for d in dicts:
        for k, v in d.items():
            if k in replace:
                raise ValueError(f"functional_call: {k!r} appears in more than one dict")
            replace[k] = v
    if strict:
        names = {n for n, _ in module.named_parameters()} | {n for n, _ in
                                                             module.named_buffers()}
        missing, unexpected = names - set(replace), set(replace) - names
        if missing or unexpected:
            raise RuntimeError(f"functional_call(strict=True): missing {sorted(missing)}, "
                               f"unexpected {sorted(unexpected)}")
    saved = []
    try:
        for name, value in replace.items():
            owner_name, _, attr = name.rpartition(".")
            owner = module.get_submodule(owner_name) if owner_name else module
            for slot in (owner._parameters, owner._buffers):
                if attr in slot:
                    saved.append((slot, attr, slot[attr]))
                    slot[attr] = value  # the module's lookups read these dicts
                    break
            else:
                raise AttributeError(f"functional_call: {type(module).__name__} has no "
                                     f"parameter or buffer {name!r}")
        if not isinstance(args, tuple):
            args = (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for slot, attr, old in reversed(saved):
            slot[attr] = old


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: Any = None) -> Callable:
    """``func`` mapped over a dimension of its arguments, as a loop that stacks the results
    (not vectorized: see the module doc). ``in_dims``: an int, None (not mapped) or one such
    entry per positional argument; ``out_dims``: an int or one per output."""
    if randomness not in ("error", "different", "same"):
        raise ValueError(f"vmap: randomness must be 'error', 'different' or 'same', got "
                         f"{randomness!r}")
    if randomness == "same":
        raise NotImplementedError("vmap(randomness='same') is not supported: the loop draws "
                                  "different random numbers per example")

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from .core.ops.join import stack
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap: in_dims has {len(dims)} entries for {len(args)} "
                             f"positional argument(s)")
        sizes = {a.shape[d] for a, d in zip(args, dims)
                 if d is not None and isinstance(a, Tensor)}
        for a, d in zip(args, dims):
            if d is not None and not isinstance(a, Tensor):
                raise TypeError(f"vmap: in_dims={d} for a {type(a).__name__} argument; only "
                                f"tensors can be mapped (use None)")
        if not sizes:
            raise ValueError("vmap: at least one argument must be mapped (in_dims not None)")
        if len(sizes) != 1:
            raise ValueError(f"vmap: mapped dimensions have different sizes {sorted(sizes)}")
        n = sizes.pop()
        results = []
        for i in range(n):
            call = [a.select(d, i) if d is not None else a for a, d in zip(args, dims)]
            results.append(func(*call, **kwargs))
        first = results[0]
        if isinstance(first, Tensor):
            return stack(results, dim=out_dims if isinstance(out_dims, int) else out_dims[0])
        if isinstance(first, tuple):
            ods = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(first)
            return tuple(stack([r[k] for r in results], dim=ods[k]) for k in range(len(first)))
        raise TypeError(f"vmap: the function must return a Tensor or a tuple of Tensors, got "
                        f"{type(first).__name__}")
    return wrapper
