"""``omnitensor.compile`` and ``omnitensor.compiler``: torch's names, running eagerly.

Capture and fusion are not built yet. So that the many scripts that call
``model = torch.compile(model)`` (often behind a flag that defaults on) still run, with the
same results, ``compile`` returns the function or module itself, as torch's
``backend="eager"`` does, and warns once that nothing is captured or fused. It never claims
a speed-up: ``is_compiling()`` is False and the warning says what happens.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

__all__ = ["compile", "disable", "is_compiling", "reset", "allow_in_graph",
           "assume_constant_result"]

_WARNED = False
_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs")
_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def _warn_once() -> None:
    global _WARNED
    if not _WARNED:
        _WARNED = True
        warnings.warn("omnitensor.compile does not capture or fuse yet: the model runs "
                      "eagerly (same results, eager speed), as torch.compile(backend='eager')",
                      UserWarning, stacklevel=3)


def compile(model: Any = None, *, fullgraph: bool = False, dynamic: bool | None = None,  # noqa: A001
            backend: Any = "inductor", mode: str | None = None, options: dict | None = None,
            disable: bool = False) -> Any:
    """torch.compile's signature; returns ``model`` unchanged (eager). Usable as
    ``compile(fn)``, ``@compile`` and ``@compile(fullgraph=True)``. ``backend`` is
    validated but never called (a callable backend would receive a captured graph, and
    nothing is captured yet); ``fullgraph``, ``dynamic`` and ``options`` change nothing."""
    if mode not in _MODES:
        raise ValueError(f"compile: unknown mode {mode!r}; torch's modes are "
                         f"{', '.join(repr(m) for m in _MODES[1:])}")
    if isinstance(backend, str) and backend not in _BACKENDS:
        raise ValueError(f"compile: unknown backend {backend!r}; expected one of "
                         f"{', '.join(_BACKENDS)} or a callable")
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable)
    if not callable(model):
        raise TypeError(f"compile: expected a function or an nn.Module, got "
                        f"{type(model).__name__}")
    if not disable:
        _warn_once()
    return model


def disable(fn: Callable | None = None, recursive: bool = True) -> Any:
    """torch.compiler.disable: a no-op decorator here (nothing is ever compiled)."""
    return (lambda f: f) if fn is None else fn


def is_compiling() -> bool:
    """False: omnitensor never traces a function yet."""
    return False


def reset() -> None:
    """torch.compiler.reset: there are no compiled caches to clear."""


def allow_in_graph(fn: Callable) -> Callable:
    return fn


def assume_constant_result(fn: Callable) -> Callable:
    return fn
