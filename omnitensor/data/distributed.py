"""``DistributedSampler``: each rank iterates its own share of a dataset (torch's).

Works with any dataset that has ``__len__`` (a DataLoader's ``sampler=``, or plain
iteration). Every rank draws the same permutation (seeded with ``seed + epoch``) and takes
every ``num_replicas``-th index starting at its rank, so the shares are disjoint and cover
the dataset. Unless ``drop_last``, the index list is padded by repeating its beginning so
that every rank gets the same number of samples (ranks must run the same number of steps,
or collectives would wait for a rank that finished); with ``drop_last`` the tail that
does not divide evenly is dropped instead. Call ``set_epoch(epoch)`` at the start of
each epoch, or every epoch repeats the same order.

The permutation comes from NumPy's PCG64 (``numpy.random.default_rng``), so it is the same
on every rank and device, but not the same order as torch's sampler.
"""
from __future__ import annotations

import math
from typing import Any, Iterator

import numpy as np

from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Indices of this rank's share of ``dataset``.

    ``num_replicas``/``rank`` default to the default process group's world size and rank
    (``omnitensor.dist.init_process_group`` first), or may be given explicitly."""

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from .. import distributed as dist
            if not dist.is_initialized():
                raise RuntimeError("DistributedSampler needs num_replicas and rank, or an "
                                   "initialised process group (dist.init_process_group())")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if num_replicas < 1:
            raise ValueError(f"num_replicas must be >= 1, got {num_replicas}")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = int(num_replicas)
        self.rank = int(rank)
        self.epoch = 0
        self.drop_last = bool(drop_last)
        self.shuffle = bool(shuffle)
        self.seed = int(seed)
        n = len(dataset)
        if self.drop_last and n % self.num_replicas != 0:
            # drop the tail so that every rank gets the same, whole number of samples
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            indices = np.random.default_rng(self.seed + self.epoch).permutation(n).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad > 0 and indices:
                reps = math.ceil(pad / len(indices))
                indices += (indices * reps)[:pad]
        else:
            indices = indices[:self.total_size]
        assert len(indices) == self.total_size
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use another permutation this epoch (the same on every rank)."""
        self.epoch = int(epoch)
