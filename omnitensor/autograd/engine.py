"""The backward engine's public names; the engine lives in ``omnitensor.core.engine`` next to
the graph it replays (``Tensor.backward`` calls it), this module is its face: torch's full
signatures of ``backward`` and ``grad`` (the deprecated ``grad_variables`` and
``only_inputs``, and ``is_grads_batched``) over the core engine."""
from __future__ import annotations

import warnings
from typing import Any

from ..core import engine as _engine
from ..core.engine import current_pass_accumulates_all, queue_callback
from ..core.tensor import Tensor

__all__ = ["backward", "grad", "queue_callback", "current_pass_accumulates_all"]


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, grad_variables: Any = None,
             inputs: Any = None) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves (of ``inputs``
    only, when given). ``grad_variables`` is torch's deprecated name of
    ``grad_tensors``."""
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.",
                      FutureWarning, stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments "
                               "both passed to `backward()`. Please only use "
                               "`grad_tensors`.")
        grad_tensors = grad_variables
    _engine.backward(tensors, grad_tensors, retain_graph, create_graph, inputs)


def _tuple(x: Any) -> tuple:
    return (x,) if isinstance(x, Tensor) or x is None else tuple(x)


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None,
         retain_graph: bool | None = None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple:
    """The gradients of ``outputs`` with respect to ``inputs`` (nothing is accumulated
    into ``.grad``). ``create_graph=True`` makes them differentiable (higher order).

    ``is_grads_batched=True``: the first dimension of every ``grad_outputs`` tensor is a
    batch of vectors, and each gradient gets the same leading dimension (one
    vector-Jacobian product per vector; torch vmaps them, here they run one after the
    other on the retained graph)."""
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to "
                      "True). To accumulate gradient for other parts of the graph, please "
                      "use torch.autograd.backward.", FutureWarning, stacklevel=2)
    if not is_grads_batched:
        return _engine.grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                            allow_unused, materialize_grads)
    gos = _tuple(grad_outputs)
    batched = all(isinstance(g, Tensor) and g.ndim > 0 for g in gos)
    sizes = {g.shape[0] for g in gos} if batched else set()
    if not gos or len(sizes) != 1:
        raise RuntimeError("If `is_grads_batched=True`, we interpret the first dimension of "
                           "each grad_output as the batch dimension: every grad_output must "
                           "be a tensor with the same size in dimension 0")
    (n,) = sizes
    keep = create_graph if retain_graph is None else retain_graph
    per: list[tuple] = []
    for b in range(n):
        per.append(_engine.grad(outputs, inputs, tuple(g[b] for g in gos),
                                True if b < n - 1 else keep, create_graph, allow_unused,
                                materialize_grads))
    from ..core.ops.join import stack
    return tuple(None if col[0] is None else stack(list(col)) for col in zip(*per))
