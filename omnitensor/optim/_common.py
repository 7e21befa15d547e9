"""Small helpers shared by the optimizers in adadelta/adamax/nadam/radam/asgd/rprop/lbfgs.

Step counts (and other per-parameter scalars such as NAdam's ``mu_product``) are kept as
Python numbers, so no update needs a device-to-host synchronization; a state dict loaded
from torch holds 0-d tensors there, which :func:`scalar` reads back as numbers.
"""
from __future__ import annotations

from typing import Any

__all__ = ["scalar", "check_ranges", "weight_decay", "adam_moments", "IGNORED_FLAGS"]

#: torch's implementation-selection flags. They are stored in each param group (so state
#: dicts have torch's layout) but change nothing here: every update is one formula written
#: with in-place Tensor ops; there is no multi-tensor kernel (``foreach``), no CUDA-graph
#: capture (``capturable``) and no autograd through the update (``differentiable``).
IGNORED_FLAGS = ("foreach", "capturable", "differentiable")


def scalar(value: Any) -> float:
    """A state scalar as a Python float (a 0-d tensor from a loaded state dict included)."""
    return float(value.item()) if hasattr(value, "item") else float(value)


def check_ranges(**values: float) -> None:
    """``ValueError`` naming the first negative option (torch's messages)."""
    for name, v in values.items():
        if v < 0.0:
            raise ValueError(f"Invalid {name.replace('_', ' ')}: {v}")


def weight_decay(p: Any, g: Any, lr: float, wd: float, decoupled: bool) -> Any:
    """torch's weight decay, the gradient to use: decoupled (AdamW/NAdamW/RAdamW) shrinks
    ``p`` in place by ``1 - lr * wd`` and keeps ``g``; otherwise L2 adds ``wd * p`` to ``g``."""
    if not wd:
        return g
    if decoupled:
        p.mul_(1 - lr * wd)
        return g
    return g + p * wd


def adam_moments(m: Any, v: Any, g: Any, b1: float, b2: float) -> None:
    """Adam's moment estimates in place (torch's form): ``m`` moves ``1 - b1`` of the way to
    ``g``; ``v = b2 v + (1 - b2) g^2``."""
    m.lerp_(g, 1 - b1)
    v.mul_(b2).addcmul_(g, g, value=1 - b2)
