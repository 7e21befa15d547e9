"""``torch.distributed.device_mesh``: omnitensor's process groups are flat (one world, or
``new_group`` subsets), so there is no n-D device mesh; the names exist for imports and
raise when a mesh is built."""
from __future__ import annotations

from typing import Any

__all__ = ["DeviceMesh", "init_device_mesh"]

_WHY = ("device meshes are not supported by omnitensor; use init_process_group and "
        "new_group")


class DeviceMesh:
    """An n-D arrangement of ranks (not supported: see the module doc)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(_WHY)


def init_device_mesh(*args: Any, **kwargs: Any) -> DeviceMesh:
    raise NotImplementedError(_WHY)
