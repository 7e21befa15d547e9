"""``omnitensor.data`` (also ``omnitensor.utils.data``): datasets, samplers, collation and
the DataLoader, with torch's names and semantics.

``DistributedSampler`` (``data/distributed.py``) is loaded on first use; any sampler that
yields indices (and has ``set_epoch`` to reshuffle per epoch) plugs into
``DataLoader(sampler=...)``.
"""
from __future__ import annotations

from typing import Any

from .dataloader import DataLoader, default_collate, default_convert, get_worker_info
from .datapipes import (DataChunk, DFIterDataPipe, IterDataPipe, MapDataPipe,
                        argument_validation, functional_datapipe,
                        guaranteed_datapipes_determinism, non_deterministic,
                        runtime_validation, runtime_validation_disabled)
from .dataset import (ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset,
                      random_split)
from .datasets_more import ChainDataset, StackDataset, _DatasetKind
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler, WeightedRandomSampler)

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info", "Dataset",
           "IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "random_split",
           "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler", "DistributedSampler", "ChainDataset",
           "StackDataset", "_DatasetKind", "IterDataPipe", "MapDataPipe", "DFIterDataPipe",
           "DataChunk", "functional_datapipe", "non_deterministic",
           "guaranteed_datapipes_determinism", "argument_validation", "runtime_validation",
           "runtime_validation_disabled"]


def __getattr__(name: str) -> Any:
    if name == "DistributedSampler":
        from .distributed import DistributedSampler
        return DistributedSampler
    raise AttributeError(f"module 'omnitensor.data' has no attribute {name!r}")
