"""``torch.distributed.constants``: the default process-group timeouts (one value,
:data:`omnitensor.distributed.group.DEFAULT_TIMEOUT_S`, as a ``timedelta``)."""
from __future__ import annotations

from datetime import timedelta

from .group import DEFAULT_TIMEOUT_S

__all__ = ["default_pg_timeout", "default_pg_nccl_timeout"]

default_pg_timeout = timedelta(seconds=DEFAULT_TIMEOUT_S)
_DEFAULT_PG_TIMEOUT = default_pg_timeout
#: torch's NCCL default: None means "use default_pg_timeout" (its C++ constant is unset here)
default_pg_nccl_timeout: timedelta | None = None
