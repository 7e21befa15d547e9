"""``omnitensor.data`` (also ``omnitensor.utils.data``): datasets, samplers, collation and
the DataLoader, with torch's names and semantics.

``DistributedSampler`` (``data/distributed.py``) is loaded on first use; any sampler that
yields indices (and has ``set_epoch`` to reshuffle per epoch) plugs into
``DataLoader(sampler=...)``.
"""
from __future__ import annotations

from typing import Any

from .dataloader import DataLoader, default_collate, default_convert, get_worker_info
from .dataset import (ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset,
                      random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler, WeightedRandomSampler)

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info", "Dataset",
           "IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "random_split",
           "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler", "DistributedSampler"]


def __getattr__(name: str) -> Any:
    if name == "DistributedSampler":
        from .distributed import DistributedSampler
        return DistributedSampler
    raise AttributeError(f"module 'omnitensor.data' has no attribute {name!r}")
