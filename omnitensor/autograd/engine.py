"""The backward engine's public names; the engine lives in ``omnitensor.core.engine`` next to
the graph it replays (``Tensor.backward`` calls it), this module is its face."""
from ..core.engine import backward, current_pass_accumulates_all, grad, queue_callback

__all__ = ["backward", "grad", "queue_callback", "current_pass_accumulates_all"]
