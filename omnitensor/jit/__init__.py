"""``omnitensor.jit``: trace a model into the graph ``omnitensor.compile`` captures, replay it,
save it as a self-contained program and load it on any device.

    traced = omnitensor.jit.trace(model, example_x)      # a module replaying the graph
    traced.save("model.otj")                             # graph JSON + safetensors, no pickle
    m = omnitensor.jit.load("model.otj", map_location="opencl:0")
    y = m(x.to("opencl:0"))

``script`` does not compile Python: it captures on the first call per signature and raises a
clear error naming data-dependent control flow (``if``/``while`` on a tensor, ``.item()``,
``.tolist()``) where TorchScript would have compiled it. See ``_traced`` for how shapes other
than the example's run, and for autograd. ``freeze`` and ``optimize_for_inference`` return
the module unchanged (the replay already runs without autograd or Python dispatch per op);
``ignore``/``unused``/``export`` decorators and ``Final`` behave as torch's do outside
TorchScript.
"""
from __future__ import annotations

from typing import Any, Callable, Final  # torch.jit.Final

from ._program import ProgramError
from ._traced import (ScriptFunction, ScriptModule, TracedModule, TracingError, is_tracing,
                      script, trace)
from ..futures import Future  # torch.jit.Future: what fork returns
from ._fork import fork, wait
from .serialize import load, save

__all__ = ["script", "trace", "trace_module", "save", "load", "freeze",
           "optimize_for_inference", "ignore", "unused", "export", "is_scripting",
           "is_tracing", "Final", "ScriptModule", "ScriptFunction", "TracedModule",
           "TracingError", "ProgramError", "annotate", "fork", "wait", "Future"]


def trace_module(mod: Any, inputs: dict, **kwargs: Any) -> Any:
    """torch.jit.trace_module with ``inputs={"forward": example}`` (other methods are not
    traced: a captured graph is one call)."""
    if not isinstance(inputs, dict) or set(inputs) != {"forward"}:
        raise NotImplementedError("omnitensor.jit.trace_module: only {'forward': "
                                  "example_inputs} is supported")
    return trace(mod, inputs["forward"], **kwargs)


def freeze(mod: Any, preserved_attrs: Any = None, optimize_numerics: bool = True) -> Any:
    """torch.jit.freeze: returns ``mod`` itself (weights are read at each call; the replay
    already skips autograd and per-op dispatch). Requires eval mode, as torch's does."""
    if not isinstance(mod, ScriptModule):
        raise TypeError("omnitensor.jit.freeze: expected a traced or scripted module")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval "
                           "mode. Please call .eval() on your module before freezing.")
    return mod


def optimize_for_inference(mod: Any, other_methods: Any = None) -> Any:
    """torch.jit.optimize_for_inference: :func:`freeze` after ``eval()``."""
    if isinstance(mod, ScriptModule) and mod.training:
        mod.eval()
    return freeze(mod)


def _mark(fn: Any = None, **_: Any) -> Any:
    if fn is None or not callable(fn):
        return lambda f: f  # used as @ignore(drop=True)
    return fn


ignore: Callable[..., Any] = _mark
unused: Callable[..., Any] = _mark
export: Callable[..., Any] = _mark


def annotate(the_type: Any, the_value: Any) -> Any:
    """torch.jit.annotate: the value itself."""
    return the_value


def is_scripting() -> bool:
    """False: code never runs as compiled TorchScript here (``script`` captures the Python
    call, so eager-only branches are the ones that run)."""
    return False


#: ``_overload``'s declarations by qualified name (torch's ``_overloaded_fns``)
_overloaded_fns: dict[str, list] = {}


def _overload(func: Callable) -> Callable:
    """torch.jit's ``@_overload``: records a typed declaration for TorchScript and returns
    it unchanged (in eager Python the undecorated definition that follows replaces it)."""
    name = f"{getattr(func, '__module__', '')}.{getattr(func, '__qualname__', func)}"
    _overloaded_fns.setdefault(name, []).append(func)
    return func


_overload_method = _overload  # the same, for methods
