"""``vmap``: a function mapped over a dimension of its (pytree) arguments.

omnitensor has no batching rules: ``vmap`` calls the function once per index of the mapped
dimension, on views of that slice (``x.select(dim, i)``), and stacks the results along
``out_dims``. Every function of one example therefore works, including ones torch's vmap
refuses (``.item()``, data-dependent Python), and it nests with itself and with every
other transform (``vmap(grad(f))`` for per-sample gradients); it is not vectorized, so it
brings no speed-up. ``randomness``: ``'different'`` draws fresh numbers per example (the
loop's own behaviour), ``'same'`` restarts the default generator for every example, and
``'error'`` raises when the function draws random numbers.
"""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Iterator

from ..core.ops.creation import zeros
from ..core.ops.join import stack
from ..core.ops.random import default_generator
from ..core.tensor import Tensor
from ..utils import _pytree as pytree

__all__ = ["vmap", "RandomnessGuard"]

_RANDOMNESS = ("error", "different", "same")


class RandomnessGuard:
    """torch's ``randomness`` flag over the default generator, for functions called once per
    example: ``start()`` before the first, ``with call():`` around each."""

    def __init__(self, randomness: str, fn: str) -> None:
        if randomness not in _RANDOMNESS:
            raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', "
                               f"or 'same'. Got {randomness}")
        self.randomness, self.fn = randomness, fn
        self._state: tuple[int, int] | None = None

    def start(self) -> None:
        self._state = (default_generator._seed, default_generator._counter)

    @contextlib.contextmanager
    def call(self) -> Iterator[None]:
        state = self._state
        if self.randomness == "same" and state is not None:
            default_generator._seed, default_generator._counter = state
        before = (default_generator._seed, default_generator._counter)
        yield
        if self.randomness == "error" and \
                (default_generator._seed, default_generator._counter) != before:
            raise RuntimeError(f"{self.fn}: called random operation while in randomness "
                               f"error mode. Please either use the 'same' or 'different' "
                               f"randomness flags on vmap or perform the randomness "
                               f"operation out of vmap")


def _broadcast_dims(dims: Any, tree: Any, spec: pytree.TreeSpec, what: str, fname: str,
                    ) -> list:
    """One entry of ``dims`` (an int/None, or a pytree prefix of ``tree``) per leaf."""
    if dims is None or isinstance(dims, int):
        return [dims] * spec.num_leaves
    try:
        d_leaves, d_spec = pytree.tree_flatten(dims)
        subtrees = d_spec.flatten_up_to(tree)
    except (ValueError, TypeError):
        raise ValueError(f"vmap({fname}, {what}={dims!r}, ...)(<inputs>): {what} is not "
                         f"compatible with the structure of `inputs`. {what} has structure "
                         f"{pytree.tree_structure(dims)} but inputs has structure "
                         f"{spec}.") from None
    out = []
    for d, sub in zip(d_leaves, subtrees):
        if d is not None and not isinstance(d, int):
            raise ValueError(f"vmap({fname}, {what}={dims!r}, ...): {what} must be an int, "
                             f"None or a pytree of them, got {type(d).__name__}")
        out += [d] * pytree.tree_structure(sub).num_leaves
    return out


