"""``torch._dynamo.eval_frame``: where torch defines ``OptimizedModule``, the type of
``torch.compile(module)`` (here :class:`omnitensor.compiler.frontend.CompiledModule`)."""
from __future__ import annotations

from ..compiler.frontend import CompiledModule as OptimizedModule

__all__ = ["OptimizedModule"]
