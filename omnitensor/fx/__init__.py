"""``torch.fx``: the names libraries use at import or to ask whether they are being traced
(``fx.wrap`` at module level in timm, ``is_fx_tracing`` in transformers, ``isinstance(x,
fx.Proxy)``). omnitensor captures programs with ``omnitensor.compile``/``jit.trace``, not
FX: nothing is ever being FX-traced, no value is a ``Proxy``, and building an FX graph
refuses with that alternative."""
from __future__ import annotations

from typing import Any

from . import experimental
from ._symbolic_trace import is_fx_symbolic_tracing, is_fx_tracing

__all__ = ["symbolic_trace", "wrap", "Proxy", "Node", "Graph", "GraphModule", "Tracer",
           "is_fx_tracing", "is_fx_symbolic_tracing", "experimental"]

_NO_FX = ("torch.fx is not supported: omnitensor captures programs with omnitensor.compile "
          "(torch.compile) and jit.trace / onnx.export, not FX graphs")


def wrap(fn_or_name: Any) -> Any:
    """Mark a function as a leaf for FX tracing: nothing to do here (no FX tracing)."""
    return fn_or_name


def symbolic_trace(root: Any, concrete_args: Any = None) -> Any:
    raise NotImplementedError(_NO_FX)


class _Refusing:
    """An FX class: no omnitensor value is an instance, and building one refuses."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(_NO_FX)


class Proxy(_Refusing):
    pass


class Node(_Refusing):
    pass


class Graph(_Refusing):
    pass


class GraphModule(_Refusing):
    pass


class Tracer(_Refusing):
    pass
