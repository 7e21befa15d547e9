"""``omnitensor.compiler`` (torch.compiler) and ``omnitensor.compile`` (torch.compile).

Modules, one job each: ``ir`` (the captured graph's dataclasses, shared with fusion, jit
and onnx), ``capture`` (the recorder: ``trace``), ``guards`` (what a call reads, its guard
key), ``replay`` (plans and the interpreter), ``api`` (``compile`` and the compiled
function). See docs in ``api``'s module docstring for what is captured and when a call
runs eagerly.
"""
from __future__ import annotations

from .api import (CompiledFunction, CompiledModule, allow_in_graph, assume_constant_result,
                  compile, config, disable, is_compiling, reset)
from .capture import Unsupported, trace

__all__ = ["compile", "disable", "is_compiling", "reset", "allow_in_graph",
           "assume_constant_result", "config", "CompiledFunction", "CompiledModule",
           "Unsupported", "trace"]
