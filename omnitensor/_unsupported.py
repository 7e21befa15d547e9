"""One place that says "not supported yet" for torch features omnitensor does not have.

The placeholder packages (``jit``, ``amp``, ``profiler``, and ``onnx.export``; ``onnx.load``
and ``utils.tensorboard`` are real) import cleanly, so scripts that merely import them run,
and every call that would have to *do* the feature raises :class:`NotImplementedError`
naming it, instead of pretending.
"""
from __future__ import annotations

from typing import Any, Callable, NoReturn


def not_supported(feature: str, hint: str = "") -> NoReturn:
    raise NotImplementedError(f"{feature} is not supported yet" + (f": {hint}" if hint else
                                                                    ""))


def unsupported(feature: str, hint: str = "") -> Callable[..., Any]:
    """A function that raises ``NotImplementedError("<feature> is not supported yet")``."""
    def fn(*args: Any, **kwargs: Any) -> NoReturn:
        not_supported(feature, hint)
    fn.__name__ = feature.rpartition(".")[2]
    fn.__qualname__ = fn.__name__
    fn.__doc__ = f"Not supported yet: raises NotImplementedError. {hint}".strip()
    return fn
