"""What the transforms share: argnums, differentiable stand-ins for pytree arguments, aux
outputs, and gradients of one output."""
from __future__ import annotations

from typing import Any

from ..core import forward_ad as _fw
from ..core.engine import grad as _autograd_grad
from ..core.ops.creation import zeros_like
from ..core.tensor import Tensor
from ..utils import _pytree as pytree


def argnums_tuple(argnums: Any, nargs: int, fn: str) -> tuple[int, ...]:
    """``argnums`` (an int or a tuple of ints) as non-negative positions."""
    nums = (argnums,) if isinstance(argnums, int) else argnums
    if not isinstance(nums, tuple) or not nums:
        raise ValueError(f"{fn}: argnums must be an int or a non-empty tuple of ints, got "
                         f"{argnums!r}")
    for a in nums:
        if not isinstance(a, int) or isinstance(a, bool) or not -nargs <= a < nargs:
            raise ValueError(f"{fn}: Got argnums={argnums!r}, but only {nargs} positional "
                             f"input(s)")
    norm = tuple(a % nargs for a in nums)
    if len(set(norm)) != len(norm):
        raise ValueError(f"{fn}: argnums must not contain duplicates, got {argnums!r}")
    return norm


def in_reverse(t: Any) -> bool:
    """In the reverse graph (not merely carrying forward-AD tangents)."""
    return isinstance(t, Tensor) and t.requires_grad and not (
        t.grad_fn is not None and t.grad_fn._fw_only)


class Diff:
    """The arguments at ``nums`` replaced by differentiable stand-ins (call in grad
    mode): ``flat`` holds every stand-in leaf, ``nested`` says some argument was already
    in an outer reverse graph (an outer ``grad``/``jacrev``, or the user's autograd), so
    derivatives are built differentiable (``create_graph``)."""

    def __init__(self, args: list, nums: tuple, fn: str) -> None:
        self.flat: list[Tensor] = []
        self.specs: list[tuple[int, int, pytree.TreeSpec]] = []
        self.nested = False
        for a in nums:
            leaves, spec = pytree.tree_flatten(args[a])
            stand = []
            for t in leaves:
                if not isinstance(t, Tensor):
                    raise TypeError(f"{fn}: expected the differentiated argument(s) to be "
                                    f"Tensors or pytrees of Tensors, got "
                                    f"{type(t).__name__}")
                if t.dtype.kind not in "fc":
                    raise RuntimeError(f"{fn}: only Tensors of floating point dtype can "
                                       f"require gradients, got {t.dtype.name}")
                if in_reverse(t):
                    self.nested = True
                    stand.append(t.view_as(t))  # stays in the outer graph
                else:
                    stand.append(_fw.reverse_leaf(t))  # keeps forward-AD tangents
            self.specs.append((len(self.flat), len(stand), spec))
            self.flat += stand
            args[a] = spec.unflatten(stand)

    def rebuild(self, grads: list) -> tuple:
        """One gradient pytree per differentiated argument."""
        return tuple(spec.unflatten(grads[s:s + n]) for s, n, spec in self.specs)


def gradients(output: Tensor, inputs: list[Tensor], create_graph: bool,
              grad_output: Any = None) -> list[Tensor]:
    """d output / d inputs (zeros where unused); the output's tangents carry over."""
    if not in_reverse(output):
        return [zeros_like(t) for t in inputs]
    gs = _autograd_grad((output,), tuple(inputs),
                        grad_outputs=None if grad_output is None else (grad_output,),
                        retain_graph=True, create_graph=create_graph, allow_unused=True)
    return [zeros_like(t) if g is None else g for g, t in zip(gs, inputs)]


def split_aux(out: Any, has_aux: bool, fn: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{fn}(f, ...)(*args): output of function f should be a tuple: "
                           f"(output, aux) if has_aux is True")
    return out


def detach_tree(tree: Any) -> Any:
    """``tree`` out of the reverse graph (its forward-AD tangents kept)."""
    return pytree.tree_map(_fw.detach_reverse, tree)
