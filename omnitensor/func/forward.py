"""Forward-mode transforms: ``jvp``, ``jacfwd``, ``linearize``, ``hessian``.

``jvp`` opens a dual level of its own (``omnitensor.autograd.forward_ad``), so it nests
with itself (``jvp(jvp(f))``), with ``vmap`` and with the reverse-mode transforms:
``hessian`` is ``jacfwd(jacrev(f))``, forward over reverse, as in torch. ``jacfwd`` takes
one ``jvp`` per input element (one-hot tangents); ``jacrev`` one backward per output
element: pick the one with the smaller side.
"""
from __future__ import annotations

from typing import Any, Callable

from ..core import forward_ad as _fw
from ..core.ops.creation import zeros, zeros_like
from ..core.ops.join import stack
from ..core.tensor import Tensor
from ..utils import _pytree as pytree
from ._common import argnums_tuple, split_aux
from .reverse import jacrev
from .vmap import RandomnessGuard

__all__ = ["jvp", "jacfwd", "linearize", "hessian"]


def _check_primals(primals: Any, tangents: Any, fn: str) -> tuple[list, list]:
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{fn}(f, primals, tangents): Expected primals to be a tuple. "
                           f"E.g. it should be valid to call f(*primals).")
    p_leaves, p_spec = pytree.tree_flatten(primals)
    t_leaves, t_spec = pytree.tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{fn}(f, primals, tangents): Expected primals and tangents to "
                           f"have the same python structure. For example, if primals is a "
                           f"tuple of 3 tensors, tangents also must be. Got primals with "
                           f"structure {p_spec} and tangents with structure {t_spec}")
    for p, t in zip(p_leaves, t_leaves):
        if not isinstance(p, Tensor) or not isinstance(t, Tensor):
            raise RuntimeError(f"{fn}(f, primals, tangents): Expected primals and tangents "
                               f"to only contain Tensors, got {type(p).__name__} and "
                               f"{type(t).__name__}")
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"{fn}(f, primals, tangents): Expected primals and tangents "
                               f"to have the same shape, got {tuple(p.shape)} and "
                               f"{tuple(t.shape)}")
    return p_leaves, t_leaves


def jvp(func: Callable, primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple:
    """``(func(*primals), J·tangents)`` (and ``aux``) by forward-mode AD; ``primals`` is a
    tuple of (pytrees of) tensors and ``tangents`` the same structure. ``strict`` refuses
    an output that does not depend on the primals (otherwise its tangent is zeros)."""
    p_leaves, t_leaves = _check_primals(primals, tangents, "jvp")
    level = _fw.enter_level()
    try:
        duals = [_fw.make_dual(p, t.clone(), level) for p, t in zip(p_leaves, t_leaves)]
        out, aux = split_aux(func(*pytree.tree_unflatten(duals, pytree.tree_structure(
            primals))), has_aux, "jvp")
        o_leaves, o_spec = pytree.tree_flatten(out)
        values, jvps = [], []
        for o in o_leaves:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"jvp(f, primals, tangents): Expected f(*primals) to be "
                                   f"a Tensor or a pytree of Tensors, got {type(o).__name__}")
            p, t = _fw.unpack_dual(o, level)
            if t is None and strict:
                raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f "
                                   "is independent of the inputs. This is not allowed with "
                                   "strict=True.")
            values.append(p)
            jvps.append(zeros_like(p) if t is None else t)
        if has_aux:
            aux = pytree.tree_map(lambda a: _fw.unpack_dual(a, level)[0], aux)
    finally:
        _fw.exit_level(level)
    result = (o_spec.unflatten(values), o_spec.unflatten(jvps))
    return result + (aux,) if has_aux else result


