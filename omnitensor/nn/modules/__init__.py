"""``omnitensor.nn.modules``: torch's ``torch.nn.modules`` tree. Every layer lives in
:mod:`omnitensor.nn`; the submodules here (``module``, ``linear``, ``conv``, ``rnn``, ...) carry
torch's import paths (``from torch.nn.modules.loss import _Loss`` style code aside: private
base classes are not re-exported) and are imported on first use."""
from __future__ import annotations

import importlib
from typing import Any

SUBMODULES = ("activation", "batchnorm", "channelshuffle", "container", "conv", "distance", "dropout", "flatten", "fold", "instancenorm", "linear", "loss", "module", "normalization", "padding", "pixelshuffle", "pooling", "rnn", "sparse", "transformer", "upsampling", "utils")


def __getattr__(name: str) -> Any:
    if name in SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    from ... import nn
    try:
        return getattr(nn, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> list[str]:
    from ... import nn
    return sorted(set(SUBMODULES) | set(getattr(nn, "__all__", ())))
