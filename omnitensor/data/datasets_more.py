"""More of torch's datasets: ``ChainDataset`` (iterable datasets one after another),
``StackDataset`` (datasets side by side: samples are tuples or dicts) and ``_DatasetKind``
(the fetcher factory torch's DataLoader internals and some libraries use).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

from .dataset import Dataset, IterableDataset

__all__ = ["ChainDataset", "StackDataset", "_DatasetKind"]


class ChainDataset(IterableDataset):
    """The samples of each iterable dataset of ``datasets`` in turn (chained lazily)."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = datasets

    def _each(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield d

    def __iter__(self) -> Iterator[Any]:
        for d in self._each():
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self._each())


class StackDataset(Dataset):
    """Datasets of one length side by side: ``StackDataset(a, b)[i] == (a[i], b[i])``,
    ``StackDataset(x=a, y=b)[i] == {"x": a[i], "y": b[i]}``."""

    datasets: tuple | dict

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = list(args) if args else list(kwargs.values())
        self._length = len(parts[0])  # type: ignore[arg-type]
        if any(len(d) != self._length for d in parts):  # type: ignore[arg-type]
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list) -> list:
        """A batch of samples; a part dataset's own ``__getitems__`` fetches its column."""
        named = isinstance(self.datasets, dict)
        parts: Any = self.datasets.items() if isinstance(self.datasets, dict) else \
            enumerate(self.datasets)
        columns = {}
        for key, d in parts:
            if callable(getattr(d, "__getitems__", None)):
                items = d.__getitems__(indices)
                if len(items) != len(indices):
                    raise ValueError(f"Nested dataset's output size mismatch. Expected "
                                     f"{len(indices)}, got {len(items)}")
            else:
                items = [d[i] for i in indices]
            columns[key] = items
        if named:
            return [{k: col[j] for k, col in columns.items()} for j in range(len(indices))]
        return [tuple(col[j] for col in columns.values()) for j in range(len(indices))]

    def __len__(self) -> int:
        return self._length


class _MapFetcher:
    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable,
                 drop_last: bool) -> None:
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last

    def fetch(self, possibly_batched_index: Any) -> Any:
        if not self.auto_collation:
            return self.collate_fn(self.dataset[possibly_batched_index])
        many = getattr(self.dataset, "__getitems__", None)
        data = many(possibly_batched_index) if many else [
            self.dataset[i] for i in possibly_batched_index]
        return self.collate_fn(data)


class _IterableFetcher(_MapFetcher):
    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable,
                 drop_last: bool) -> None:
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index: Any) -> Any:
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in possibly_batched_index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
            raise StopIteration
        return self.collate_fn(data)


class _DatasetKind:
    """torch's dataset kinds and their fetchers: ``create_fetcher(kind, ...)`` returns
    an object whose ``fetch(index or indices)`` gives one collated sample or batch."""

    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind: int, dataset: Any, auto_collation: bool, collate_fn: Callable,
                       drop_last: bool) -> Any:
        cls = _MapFetcher if kind == _DatasetKind.Map else _IterableFetcher
        return cls(dataset, auto_collation, collate_fn, drop_last)