def linearize(func: Callable, *primals: Any) -> tuple[Any, Callable]:
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is J·tangents at ``primals``
    (each call runs the forward-mode pass again)."""
    p_leaves, p_spec = pytree.tree_flatten(primals)
    output = jvp(func, primals, p_spec.unflatten([zeros_like(p) for p in p_leaves]))[0]

    def jvp_fn(*tangents: Any) -> Any:
        return jvp(func, primals, tangents)[1]
    return output, jvp_fn


def jacfwd(func: Callable, argnums: Any = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """A function returning the Jacobian of ``func`` with respect to ``argnums`` by forward
    mode, one ``jvp`` per input element; shapes and nesting as :func:`jacrev`.
    ``randomness`` as :func:`vmap`'s (each column is one call of ``func``)."""
    guard = RandomnessGuard(randomness, "jacfwd")

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = argnums_tuple(argnums, len(args), "jacfwd")
        specs = [pytree.tree_flatten(args[a]) for a in nums]
        leaves = [t for ls, _ in specs for t in ls]

        def at(*diff: Any) -> Any:
            call = list(args)
            for a, d in zip(nums, diff):
                call[a] = d
            return func(*call, **kwargs)

        primals = tuple(args[a] for a in nums)
        columns, aux = [], None
        guard.start()
        for basis in _one_hot_bases(leaves) or [[zeros_like(t) for t in leaves]]:
            tangents = tuple(spec.unflatten(basis[s:s + len(ls)]) for (ls, spec), s in
                             zip(specs, _starts(specs)))
            with guard.call():
                res = jvp(at, primals, tangents, has_aux=has_aux)
            out_spec = pytree.tree_structure(res[0])
            columns.append(pytree.tree_leaves(res[1]))
            aux = res[2] if has_aux else None
        empty = not any(t.numel() for t in leaves)
        jac = out_spec.unflatten([_blocks(o_cols, leaves, specs, argnums, empty)
                                  for o_cols in zip(*columns)])
        return (jac, aux) if has_aux else jac
    return wrapper


def _starts(specs: list) -> list[int]:
    out, s = [], 0
    for ls, _ in specs:
        out.append(s)
        s += len(ls)
    return out


def _one_hot_bases(leaves: list[Tensor]) -> list[list[Tensor]]:
    """One list of tangents per input element: a one at that element, zeros elsewhere."""
    bases = []
    for j, t in enumerate(leaves):
        if not isinstance(t, Tensor) or t.dtype.kind not in "fc":
            raise RuntimeError(f"jacfwd: expected the differentiated arguments to be "
                               f"floating point Tensors, got "
                               f"{getattr(t, 'dtype', type(t).__name__)}")
        for k in range(t.numel()):
            basis = [zeros_like(u) for u in leaves]
            flat = zeros((t.numel(),), dtype=t.dtype, device=t.device)
            flat[k] = 1
            basis[j] = flat.reshape(t.shape)
            bases.append(basis)
    return bases


def _blocks(o_cols: tuple, leaves: list, specs: list, argnums: Any, empty: bool) -> Any:
    """The columns of one output, split per input leaf and shaped out.shape + in.shape."""
    out_shape = tuple(o_cols[0].shape)
    blocks, c = [], 0
    for t in leaves:
        n = 0 if empty else t.numel()
        cols = list(o_cols[c:c + n])
        c += n
        shape = out_shape + tuple(t.shape)
        blocks.append(stack(cols, dim=-1).reshape(shape) if cols else
                      zeros(shape, dtype=o_cols[0].dtype, device=o_cols[0].device))
    per_arg = tuple(spec.unflatten(blocks[s:s + len(ls)]) for (ls, spec), s in
                    zip(specs, _starts(specs)))
    return per_arg[0] if isinstance(argnums, int) else per_arg


def hessian(func: Callable, argnums: Any = 0) -> Callable:
    """The Hessian of scalar-valued ``func``: ``jacfwd(jacrev(func, argnums), argnums)``,
    forward over reverse as torch computes it."""
    return jacfwd(jacrev(func, argnums), argnums)