def _batch_size(leaves: list, dims: list, fname: str, in_dims: Any) -> int:
    sizes = []
    for x, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(x, Tensor):
            raise ValueError(f"vmap({fname}, in_dims={in_dims!r}, ...)(<inputs>): Got "
                             f"in_dim={d} for an input but the input is of type "
                             f"{type(x)}. We cannot vmap over non-Tensor arguments, please "
                             f"use None as the respective in_dim")
        if not -x.ndim <= d < x.ndim:
            raise ValueError(f"vmap({fname}, in_dims={in_dims!r}, ...)(<inputs>): Got "
                             f"in_dim={d} for some input, but that input is a Tensor of "
                             f"dimensionality {x.ndim} so expected in_dim to satisfy "
                             f"-{x.ndim} <= in_dim < {x.ndim}.")
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError(f"vmap({fname}, in_dims={in_dims!r}, ...)(<inputs>): at least one "
                         f"input must be a Tensor mapped over a dimension (in_dim not None)")
    if len(set(sizes)) != 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _stack_outputs(results: list, out_dims: Any, fname: str) -> Any:
    spec = pytree.tree_structure(results[0])
    dims = _broadcast_dims(out_dims, results[0], spec, "out_dims", fname)
    per_example = [pytree.tree_flatten(r) for r in results]
    for _ls, s in per_example:
        if s != spec:
            raise ValueError(f"vmap({fname}, ...): the function returned outputs of different "
                             f"structures for different examples: {spec} and {s}")
    out = []
    for k, d in enumerate(dims):
        column = [ls[k] for ls, _ in per_example]
        if d is None:
            out.append(_unbatched(column, fname))
            continue
        if not all(isinstance(c, Tensor) for c in column):
            raise ValueError(f"vmap({fname}, ...): `{fname}` must only return Tensors, got "
                             f"type {type(column[0])}. Did you mean to set out_dims= to "
                             f"None for output?")
        out.append(stack(column, dim=d))
    return spec.unflatten(out)


def _unbatched(column: list, fname: str) -> Any:
    """An output with out_dim None: the same for every example (torch refuses a batched
    one)."""
    first = column[0]
    if isinstance(first, Tensor):
        for c in column[1:]:
            if c is not first and not (isinstance(c, Tensor) and c.shape == first.shape and
                                       bool((c == first).all())):
                raise ValueError(f"vmap({fname}, ...): `{fname}` can not return a "
                                 f"BatchedTensor when out_dim is None")
    return first


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """``func`` mapped over dimension ``in_dims`` of its positional arguments (an int/None
    for all, or a tuple with one int/None/pytree prefix per argument; keyword arguments are
    not mapped), results stacked along ``out_dims`` (an int/None or a pytree prefix of the
    output). ``chunk_size`` is accepted and changes nothing (examples run one by one)."""
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")
    if not (in_dims is None or isinstance(in_dims, (int, tuple))):
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims!r}, ...): expected `in_dims` "
                         f"to be int or a (potentially nested) tuple matching the structure "
                         f"of inputs, got: {type(in_dims)}.")
    guard = RandomnessGuard(randomness, "vmap")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        fname = _name(func)
        leaves, spec = pytree.tree_flatten(args)
        if isinstance(in_dims, tuple) and len(in_dims) != len(args):
            raise ValueError(f"vmap({fname}, in_dims={in_dims!r}, ...)(<inputs>): in_dims is "
                             f"not compatible with the structure of `inputs`. in_dims has "
                             f"structure {pytree.tree_structure(in_dims)} but inputs has "
                             f"structure {spec}.")
        dims = _broadcast_dims(in_dims, args, spec, "in_dims", fname)
        n = _batch_size(leaves, dims, fname, in_dims)
        guard.start()
        results = []
        for i in range(max(n, 1)):
            call = [x if d is None else _slice(x, d, i, n) for x, d in zip(leaves, dims)]
            with guard.call():
                results.append(func(*spec.unflatten(call), **kwargs))
        if n == 0:  # the structure and shapes came from a zero example: no rows
            return _empty(results[0], out_dims, fname)
        return _stack_outputs(results, out_dims, fname)
    return wrapper


def _slice(x: Tensor, d: int, i: int, n: int) -> Tensor:
    if n == 0:  # no example exists: a zero one gives the output's structure and shapes
        shape = tuple(s for k, s in enumerate(x.shape) if k != d % x.ndim)
        return zeros(shape, dtype=x.dtype, device=x.device)
    return x.select(d, i)


def _empty(result: Any, out_dims: Any, fname: str) -> Any:
    leaves, spec = pytree.tree_flatten(result)
    dims = _broadcast_dims(out_dims, result, spec, "out_dims", fname)
    out = []
    for r, d in zip(leaves, dims):
        if d is None or not isinstance(r, Tensor):
            out.append(r)
            continue
        shape = list(r.shape)
        shape.insert(d % (r.ndim + 1), 0)
        out.append(zeros(tuple(shape), dtype=r.dtype, device=r.device))
    return spec.unflatten(out)


def _name(func: Callable) -> str:
    return getattr(func, "__name__", type(func).__name__)
