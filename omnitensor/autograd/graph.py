"""``torch.autograd.graph``: the graph's node type, saved-tensor hooks
(``saved_tensors_hooks``, ``save_on_cpu``, ``disable_saved_tensors_hooks``), gradient
edges, ``increment_version`` and ``register_multi_grad_hook``.

Saved-tensor hooks act where every backward formula saves its tensors
(``core.graph.Node.save_for_backward``): inside the block each saved tensor is replaced by
``pack_hook(tensor)``, and backward reads ``unpack_hook(packed)`` instead, as torch's
``SavedVariable`` does (activation offloading, recomputation, compression).
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, NamedTuple, Sequence

from ..core.graph import Node, edge_of, saved_hooks
from ..core.hooks import RemovableHandle
from ..core.tensor import Tensor

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks", "increment_version", "register_multi_grad_hook"]


class GradientEdge(NamedTuple):
    """A node and which of its outputs: where a tensor's gradient enters the graph."""
    node: Any
    output_nr: int


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge through which gradients flow into ``tensor`` (its ``grad_fn``, or the
    leaf's gradient accumulator)."""
    if not tensor.requires_grad:
        raise RuntimeError("get_gradient_edge: it is not possible to get the gradient edge "
                           "for a Tensor that does not require gradients")
    node, output_nr = edge_of(tensor)  # type: ignore[misc]
    return GradientEdge(node, output_nr)


class saved_tensors_hooks:  # torch's name
    """Within the block, tensors saved for backward are stored as ``pack_hook(t)`` and
    restored with ``unpack_hook``."""

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self) -> "saved_tensors_hooks":
        if saved_hooks.disabled is not None:
            raise RuntimeError(saved_hooks.disabled)
        saved_hooks.stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc: Any) -> None:
        saved_hooks.stack.pop()


class save_on_cpu(saved_tensors_hooks):  # torch's name
    """Keep tensors saved for backward on the host, moving them back to their device when
    backward reads them (activation offloading). ``pin_memory`` is accepted; host copies
    are ordinary host memory (see the README on page-locked memory)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t: Tensor) -> tuple[Any, Tensor]:
            return t.device, t.detach().cpu() if t.device.type != "cpu" else t.detach()

        def unpack(packed: tuple[Any, Tensor]) -> Tensor:
            device, host = packed
            return host.to(device)
        super().__init__(pack, unpack)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Within the block, entering ``saved_tensors_hooks`` raises ``error_message``."""
    previous = saved_hooks.disabled
    saved_hooks.disabled = error_message
    try:
        yield
    finally:
        saved_hooks.disabled = previous


def increment_version(tensor: Tensor | Sequence[Tensor]) -> None:
    """Mark ``tensor`` as modified in place (its version counter moves on), so backward
    formulas that saved it notice."""
    for t in (tensor if isinstance(tensor, (list, tuple)) else (tensor,)):
        t._bump_version()


def register_multi_grad_hook(tensors: Sequence[Tensor], fn: Callable[..., Any], *,
                             mode: str = "all") -> RemovableHandle:
    """Call ``fn`` once per backward with the gradients of ``tensors``: ``mode='all'``
    after every one of them that gets a gradient has it (``fn(grads)``, None for the
    others), ``mode='any'`` on the first one (``fn(grad)``)."""
    if mode not in ("all", "any"):
        raise ValueError(f"register_multi_grad_hook: mode must be 'all' or 'any', got {mode!r}")
    tensors = list(tensors)
    state: dict[str, Any] = {"grads": [None] * len(tensors), "seen": 0, "fired": False}
    handles = []

    def make(i: int) -> Callable[[Tensor], None]:
        def hook(grad: Tensor) -> None:
            if mode == "any":
                if not state["fired"]:
                    state["fired"] = True
                    fn(grad)
                return
            state["grads"][i] = grad
            state["seen"] += 1
            if state["seen"] == sum(t.requires_grad for t in tensors):
                grads, state["grads"], state["seen"] = state["grads"], [None] * len(tensors), 0
                fn(tuple(grads))
        return hook

    for i, t in enumerate(tensors):
        if t.requires_grad:
            handles.append(t.register_hook(make(i)))

    return _Handles(handles)


class _Handles(RemovableHandle):
    """One handle removing several hooks."""

    def __init__(self, handles: list) -> None:
        super().__init__(None, None)
        self._handles = handles

    def remove(self) -> None:
        for h in self._handles:
            h.remove()
