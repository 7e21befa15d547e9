"""``torch.fx.experimental.proxy_tensor``: the tracing-mode query kornia imports; no
make_fx tracing runs here, so there is never a proxy mode."""
from __future__ import annotations

from typing import Any

__all__ = ["get_proxy_mode", "make_fx"]


def get_proxy_mode() -> None:
    """The active proxy-tensor tracing mode: never one here."""
    return None


def make_fx(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError("torch.fx.experimental.proxy_tensor.make_fx is not supported: "
                              "omnitensor captures programs with omnitensor.compile and "
                              "jit.trace, not FX graphs")
