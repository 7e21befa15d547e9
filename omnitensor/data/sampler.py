"""Samplers: which indices a DataLoader loads, in which order.

Data-parallel training plugs in here: a distributed sampler is a :class:`Sampler` that
yields only this rank's share of the indices and has ``set_epoch(epoch)`` to reshuffle
each epoch (``omnitensor.data.DistributedSampler``, in ``data/distributed.py``). Pass it as
``DataLoader(dataset, sampler=...)``; the DataLoader needs nothing else from it.
"""
from __future__ import annotations

from typing import Any, Iterator, Sequence, Sized

from ..core import dtypes as _dt
from ..core.ops.random import Generator, default_generator, multinomial, randint, randperm

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler", "seeded_generator"]


#: indices RandomSampler(replacement=True) draws per call to the generator
REPLACEMENT_CHUNK = 1024


class Sampler:
    """Base class: ``__iter__`` yields indices (or lists of indices for a batch sampler);
    ``__len__`` is optional."""

    def __init__(self, data_source: Any = None) -> None:
        pass

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError


def seeded_generator(generator: Generator | None) -> Generator:
    """``generator`` itself, or (as torch) a fresh one seeded from the default generator,
    so that ``omnitensor.manual_seed`` makes unseeded shuffles reproducible too."""
    if generator is not None:
        return generator
    seed = int(randint(0, 1 << 62, (1,), generator=default_generator, device="cpu").item())
    return Generator().manual_seed(seed)


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation (or ``num_samples`` draws with replacement), reproducible with
    a seeded ``generator``; each pass draws a new permutation."""

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: int | None = None, generator: Generator | None = None) -> None:
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        """How many indices one pass yields."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        g = seeded_generator(self.generator)
        if self.replacement:
            # drawn lazily, a chunk at a time (as torch does): num_samples may be 1e10
            left = self.num_samples
            while left > 0:
                k = min(left, REPLACEMENT_CHUNK)
                yield from randint(0, n, (k,), generator=g, device="cpu").tolist()
                left -= k
            return
        for _ in range(self.num_samples // n):
            yield from randperm(n, generator=g, device="cpu").tolist()
        rest = self.num_samples % n
        if rest:
            yield from randperm(n, generator=g, device="cpu").tolist()[:rest]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in random order."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices, self.generator = list(indices), generator

    def __iter__(self) -> Iterator[int]:
        g = seeded_generator(self.generator)
        for i in randperm(len(self.indices), generator=g, device="cpu").tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Generator | None = None) -> None:
        from ..core.ops.creation import tensor
        self.weights = tensor(list(weights), dtype=_dt.float64)
        self.num_samples, self.replacement, self.generator = num_samples, replacement, generator

    def __iter__(self) -> Iterator[int]:
        g = seeded_generator(self.generator)
        yield from multinomial(self.weights, self.num_samples, self.replacement,
                               generator=g).tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Group the indices of ``sampler`` into lists of ``batch_size``."""

    def __init__(self, sampler: Any, batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
