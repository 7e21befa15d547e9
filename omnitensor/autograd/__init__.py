"""Reverse-mode automatic differentiation with PyTorch semantics, shared by every backend.

The machinery lives in core, one home for it: ops record nodes as they run
(``core/graph.py``), the engine replays them (``core/engine.py``) and grad mode is read from
``core/grad_mode.py``. This package is its public face (``backward``, ``grad`` with
``create_graph`` for higher order, ``queue_callback``, the grad-mode switches) plus what is
built on it: ``Function`` for custom ops, ``gradcheck``/``gradgradcheck``, ``checkpoint``
and ``detect_anomaly``.
"""
from ..core.graph import Node
from .anomaly import (detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled,
                      set_detect_anomaly)
from .checkpoint import checkpoint
from .engine import backward, grad, queue_callback
from .function import Function, FunctionCtx, once_differentiable
from .nested_io import NestedIOFunction
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                        is_inference_mode_enabled, is_multithreading_enabled, no_grad,
                        set_grad_enabled, set_multithreading_enabled)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from . import forward_ad, functional, grad_mode  # torch.autograd.forward_ad, ...
from .variable import Variable

__all__ = [
    "Node", "backward", "grad", "queue_callback", "Function", "FunctionCtx", "once_differentiable", "no_grad",
    "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
    "is_inference_mode_enabled", "gradcheck", "gradgradcheck", "GradcheckError", "checkpoint",
    "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "forward_ad", "functional",
    "grad_mode",
    "Variable", "set_multithreading_enabled", "is_multithreading_enabled",
    "is_anomaly_check_nan_enabled", "NestedIOFunction",
]
