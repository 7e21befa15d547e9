"""One place that says "not supported yet" for torch features omnitensor does not have.

A torch name omnitensor does not implement (today ``onnx.dynamo_export``, torch's deprecated
exporter; ``onnx.export`` is real) still imports cleanly, so scripts that merely import it
run, and a call that would have to *do* the feature raises :class:`NotImplementedError`
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
