"""The one refusal behind torch.distributed.checkpoint's storage and planner classes."""
from __future__ import annotations

from typing import Any

WHY = ("distributed checkpoints (sharded save/load through torch.distributed.checkpoint) "
       "are not supported by omnitensor; save the state dict with omnitensor.save on rank 0 "
       "(torch's zip format, readable by torch)")


class Refused:
    """A torch.distributed.checkpoint class whose instances cannot be made here."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(WHY)


def refused(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(WHY)
