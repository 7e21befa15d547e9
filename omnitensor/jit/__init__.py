"""``omnitensor.jit``: TorchScript is not supported yet. ``script``/``trace``/``save``/``load``
raise ``NotImplementedError``; the annotations scripts use inside models (``ignore``,
``unused``, ``export`` as decorators, ``is_scripting()``, ``Final``) behave as torch's do when
no scripting happens, because nothing is ever scripted here."""
from __future__ import annotations

from typing import Any, Callable, Final  # noqa: F401  (torch.jit.Final)

from .._unsupported import unsupported

__all__ = ["script", "trace", "trace_module", "save", "load", "freeze", "optimize_for_inference",
           "ignore", "unused", "export", "is_scripting", "is_tracing", "Final"]

_HINT = "run the model eagerly (omnitensor.compile is the planned capture path)"
script = unsupported("omnitensor.jit.script", _HINT)
trace = unsupported("omnitensor.jit.trace", _HINT)
trace_module = unsupported("omnitensor.jit.trace_module", _HINT)
save = unsupported("omnitensor.jit.save", "save the state_dict with omnitensor.save")
load = unsupported("omnitensor.jit.load", "TorchScript archives cannot be read")
freeze = unsupported("omnitensor.jit.freeze", _HINT)
optimize_for_inference = unsupported("omnitensor.jit.optimize_for_inference", _HINT)


def _mark(fn: Any = None, **_: Any) -> Any:
    if fn is None or not callable(fn):
        return lambda f: f  # used as @ignore(drop=True)
    return fn


ignore: Callable[..., Any] = _mark
unused: Callable[..., Any] = _mark
export: Callable[..., Any] = _mark


def is_scripting() -> bool:
    """False: code never runs under TorchScript here."""
    return False


def is_tracing() -> bool:
    return False
