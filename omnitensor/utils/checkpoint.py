"""``omnitensor.utils.checkpoint``: torch's path for activation checkpointing (implemented in
:mod:`omnitensor.autograd.checkpoint`)."""
from __future__ import annotations

from typing import Any

from ..autograd.checkpoint import checkpoint

__all__ = ["checkpoint", "checkpoint_sequential"]


def checkpoint_sequential(functions: Any, segments: int, input: Any, use_reentrant: Any = None,  # noqa: A002
                          **kwargs: Any) -> Any:
    """Run ``functions`` (a ``Sequential`` or a list of modules/callables) in ``segments``
    chunks, checkpointing every chunk but the last (torch's ``checkpoint_sequential``)."""
    fns = list(functions.children()) if hasattr(functions, "children") else list(functions)
    if segments < 1:
        raise ValueError(f"checkpoint_sequential: segments must be >= 1, got {segments}")
    size = max(1, len(fns) // segments)

    def run(start: int, end: int) -> Any:
        def f(x: Any) -> Any:
            for fn in fns[start:end]:
                x = fn(x)
            return x
        return f

    end = 0
    for start in range(0, size * (segments - 1), size):
        end = start + size
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)  # noqa: A001
    return run(end, len(fns))(input)
