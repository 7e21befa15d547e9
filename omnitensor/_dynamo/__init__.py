"""``torch._dynamo`` under the torch alias: the parts libraries call to steer
``torch.compile``, bound to omnitensor's compiler (:mod:`omnitensor.compiler`).

``config`` is the compiler's config (``cache_size_limit``, ``suppress_errors``... torch's
names). The shape hints (``mark_dynamic`` & co.) change nothing: omnitensor's compile keys
every shape it sees and recompiles on a new one, which is what the hints allow.
"""
from __future__ import annotations

from typing import Any

from ..compiler import allow_in_graph, assume_constant_result, config, disable, is_compiling, reset
from . import eval_frame  # torch._dynamo.eval_frame, read as an attribute (libraries' isinstance)
from .eval_frame import OptimizedModule  # what compile(module) returns

__all__ = ["allow_in_graph", "assume_constant_result", "config", "disable", "is_compiling",
           "reset", "OptimizedModule", "mark_dynamic", "maybe_mark_dynamic", "mark_static", "mark_static_address",
           "is_dynamo_supported"]


def mark_dynamic(t: Any, index: Any, *, min: Any = None, max: Any = None) -> None:  # noqa: A002
    """A shape hint; omnitensor's compile keys shapes itself (see the module doc)."""


def maybe_mark_dynamic(t: Any, index: Any) -> None:
    """A shape hint; see :func:`mark_dynamic`."""


def mark_static(t: Any, index: Any = None) -> None:
    """A shape hint; see :func:`mark_dynamic`."""


def mark_static_address(t: Any, guard: bool = True) -> None:
    """An address hint for CUDA graphs, which omnitensor does not build."""


def is_dynamo_supported() -> bool:
    """True: ``torch.compile`` works (omnitensor's capture and replay)."""
    return True
