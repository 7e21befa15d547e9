"""``torch.autograd.NestedIOFunction``: torch's legacy Function whose instances are called
directly, with inputs and outputs nested in lists and tuples.

A subclass defines the instance methods ``forward_extended(*inputs)`` and
``backward_extended(*grad_outputs)``; ``fn = MyFn(); out = fn(x, [y, z])`` calls
``forward_extended`` with the same nesting (tensors detached, as torch's ``.data``) and
returns its outputs in their nesting; ``backward_extended`` receives the gradients nested
as the outputs and returns one gradient (or None) per input, nested as the inputs.
Inside them ``self.save_for_backward(...)`` (nested too), ``self.saved_tensors``,
``self.needs_input_grad`` and ``self.mark_non_differentiable(...)`` work as in torch.

Built on :class:`~omnitensor.autograd.Function`: the call flattens the tensors and runs one
``Function.apply`` whose static forward and backward call this instance's methods. torch's
own class fails on its first call in torch 2.x (it calls the removed ``_do_forward`` of its
base), so its documented contract above is what is matched. ``mark_dirty`` is recorded
(``dirty_tensors``) but changes nothing: omnitensor's ``Function`` has no in-place outputs.
"""
from __future__ import annotations

from typing import Any, Iterator

from ..core.tensor import Tensor
from .function import Function

__all__ = ["NestedIOFunction"]


def _flat(obj: Any, allow_none: bool = False) -> Iterator[Any]:
    """The tensors (and Nones, when ``allow_none``) of nested lists/tuples, in order."""
    if isinstance(obj, Tensor) or (allow_none and obj is None):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _flat(o, allow_none)
    else:
        kinds = "Tensors or None" if allow_none else "Tensors"
        raise ValueError(f"Auto nesting doesn't know how to process an input object of type "
                         f"{type(obj).__name__}. Accepted types: {kinds}, or lists/tuples "
                         f"of them")


def _unflatten(flat: Any, proto: Any) -> Any:
    """``flat``'s items in the nesting of ``proto`` (lists/tuples of tensors)."""
    items = iter(flat)

    def build(p: Any) -> Any:
        if isinstance(p, (list, tuple)):
            return type(p)(build(o) for o in p)
        return next(items)
    return build(proto)


class _Flat(Function):
    """One call of a NestedIOFunction instance (``owner``) on its flattened tensors."""

    @staticmethod
    def forward(ctx: Any, owner: "NestedIOFunction", *flat_in: Tensor) -> Any:
        owner._ctx = ctx
        nested = _unflatten((t.detach() for t in flat_in), owner._nested_input)
        result = owner.forward_extended(*nested)
        owner._nested_output = result
        if owner.to_save:
            ctx.save_for_backward(*owner.to_save)
        if owner.non_differentiable:
            ctx.mark_non_differentiable(*owner.non_differentiable)
        return tuple(_flat(result))

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        owner = ctx.owner
        result = owner.backward_extended(*_unflatten(grads, owner._nested_output))
        if not isinstance(result, tuple):
            result = (result,)
        return (None,) + tuple(_flat(result, allow_none=True))


class NestedIOFunction:
    """Legacy instance-method Function with nested inputs and outputs (see the module doc).
    Kept, as in torch, for backward compatibility: write new ops with ``Function``."""

    to_save: tuple = ()
    non_differentiable: tuple = ()
    dirty_tensors: tuple = ()
    _ctx: Any = None
    _nested_input: tuple = ()
    _nested_output: Any = None
    _to_save_nested: tuple = ()

    def __call__(self, *input: Any) -> Any:  # noqa: A002 - torch's name
        self._nested_input = input
        self.to_save, self.non_differentiable = (), ()
        out = _Flat.apply(self, *_flat(input))
        self._ctx.owner = self  # the graph node's way back to this instance's backward
        del self._nested_input
        flat_out = out if isinstance(out, tuple) else (out,)
        return _unflatten(flat_out, self._nested_output)

    def forward_extended(self, *input: Any) -> Any:  # noqa: A002 - torch's name
        """User defined forward: the nested outputs of the nested (detached) inputs."""
        raise NotImplementedError

    def backward_extended(self, *grad_output: Any) -> Any:
        """User defined backward: one gradient (or None) per input, nested as the inputs."""
        raise NotImplementedError

    def save_for_backward(self, *args: Any) -> None:
        """Save (nested) tensors for ``backward_extended``."""
        self.to_save = tuple(_flat(args))
        self._to_save_nested = args

    @property
    def saved_tensors(self) -> Any:
        """The saved tensors, nested as given to :meth:`save_for_backward`."""
        return _unflatten(self._ctx.saved_tensors, self._to_save_nested)

    @property
    def needs_input_grad(self) -> tuple:
        """Whether each (flattened) tensor input needs a gradient."""
        return self._ctx.needs_input_grad[1:]

    def mark_non_differentiable(self, *args: Any, **kwargs: Any) -> None:
        """Outputs (nested) that have no gradient."""
        self.non_differentiable = tuple(_flat((args, tuple(kwargs.values()))))

    def mark_dirty(self, *args: Any, **kwargs: Any) -> None:
        """Recorded as ``dirty_tensors`` (no effect: see the module doc)."""
        self.dirty_tensors = tuple(_flat((args, tuple(kwargs.values()))))
