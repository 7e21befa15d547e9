"""``_utils.collate``: ``default_collate`` and ``default_convert`` (from
:mod:`omnitensor.data.dataloader`)."""
from ....data.dataloader import default_collate, default_convert

__all__ = ["default_collate", "default_convert"]
