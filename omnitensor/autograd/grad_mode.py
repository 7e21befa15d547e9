"""torch's ``torch.autograd.grad_mode`` names; grad mode lives in ``omnitensor.core.grad_mode``
(every op reads it), this module is its public face."""
from ..core.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                              is_inference_mode_enabled, no_grad, set_grad_enabled)

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]
