"""``torch.distributed.checkpoint.default_planner``: not supported (see ``_unsupported``)."""
from ._unsupported import Refused

__all__ = ["DefaultLoadPlanner", "DefaultSavePlanner"]


class DefaultLoadPlanner(Refused):
    pass


class DefaultSavePlanner(Refused):
    pass
