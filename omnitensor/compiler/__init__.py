"""``omnitensor.compiler`` (torch.compiler) and ``omnitensor.compile`` (torch.compile).

Modules, one job each: ``ir`` (the captured graph's dataclasses, shared with fusion, jit
and onnx), ``capture`` (the recorder: ``trace``), ``guards`` (what a call reads, its guard
key), ``replay`` (plans and the interpreter), ``api`` (the compiled function), ``frontend``
(``compile`` and torch.compiler's other entry points). ``api``'s module docstring says what
is captured and when a call runs eagerly.
"""
from __future__ import annotations

from .api import CompiledFunction, config
from .frontend import (CompiledModule, allow_in_graph, assume_constant_result, compile,
                       disable, is_compiling, reset)
from .capture import Unsupported, trace

__all__ = ["compile", "disable", "is_compiling", "reset", "allow_in_graph",
           "assume_constant_result", "config", "CompiledFunction", "CompiledModule",
           "Unsupported", "trace"]
