"""torch.compiler's public entry points: ``compile`` (torch.compile's signature, a
:class:`CompiledModule` for a module), ``disable``, ``is_compiling``, ``reset``,
``allow_in_graph`` and ``assume_constant_result``. The capture and replay they start live
in ``api.CompiledFunction``."""
from __future__ import annotations

import functools
from typing import Any, Callable

from ..core import capture_hooks
from .api import _ALL, CompiledFunction

__all__ = ["compile", "CompiledModule", "disable", "is_compiling", "reset", "allow_in_graph",
           "assume_constant_result"]

_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs")
_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


class CompiledModule:
    """What ``omnitensor.compile(module)`` returns (torch's ``OptimizedModule``): calls go
    through the compiled function of the module; attributes are the module's
    (``_orig_mod`` is the module itself)."""

    def __init__(self, module: Any, fullgraph: bool, dynamic: bool | None) -> None:
        self.__dict__["_orig_mod"] = module
        self.__dict__["_compiled"] = CompiledFunction(module, fullgraph, dynamic)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_orig_mod"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._orig_mod, name, value)

    def __repr__(self) -> str:
        return f"CompiledModule({self._orig_mod!r})"


def compile(model: Any = None, *, fullgraph: bool = False, dynamic: bool | None = None,  # noqa: A001
            backend: Any = "inductor", mode: str | None = None, options: dict | None = None,
            name: str | None = None, disable: bool = False, recompile_limit: int | None = None,
            isolate_recompiles: bool = False, shapes_spec: Any = None) -> Any:
    """torch.compile's signature: ``compile(fn)``, ``@compile``, ``@compile(fullgraph=True)``,
    ``compile(module)``. ``backend`` and ``mode`` are validated (every backend name gets the
    same capture and replay; a callable backend is not called); ``dynamic`` and
    ``shapes_spec`` are kept but shapes are always specialised (a new shape retraces);
    ``disable=True`` returns ``model`` itself. ``recompile_limit`` caps this call's traces
    (None: ``config.cache_size_limit``); every compile() call keeps its own traces, which
    is what ``isolate_recompiles=True`` asks of torch; ``name`` names the compiled region."""
    if recompile_limit is not None and (not isinstance(recompile_limit, int)
                                        or isinstance(recompile_limit, bool)
                                        or recompile_limit < 0):
        raise ValueError(f"compile: recompile_limit must be a non-negative int or None, got "
                         f"{recompile_limit!r}")
    if mode not in _MODES:
        raise ValueError(f"compile: unknown mode {mode!r}; torch's modes are "
                         f"{', '.join(repr(m) for m in _MODES[1:])}")
    if isinstance(backend, str) and backend not in _BACKENDS:
        raise ValueError(f"compile: unknown backend {backend!r}; expected one of "
                         f"{', '.join(_BACKENDS)} or a callable")
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, name=name, disable=disable,
                                 recompile_limit=recompile_limit,
                                 isolate_recompiles=isolate_recompiles, shapes_spec=shapes_spec)
    if not callable(model):
        raise TypeError(f"compile: expected a function or an nn.Module, got "
                        f"{type(model).__name__}")
    if disable:
        return model
    if hasattr(model, "named_parameters") and hasattr(model, "forward"):
        out: Any = CompiledModule(model, fullgraph, dynamic)
        compiled = out._compiled
    else:
        out = compiled = CompiledFunction(model, fullgraph, dynamic)
    compiled.recompile_limit, compiled.name = recompile_limit, name
    return out


def disable(fn: Callable | None = None, recursive: bool = True) -> Any:
    """torch.compiler.disable: ``fn`` runs eagerly; called inside a compiled function it is
    a graph break (an error with ``fullgraph=True``)."""
    if fn is None:
        return lambda f: disable(f, recursive)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        rec = capture_hooks.active()
        if rec is not None and hasattr(rec, "host_read"):
            rec.host_read(f"{getattr(fn, '__qualname__', fn)} is marked "
                          f"omnitensor.compiler.disable")
        return fn(*args, **kwargs)
    return wrapper


def is_compiling() -> bool:
    """True while a capture runs (inside the traced call of a compiled function)."""
    return capture_hooks.active() is not None


def reset() -> None:
    """torch.compiler.reset: forget every compiled function's captures."""
    for cf in list(_ALL):
        cf._reset()


def allow_in_graph(fn: Callable) -> Callable:
    """torch.compiler.allow_in_graph: every function's tensor work is captured already."""
    return fn


def assume_constant_result(fn: Callable) -> Callable:
    """torch.compiler.assume_constant_result: returns ``fn`` (its host reads still break
    the graph: a result assumed constant could be stale)."""
    return fn
