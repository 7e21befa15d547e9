"""Datasets: ``Dataset``, ``IterableDataset``, ``TensorDataset``, ``Subset``,
``ConcatDataset`` and ``random_split`` (torch's ``torch.utils.data``).

Batched fetching: a map-style dataset may define ``__getbatch__(indices) -> batch``
returning an already collated batch for a list of indices (``TensorDataset`` gathers each
tensor with one indexing op instead of ``batch_size`` item lookups and a stack). The
DataLoader uses it when no custom ``collate_fn`` is given.
"""
from __future__ import annotations

import bisect
import math
import warnings
from typing import Any, Generic, Iterable, Iterator, Sequence, TypeVar

import numpy as np

from ..core.ops.random import Generator, default_generator, randperm
from ..core.tensor import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset",
           "random_split"]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map-style dataset: ``__getitem__(index)`` and (usually) ``__len__``."""

    def __getitem__(self, index: int) -> T_co:
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__")

    def __add__(self, other: "Dataset[T_co]") -> "ConcatDataset[T_co]":
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A stream of samples: implement ``__iter__`` (no indexing, no sampler)."""

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")


class TensorDataset(Dataset[tuple]):
    """Samples are ``tuple(t[i] for t in tensors)``; every tensor has the same first
    dimension (tensors may live on any device, each on its own)."""

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        n = tensors[0].shape[0] if tensors[0].ndim else None
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset takes Tensors, got {type(t).__name__}")
            if t.ndim == 0 or t.shape[0] != n:
                raise ValueError("Size mismatch between tensors: every tensor needs the same "
                                 f"first dimension, got {[tuple(x.shape) for x in tensors]}")
        self.tensors = tensors
        self._index_cache: dict[str, Any] = {}

    def __getitem__(self, index: Any) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def _sample_nbytes(self) -> int:
        """Bytes of one sample (lets the DataLoader decide to gather a whole epoch)."""
        return sum(t.nbytes // max(t.shape[0], 1) for t in self.tensors)

    def __getbatch__(self, indices: Sequence[int]) -> list[Tensor]:
        """The collated batch for ``indices``: one gather per tensor (list, as
        default_collate returns for tuple samples)."""
        from ..core.ops.creation import tensor
        host = np.asarray(indices, dtype=np.int64)  # one conversion, not one per element
        by_device: dict[Any, Tensor] = {}
        out = []
        for t in self.tensors:
            idx = by_device.get(t.device)
            if idx is None:
                idx = by_device[t.device] = tensor(host, device=t.device)
            out.append(t.index_select(0, idx))
        return out


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``."""

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = list(indices)

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):  # a batch: the wrapped dataset may fetch it at once
            batched: Any = self.dataset
            return batched[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)

    def __getattr__(self, name: str) -> Any:
        # batched fetching passes through to the wrapped dataset, when it has it
        if name == "__getbatch__":
            inner = getattr(self.dataset, "__getbatch__", None)
            if inner is not None:
                return lambda indices: inner([self.indices[i] for i in indices])
        if name == "_sample_nbytes":
            inner = getattr(self.dataset, "_sample_nbytes", None)
            if inner is not None:
                return inner
        raise AttributeError(name)


class ConcatDataset(Dataset[T_co]):
    """Datasets one after another."""

    def __init__(self, datasets: Iterable[Dataset[T_co]]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)  # type: ignore[arg-type]
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        offset = idx - (self.cumulative_sizes[which - 1] if which else 0)
        return self.datasets[which][offset]


def random_split(dataset: Dataset[T_co], lengths: Sequence[int | float],
                 generator: Generator | None = None) -> list[Subset[T_co]]:
    """Split into non-overlapping random subsets of the given lengths (or fractions that
    sum to 1, rounded as torch does: floors, then the remainder one by one)."""
    generator = default_generator if generator is None else generator
    n = len(dataset)  # type: ignore[arg-type]
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, s in enumerate(sizes):
            if s == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              f"empty dataset.", stacklevel=2)
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = randperm(n, generator=generator, device="cpu").tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[offset:offset + int(length)]))
        offset += int(length)
    return out
